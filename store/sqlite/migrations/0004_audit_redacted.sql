-- 0004: the detector kinds whose secrets were redacted out of each audit
-- record (comma-separated, '' when none), so that replay knows a marker
-- stood for a secret (docs/security.md, docs/replay.md).
ALTER TABLE audit ADD COLUMN redacted TEXT NOT NULL DEFAULT '';
