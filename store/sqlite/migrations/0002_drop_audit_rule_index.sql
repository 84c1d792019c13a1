-- 0002: drop the audit index on rule_id. Every index costs every append;
-- rule and outcome filters are operators' occasional queries, answered by a
-- scan newest first. (0001 is kept as it was released.)
DROP INDEX IF EXISTS audit_rule;
