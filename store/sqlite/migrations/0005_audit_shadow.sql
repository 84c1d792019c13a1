-- 0005: what shadow rules and the shadow policy would have decided on each
-- event (JSON, NULL when nothing ran in shadow), and whether one of them
-- would have changed the outcome (docs/shadow.md). The partial indexes keep
-- `ahp audit query --shadow` and the shadow report off the full table.
ALTER TABLE audit ADD COLUMN shadow TEXT;
ALTER TABLE audit ADD COLUMN shadow_changed INTEGER NOT NULL DEFAULT 0;
CREATE INDEX audit_shadow ON audit (id) WHERE shadow IS NOT NULL;
CREATE INDEX audit_shadow_changed ON audit (id) WHERE shadow_changed = 1;
