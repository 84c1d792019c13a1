-- 0003: record which principal raised each approval, so that it can never
-- answer it (docs/security.md). Approvals from before this version have ''.
ALTER TABLE approvals ADD COLUMN requested_by TEXT NOT NULL DEFAULT '';
