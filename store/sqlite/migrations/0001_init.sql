-- 0001: audit log, approvals, memory facts (FTS5), run events and run records.
-- Times are Unix nanoseconds (UTC); JSON is stored as TEXT.

CREATE TABLE audit (
    id              INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused, so tailing by id is safe after retention
    ts_ns           INTEGER NOT NULL,
    session_id      TEXT    NOT NULL,
    agent_id        TEXT    NOT NULL,
    event_type      TEXT    NOT NULL,
    blocking        INTEGER NOT NULL,
    outcome         TEXT    NOT NULL,
    rule_id         TEXT    NOT NULL,
    policy_version  TEXT    NOT NULL,
    principal       TEXT    NOT NULL,
    transport       TEXT    NOT NULL,
    latency_ns      INTEGER NOT NULL,
    descriptor_hash TEXT    NOT NULL,
    error           TEXT    NOT NULL,
    event           TEXT,
    decision        TEXT
);
CREATE INDEX audit_ts ON audit (ts_ns);
CREATE INDEX audit_session ON audit (session_id, id);
CREATE INDEX audit_rule ON audit (rule_id, id);

CREATE TABLE approvals (
    id              TEXT    PRIMARY KEY,
    created_ns      INTEGER NOT NULL,
    session_id      TEXT    NOT NULL,
    agent_id        TEXT    NOT NULL,
    event           TEXT,
    rule_id         TEXT    NOT NULL,
    reason          TEXT    NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
    decided_by      TEXT    NOT NULL DEFAULT '',
    decided_ns      INTEGER,
    decision_reason TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX approvals_status ON approvals (status, created_ns);

CREATE TABLE facts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT    NOT NULL, -- '' = global
    content    TEXT    NOT NULL,
    source     TEXT    NOT NULL,
    confidence REAL    NOT NULL,
    created_ns INTEGER NOT NULL
);
CREATE INDEX facts_session ON facts (session_id, id);
CREATE VIRTUAL TABLE facts_fts USING fts5 (
    content,
    content = 'facts',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER facts_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER facts_ad AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts (facts_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER facts_au AFTER UPDATE ON facts BEGIN
    INSERT INTO facts_fts (facts_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO facts_fts (rowid, content) VALUES (new.id, new.content);
END;

CREATE TABLE run_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    updated_ns  INTEGER NOT NULL,
    received_ns INTEGER NOT NULL,
    payload     TEXT    NOT NULL
);
CREATE INDEX run_events_run ON run_events (run_id, id);

CREATE TABLE runs (
    run_id     TEXT    PRIMARY KEY,
    session_id TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    created_ns INTEGER NOT NULL,
    updated_ns INTEGER NOT NULL,
    record     TEXT,
    flags      TEXT    NOT NULL, -- JSON array of strings
    flagged    INTEGER NOT NULL,
    version    INTEGER NOT NULL
);
CREATE INDEX runs_session ON runs (session_id, updated_ns);
CREATE INDEX runs_status ON runs (status, updated_ns);

-- Written and emptied by the readiness probe after a failed write.
CREATE TABLE store_probe (data BLOB);
