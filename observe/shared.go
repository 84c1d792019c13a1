package observe

import (
	"context"
	"sync"
	"time"

	"github.com/ahp-go/ahp/store"
)

// auditSeqShift and auditSeqSlots: with Options.SharedSeq, the actions of
// audit record N have serverSeq N<<auditSeqShift + 0 … 5 (a record gives
// at most six actions: ahp/recorded, and on the chat channel a turn
// ended and one started, a tool call's start, ready and confirmation);
// the other slots of the block number the actions
// this hub publishes on its own (approvals, runs, root) until the next
// record. Audit IDs up to 2^41 keep serverSeq below 2^53, exact in
// JavaScript.
const (
	auditSeqShift = 12
	auditSeqSlots = 1 << auditSeqShift
)

// AuditSeq returns the serverSeq that a hub with Options.SharedSeq gives
// to the action at index i (0 to 5) of audit record id.
func AuditSeq(id int64, i int) uint64 {
	return uint64(max(id, 0))<<auditSeqShift + uint64(i)
}

// AuditIDOf returns the audit record a serverSeq of a SharedSeq hub
// belongs to: the record whose action it is, or the last record before an
// action the hub published on its own.
func AuditIDOf(seq uint64) int64 { return int64(seq >> auditSeqShift) }

// sharedSeqLocked prepares the numbering of record id's actions and
// reports whether they should be published: a record at or below the
// highest ID seen was already published (or loaded). h.mu must be held.
func (h *Hub) sharedSeqLocked(id int64) bool {
	if id <= h.lastAudit {
		return false
	}
	base := AuditSeq(id, 0)
	if h.seq >= base {
		// More than auditSeqSlots-6 actions of this hub's own since the
		// previous record: this record's actions are numbered after them
		// (still increasing, but no longer the same on every replica).
		h.log.Warn("observer serverSeq: too many local actions between two audit records; numbering continues from them", "audit_id", id)
		return true
	}
	h.seq = base - 1
	return true
}

// catchUpWait bounds how long a reconnect waits for the store's records to
// reach this hub.
const catchUpWait = 3 * time.Second

// catchUpMaxGap is the largest number of records a reconnect waits for.
const catchUpMaxGap = 1 << 20

// catchUp waits, with SharedSeq, until this hub has published up to the
// highest lastSeenServerSeq of a reconnect: an observer moving from
// another replica may have seen records this one has not read yet.
func (h *Hub) catchUp(ctx context.Context, subs []resume) {
	if !h.o.SharedSeq {
		return
	}
	var want uint64
	for _, r := range subs {
		want = max(want, r.lastSeen)
	}
	h.mu.Lock()
	far := AuditIDOf(want) > h.lastAudit+catchUpMaxGap
	h.mu.Unlock()
	if far {
		return // not a serverSeq of this database: the answer is a snapshot
	}
	deadline := time.Now().Add(catchUpWait)
	for {
		h.mu.Lock()
		// Actions of records up to want's record are published once
		// lastAudit reaches it; local actions of another replica never
		// come here, so the record is what to wait for.
		done := h.lastAudit >= AuditIDOf(want)
		h.mu.Unlock()
		if done || time.Now().After(deadline) || ctx.Err() != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// FollowStore publishes the audit records of the hub's store, in ID order,
// from the highest ID the hub has seen (Load sets it) until ctx ends: with
// a shared store, the records of every replica. It also shows the store's
// pending approvals, whichever replica raised them, and clears them when
// they are resolved on any replica (read every store.ApprovalPollInterval;
// see sharedapprovals.go). A lost connection to the store is retried every
// second. Use it with Options.SharedSeq, and do not also pass the
// harness's own records to Recorded (its approval changes, yes).
func (h *Hub) FollowStore(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { h.followApprovals(ctx) })
	for ctx.Err() == nil {
		h.mu.Lock()
		after := h.lastAudit
		h.mu.Unlock()
		err := h.o.Store.Audit().Tail(ctx, store.AuditFilter{AfterID: after}, func(rec store.AuditRecord) error {
			h.resolveBeforeRecord(ctx, &rec)
			h.Recorded(&rec)
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		h.log.Warn("observer feed from the audit log interrupted; retrying", "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}
