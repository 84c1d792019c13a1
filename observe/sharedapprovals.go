package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/ahp-go/ahp/store"
)

// With replicas on a shared store (Options.SharedSeq, FollowStore), every
// hub shows every pending approval of the store, whichever replica raised
// it, and clears it when it is answered, expires or is cancelled on any
// replica. A replica's own harness still tells its hub at once
// (ApprovalChanged) of the approvals it raises and of those it decides,
// expires or hands to a waiting agent; what it cannot tell (approvals of
// other replicas) the hub learns by listing the store's pending approvals
// every store.ApprovalPollInterval: an approval listed for the first time
// is announced, one the hub shows that is no longer listed is read back
// and cleared with its final status. Raising an approval leaves no audit
// record and no announcement in the store (the escalate record is written
// after the decision), so the list is the only way to learn of it.

// pendingListLimit bounds the pending approvals one poll reads (and so
// the ones other replicas raised that a hub shows at once).
const pendingListLimit = 1000

// resolvedKeep is how long a hub remembers that an approval was resolved,
// so that a pending list read before the resolution (a poll racing with
// it) does not show the approval again. It is far longer than a poll.
const resolvedKeep = time.Minute

// maxResolved bounds the memory of resolved approvals between polls.
const maxResolved = 1 << 14

// sharedApprovalLocked reports whether ApprovalChanged(a) changes what a
// SharedSeq hub shows, so that the same approval heard twice (from the
// harness and from the store) is published once: a pending approval is
// announced once and never again after it was resolved, a resolved one
// is cleared only if it is shown. h.mu must be held.
func (h *Hub) sharedApprovalLocked(a *store.Approval) bool {
	_, shown := h.approvals[a.ID]
	if a.Status == store.ApprovalPending {
		_, resolved := h.resolved[a.ID]
		return !shown && !resolved
	}
	if h.resolved == nil {
		h.resolved = map[string]time.Time{}
	}
	if len(h.resolved) >= maxResolved {
		h.pruneResolvedLocked(h.o.Now())
	}
	if len(h.resolved) < maxResolved {
		h.resolved[a.ID] = h.o.Now()
	}
	return shown
}

// pruneResolvedLocked forgets resolutions older than resolvedKeep.
func (h *Hub) pruneResolvedLocked(now time.Time) {
	for id, at := range h.resolved {
		if now.Sub(at) > resolvedKeep {
			delete(h.resolved, id)
		}
	}
}

// followApprovals keeps the hub's pending approvals equal to the store's
// until ctx ends (see the comment at the top of this file).
func (h *Hub) followApprovals(ctx context.Context) {
	t := time.NewTicker(store.ApprovalPollInterval)
	defer t.Stop()
	failing := false
	for {
		err := h.syncApprovals(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil && !failing {
			h.log.Warn("observer: pending approvals of the shared store could not be read; retrying", "error", err)
		} else if err == nil && failing {
			h.log.Info("observer: pending approvals of the shared store are read again")
		}
		failing = err != nil
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// syncApprovals reads the store's pending approvals once: it announces
// those the hub does not show yet, and reads back and clears those it
// shows that are no longer pending.
func (h *Hub) syncApprovals(ctx context.Context) error {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	list, err := h.o.Store.Approvals().List(lctx, store.ApprovalFilter{Status: store.ApprovalPending, Limit: pendingListLimit})
	cancel()
	if err != nil {
		return err
	}
	listed := make(map[string]bool, len(list))
	for i := range list {
		listed[list[i].ID] = true
		h.ApprovalChanged(list[i])
	}
	// A full list may have left out approvals created after its last one.
	var last time.Time
	full := len(list) >= pendingListLimit
	if full {
		last = list[len(list)-1].Created
	}
	h.mu.Lock()
	h.pruneResolvedLocked(h.o.Now())
	var gone []string
	for id, a := range h.approvals {
		if !listed[id] && (!full || !a.Created.After(last)) {
			gone = append(gone, id)
		}
	}
	h.mu.Unlock()
	for _, id := range gone {
		h.resolveFromStore(ctx, id)
	}
	return nil
}

// resolveFromStore reads approval id and, when it is no longer pending,
// clears it. An approval that has left the store is cleared as expired.
func (h *Hub) resolveFromStore(ctx context.Context, id string) {
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	a, err := h.o.Store.Approvals().Get(gctx, id)
	cancel()
	switch {
	case errors.Is(err, store.ErrNotFound):
		h.mu.Lock()
		aj, shown := h.approvals[id]
		h.mu.Unlock()
		if !shown {
			return
		}
		a = store.Approval{ID: id, Created: aj.Created, SessionID: aj.SessionID, AgentID: aj.AgentID, RuleID: aj.RuleID,
			Reason: aj.Reason, Event: aj.Event, Status: store.ApprovalExpired, DecisionReason: "no longer in the store"}
	case err != nil:
		return // the next poll tries again
	case a.Status == store.ApprovalPending:
		return
	}
	h.ApprovalChanged(a)
}

// resolveBeforeRecord clears, before a record that carries the decision
// of an approval is published, that approval if the hub still shows it
// as pending: its resolution (on another replica) was committed before
// the record, and observers must see the prompt answered before the
// decision. The store is read only when a shown approval is named.
func (h *Hub) resolveBeforeRecord(ctx context.Context, rec *store.AuditRecord) {
	h.mu.Lock()
	none := len(h.approvals) == 0
	h.mu.Unlock()
	if none || !bytes.Contains(rec.Decision, []byte(`"approval_id"`)) {
		return
	}
	var d struct {
		Metadata struct {
			ApprovalID string `json:"approval_id"`
		} `json:"metadata"`
	}
	if json.Unmarshal(rec.Decision, &d) != nil || d.Metadata.ApprovalID == "" {
		return
	}
	h.mu.Lock()
	_, shown := h.approvals[d.Metadata.ApprovalID]
	h.mu.Unlock()
	if shown {
		h.resolveFromStore(ctx, d.Metadata.ApprovalID)
	}
}
