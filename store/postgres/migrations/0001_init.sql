-- 0001: the whole schema of store/postgres, equivalent to SQLite's 0001-0006.
-- Times are Unix nanoseconds (UTC); JSON is kept verbatim as text.

CREATE TABLE audit (
    id              bigint  PRIMARY KEY, -- from audit_seq, in commit order, never reused
    ts_ns           bigint  NOT NULL,
    session_id      text    NOT NULL,
    agent_id        text    NOT NULL,
    event_type      text    NOT NULL,
    blocking        boolean NOT NULL,
    outcome         text    NOT NULL,
    rule_id         text    NOT NULL,
    policy_version  text    NOT NULL,
    principal       text    NOT NULL,
    transport       text    NOT NULL,
    latency_ns      bigint  NOT NULL,
    descriptor_hash text    NOT NULL,
    error           text    NOT NULL,
    event           text,
    decision        text,
    redacted        text    NOT NULL DEFAULT '',
    shadow          text,
    shadow_changed  boolean NOT NULL DEFAULT false
);
CREATE INDEX audit_ts ON audit (ts_ns);
CREATE INDEX audit_session ON audit (session_id, id);
CREATE INDEX audit_shadow ON audit (id) WHERE shadow IS NOT NULL;
CREATE INDEX audit_shadow_changed ON audit (id) WHERE shadow_changed;

-- The last audit ID given. Every group commit updates this one row, so
-- commits of all replicas are serialised on its lock and IDs become
-- visible in increasing order (tailing by ID never skips a record).
CREATE TABLE audit_seq (one boolean PRIMARY KEY DEFAULT true CHECK (one), last bigint NOT NULL);
INSERT INTO audit_seq (last) VALUES (0);

CREATE TABLE approvals (
    id              text    PRIMARY KEY,
    created_ns      bigint  NOT NULL,
    session_id      text    NOT NULL,
    agent_id        text    NOT NULL,
    requested_by    text    NOT NULL DEFAULT '',
    event           text,
    rule_id         text    NOT NULL,
    reason          text    NOT NULL,
    status          text    NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
    decided_by      text    NOT NULL DEFAULT '',
    decided_ns      bigint,
    decision_reason text    NOT NULL DEFAULT ''
);
CREATE INDEX approvals_status ON approvals (status, created_ns);

-- Facts are searched with PostgreSQL's full-text search: English stems
-- plus the words as written (so stop words and unstemmed forms match too).
CREATE TABLE facts (
    id         bigserial PRIMARY KEY,
    session_id text     NOT NULL, -- '' = global
    workspace  text     NOT NULL DEFAULT '',
    content    text     NOT NULL,
    source     text     NOT NULL,
    confidence real     NOT NULL,
    kind       text     NOT NULL DEFAULT 'fact',
    origin     text     NOT NULL DEFAULT 'human',
    created_ns bigint   NOT NULL,
    tsv        tsvector GENERATED ALWAYS AS (to_tsvector('english', content) || to_tsvector('simple', content)) STORED
);
CREATE INDEX facts_session ON facts (session_id, id);
CREATE INDEX facts_workspace ON facts (workspace, id);
CREATE INDEX facts_kept ON facts (created_ns) WHERE kind <> 'fact';
CREATE INDEX facts_tsv ON facts USING gin (tsv);

CREATE TABLE run_events (
    id          bigserial PRIMARY KEY,
    run_id      text   NOT NULL,
    session_id  text   NOT NULL,
    kind        text   NOT NULL,
    updated_ns  bigint NOT NULL,
    received_ns bigint NOT NULL,
    payload     text   NOT NULL
);
CREATE INDEX run_events_run ON run_events (run_id, id);

CREATE TABLE runs (
    run_id     text    PRIMARY KEY,
    session_id text    NOT NULL,
    status     text    NOT NULL,
    created_ns bigint  NOT NULL,
    updated_ns bigint  NOT NULL,
    record     text,
    flags      text    NOT NULL, -- JSON array of strings
    flagged    boolean NOT NULL,
    version    bigint  NOT NULL
);
CREATE INDEX runs_session ON runs (session_id, updated_ns);
CREATE INDEX runs_status ON runs (status, updated_ns);

-- Per-session counters the policies read, shared by every replica; a
-- decision holds the session's row lock while it reads and updates them.
CREATE TABLE session_state (
    session_id text   PRIMARY KEY,
    state      text,
    updated_ns bigint NOT NULL
);

-- The replicas using this database, their policy hash and last heartbeat.
CREATE TABLE replicas (
    id             text   PRIMARY KEY,
    address        text   NOT NULL,
    policy_version text   NOT NULL,
    version        text   NOT NULL,
    started_ns     bigint NOT NULL,
    seen_ns        bigint NOT NULL
);
