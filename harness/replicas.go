package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// This file makes several harness replicas on one shared store (see
// store.Shared, store/postgres) act as one: a session's counters live in
// the store and are read and updated under the session's lock, and an
// agent waiting on this replica hears of approvals answered through
// another. With a store one harness owns (SQLite) nothing here runs.

// shared returns the store's replica coordination, or nil.
func (h *Harness) shared() store.Shared {
	s, _ := h.opts.Store.(store.Shared)
	return s
}

// Replicated reports whether the harness shares its store with other
// replicas.
func (h *Harness) Replicated() bool { return h.shared() != nil }

// sessionLease holds one session's counters locked across replicas. A nil
// lease (a store one harness owns) does nothing.
type sessionLease struct {
	h  *Harness
	id string
	lk store.SessionLock
}

// leaseSession locks a session's shared counters and loads them into the
// local tracker, where policies read them. It returns nil, nil when the
// store is not shared.
func (h *Harness) leaseSession(ctx context.Context, id string) (*sessionLease, error) {
	sh := h.shared()
	if sh == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	lk, err := sh.LockSession(ctx, id)
	if err != nil {
		return nil, err
	}
	var st policy.SessionState
	if b := lk.State(); len(b) > 0 {
		if err := json.Unmarshal(b, &st); err != nil {
			lk.Release()
			return nil, fmt.Errorf("session %s: stored counters do not parse: %w", id, err)
		}
	}
	h.sessions.Set(id, st)
	return &sessionLease{h: h, id: id, lk: lk}, nil
}

// save stores the local counters of the session and releases the lock.
func (l *sessionLease) save(ctx context.Context) error {
	if l == nil {
		return nil
	}
	b, err := json.Marshal(l.h.sessions.State(l.id))
	if err != nil {
		l.lk.Release()
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return l.lk.Save(ctx, b)
}

// release releases the lock without storing anything.
func (l *sessionLease) release() {
	if l != nil {
		l.lk.Release()
	}
}

// RunReplica delivers to the agents waiting on this replica the approvals
// answered through other replicas: announced by the store at once, and
// checked every store.ApprovalPollInterval in case an announcement was
// lost. It returns when ctx ends; it does nothing (and returns at once)
// when the store is not shared.
func (h *Harness) RunReplica(ctx context.Context) {
	sh := h.shared()
	if sh == nil {
		return
	}
	go func() {
		_ = sh.WatchApprovals(ctx, func(id string) { h.deliverDecided(ctx, id) })
	}()
	t := time.NewTicker(store.ApprovalPollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.approvals.mu.Lock()
		ids := make([]string, 0, len(h.approvals.m))
		for id := range h.approvals.m {
			ids = append(ids, id)
		}
		h.approvals.mu.Unlock()
		for _, id := range ids {
			h.deliverDecided(ctx, id)
		}
	}
}

// deliverDecided hands a decided approval to the agent waiting for it on
// this replica, if any.
func (h *Harness) deliverDecided(ctx context.Context, id string) {
	w := h.approvals.get(id)
	if w == nil {
		return
	}
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	a, err := h.opts.Store.Approvals().Get(gctx, id)
	if err != nil || a.Status == store.ApprovalPending {
		return
	}
	select {
	case w.ch <- a:
		h.observeApproval(a)
	default:
	}
}

// ruleApproverRole returns the approver role the rule named ruleID asks
// for, "" when none (or no such rule): used when the approval was raised
// through another replica and no local waiter knows its role.
func (h *Harness) ruleApproverRole(ruleID string) string {
	if ruleID == "" {
		return ""
	}
	for _, r := range h.opts.Engine.Set().Rules(policy.RuleFilter{}) {
		if r.ID == ruleID && r.Outcome.Approval != nil {
			return r.Outcome.Approval.ApproverRole
		}
	}
	return ""
}

// failClosedShared answers a blocking event whose session counters could
// not be read from the shared store: a block, recorded with the reason.
func (h *Harness) failClosedShared(ctx context.Context, ev *protocol.Event, peer transport.Info, start time.Time, err error) protocol.Decision {
	h.log.Error("shared session counters unavailable: failing closed", "session_id", ev.SessionID, "error", err)
	d := protocol.Block("harness could not read the session's shared counters; failing closed")
	sv := h.seal(ev, policy.SecretsUnknown)
	res := policy.Result{Decision: d}
	if rerr := h.record(ctx, &sv, peer, start, d, &res, "session state: "+err.Error()); rerr != nil {
		h.log.Error("audit append failed", "error", rerr, "session_id", sv.ev.SessionID)
	}
	return d
}

// staleApprovalAge is how old a pending approval must be before a replica
// starting on a shared store expires it: younger ones may still have an
// agent waiting on another replica.
const staleApprovalAge = 24 * time.Hour
