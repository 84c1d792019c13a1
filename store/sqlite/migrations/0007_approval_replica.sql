-- 0007: the harness process whose agent waits for each approval (its ID in
-- a shared store's replica registry; '' for SQLite, which one process owns).
ALTER TABLE approvals ADD COLUMN replica TEXT NOT NULL DEFAULT '';
