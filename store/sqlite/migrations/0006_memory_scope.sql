-- 0006: memory facts scoped to a project (workspace), with what they record
-- (kind) and whose words they hold (origin), for the memory the harness
-- fills itself (docs/cognitive.md). Facts added before are human facts.
ALTER TABLE facts ADD COLUMN workspace TEXT NOT NULL DEFAULT '';
ALTER TABLE facts ADD COLUMN kind TEXT NOT NULL DEFAULT 'fact';
ALTER TABLE facts ADD COLUMN origin TEXT NOT NULL DEFAULT 'human';
CREATE INDEX facts_workspace ON facts (workspace, id);
CREATE INDEX facts_kept ON facts (created_ns) WHERE kind != 'fact';
