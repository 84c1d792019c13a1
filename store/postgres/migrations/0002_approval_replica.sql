-- 0002: the replica whose agent waits for each approval, so that a live
-- replica can expire the approvals of one that stopped without a clean
-- shutdown (store.Shared.ExpireOrphaned). Approvals from before have ''.
ALTER TABLE approvals ADD COLUMN replica text NOT NULL DEFAULT '';
CREATE INDEX approvals_pending_replica ON approvals (replica) WHERE status = 'pending';
