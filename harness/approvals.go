package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// Errors of Decide.
var (
	// ErrNotApprover is returned when the principal may not answer approvals.
	ErrNotApprover = errors.New("harness: principal may not answer approvals")
	// ErrSelfApproval is returned when the principal that sent the event
	// tries to answer its own approval.
	ErrSelfApproval = errors.New("harness: an agent cannot answer its own approval")
)

// RoleApprover is the role that may answer approvals (admin holds it too).
const RoleApprover = "approver"

// Bounds on the requests that wait for a human at once in one harness: an
// agent must not be able to fill the approval queue, the approvers'
// screens or the memory with escalations (each holds its event, up to the
// message size). Past them, an escalation is blocked at once.
const (
	MaxPendingApprovalsPerSession = 64
	MaxPendingApprovals           = 4096
)

// approvalWaiters tracks the requests waiting for a human.
type approvalWaiters struct {
	mu        sync.Mutex
	m         map[string]*waiter
	reserved  int            // slots taken, in all
	bySession map[string]int // slots taken, per session
}

// reserve takes a slot for one more request of session waiting for a
// human, or says which bound is reached.
func (a *approvalWaiters) reserve(session string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reserved >= MaxPendingApprovals {
		return fmt.Errorf("%d approvals are already pending in this harness", MaxPendingApprovals)
	}
	if a.bySession[session] >= MaxPendingApprovalsPerSession {
		return fmt.Errorf("%d approvals are already pending in this session", MaxPendingApprovalsPerSession)
	}
	if a.bySession == nil {
		a.bySession = map[string]int{}
	}
	a.reserved++
	a.bySession[session]++
	return nil
}

// release gives back a slot reserve took.
func (a *approvalWaiters) release(session string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reserved--
	if a.bySession[session]--; a.bySession[session] <= 0 {
		delete(a.bySession, session)
	}
}

type waiter struct {
	ch           chan store.Approval // receives the decided approval once
	agent        string              // principal that sent the event
	approverRole string              // role required to answer
}

func newApprovalWaiters() *approvalWaiters {
	return &approvalWaiters{m: make(map[string]*waiter)}
}

func (a *approvalWaiters) add(id string, w *waiter) {
	a.mu.Lock()
	a.m[id] = w
	a.mu.Unlock()
}

func (a *approvalWaiters) remove(id string) {
	a.mu.Lock()
	delete(a.m, id)
	a.mu.Unlock()
}

func (a *approvalWaiters) get(id string) *waiter {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.m[id]
}

// Pending returns how many requests are waiting for a human.
func (h *Harness) Pending() int {
	h.approvals.mu.Lock()
	defer h.approvals.mu.Unlock()
	return len(h.approvals.m)
}

// awaitApproval stores an approval for ev and waits for a human, the
// timeout, or the agent going away. It returns the decision to send and,
// when something went wrong, a note for the audit record.
//
// agentWait, when positive, is how long the agent says it waits: a shorter
// wait than the rule's ends at that time with a block, whatever the rule's
// fallback (the rule's timeout has not passed; nobody decided).
func (h *Harness) awaitApproval(ctx context.Context, se *sealed, peer transport.Info, res *policy.Result, agentWait time.Duration) (protocol.Decision, string) {
	spec := res.Approval
	timeout, fallback := spec.Timeout, spec.Fallback
	if timeout <= 0 {
		timeout = h.opts.ApprovalTimeout
	}
	if fallback == "" {
		fallback = h.opts.ApprovalFallback
	}
	if agentWait > 0 && agentWait < timeout {
		timeout, fallback = agentWait, protocol.DecisionBlock
	}
	return h.waitForHuman(ctx, se, peer, res.RuleID, res.Decision.Reason, spec.ApproverRole, timeout, fallback)
}

// waitForHuman is the approval queue shared by escalate rules and
// confirmation events. The approval holds the redacted event and reason.
func (h *Harness) waitForHuman(ctx context.Context, se *sealed, peer transport.Info, ruleID, reason, role string, timeout time.Duration, fallback protocol.DecisionKind) (protocol.Decision, string) {
	ev := se.ev
	if err := h.approvals.reserve(ev.SessionID); err != nil {
		h.log.Warn("escalation blocked: too many approvals pending", "session_id", ev.SessionID, "rule_id", ruleID, "error", err)
		return protocol.Block("approval required, but " + err.Error() + "; failing closed"), "approvals: " + err.Error()
	}
	defer h.approvals.release(ev.SessionID)
	evJSON, _ := json.Marshal(ev)
	a := &store.Approval{SessionID: ev.SessionID, AgentID: ev.AgentID, RequestedBy: principalID(peer),
		Replica: h.opts.ReplicaID, Event: evJSON, RuleID: ruleID, Reason: se.text(reason)}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	err := h.opts.Store.Approvals().Create(sctx, a)
	cancel()
	if err != nil {
		h.log.Error("approval could not be stored: failing closed", "error", err)
		return protocol.Block("approval required but could not be stored; failing closed"), "approval store: " + err.Error()
	}
	w := &waiter{ch: make(chan store.Approval, 1), agent: principalID(peer), approverRole: role}
	h.approvals.add(a.ID, w)
	h.observeApprovalTerms(a.ID, h.now().Add(timeout), string(fallback))
	h.observeApproval(*a)
	h.notifyApproval(ApprovalNotice{Approval: *a, Deadline: a.Created.Add(timeout), Fallback: fallback})
	h.met.pendingChanged(1)
	defer func() {
		h.approvals.remove(a.ID)
		h.met.pendingChanged(-1)
	}()
	h.log.Info("waiting for approval", "approval_id", a.ID, "rule_id", ruleID, "session_id", ev.SessionID, "timeout", timeout)

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var decided store.Approval
	select {
	case decided = <-w.ch:
	case <-timer.C:
		decided = h.expire(a.ID, "no decision within "+timeout.String(), true, fallback)
	case <-ctx.Done():
		decided = h.expire(a.ID, "the waiting agent went away", false, fallback)
	}
	return h.approvalDecision(decided, ruleID, fallback), ""
}

// expire marks an approval expired, unless a human decided it just now, in
// which case that decision stands. timedOut says that nobody answered in
// time; fallback is what the waiting agent gets.
func (h *Harness) expire(id, why string, timedOut bool, fallback protocol.DecisionKind) store.Approval {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := h.opts.Store.Approvals().Decide(ctx, id, store.Resolution{Status: store.ApprovalExpired, By: "ahp", Reason: why})
	if errors.Is(err, store.ErrAlreadyDecided) {
		if got, gerr := h.opts.Store.Approvals().Get(ctx, id); gerr == nil {
			return got
		}
	}
	if err != nil {
		h.log.Error("approval could not be expired", "approval_id", id, "error", err)
		return store.Approval{ID: id, Status: store.ApprovalExpired, DecisionReason: why}
	}
	h.observeApproval(a)
	h.notifyApproval(ApprovalNotice{Approval: a, TimedOut: timedOut, Fallback: fallback})
	return a
}

// approvalDecision turns a decided approval into the agent's decision.
func (h *Harness) approvalDecision(a store.Approval, ruleID string, fallback protocol.DecisionKind) protocol.Decision {
	meta := map[string]any{"rule_id": ruleID, "approval_id": a.ID, "approval_status": string(a.Status), "policy_version": h.opts.Engine.Version()}
	if a.DecidedBy != "" {
		meta["decided_by"] = a.DecidedBy
	}
	if a.DecisionReason != "" {
		meta["approval_reason"] = a.DecisionReason
	}
	var d protocol.Decision
	switch a.Status {
	case store.ApprovalApproved:
		d = protocol.Allow()
	case store.ApprovalDenied:
		d = protocol.Block(fmt.Sprintf("denied by %s: %s", a.DecidedBy, orText(a.DecisionReason, "no reason given")))
	default:
		meta["fallback"] = string(fallback)
		if fallback == protocol.DecisionAllow {
			d = protocol.Allow()
		} else {
			d = protocol.Block("approval " + string(a.Status) + ": " + orText(a.DecisionReason, "no decision") + "; fallback is block")
		}
	}
	d.Metadata, _ = json.Marshal(meta)
	return d
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Decide answers an approval for principal p. Only principals with the
// approver (or admin) role may answer, never the principal whose event
// raised it (the waiting request's, or the one stored with the approval), and
// each approval is answered once. The waiting agent, if any, gets the
// answer at once.
func (h *Harness) Decide(ctx context.Context, id string, approve bool, p *transport.Principal, reason string) (store.Approval, error) {
	w := h.approvals.get(id)
	role := RoleApprover
	if w != nil && w.approverRole != "" {
		role = w.approverRole
	} else if w == nil && h.Replicated() {
		// Raised through another replica: the rule names the role.
		if cur, err := h.opts.Store.Approvals().Get(ctx, id); err == nil {
			if r := h.ruleApproverRole(cur.RuleID); r != "" {
				role = r
			}
		}
	}
	if p == nil || !p.Has(role) {
		return store.Approval{}, fmt.Errorf("%w (role %s required)", ErrNotApprover, role)
	}
	for _, r := range p.Roles {
		if r == "agent" {
			// Credentials an agent can hold never answer approvals.
			return store.Approval{}, fmt.Errorf("%w: agent credentials cannot answer approvals", ErrNotApprover)
		}
	}
	if w != nil && w.agent != "" && w.agent == p.ID {
		return store.Approval{}, ErrSelfApproval
	}
	// The waiter is gone after a restart or a timeout; the stored record
	// still names who raised the approval.
	if cur, err := h.opts.Store.Approvals().Get(ctx, id); err != nil {
		return store.Approval{}, err
	} else if cur.RequestedBy != "" && cur.RequestedBy == p.ID {
		return store.Approval{}, ErrSelfApproval
	}
	status := store.ApprovalDenied
	if approve {
		status = store.ApprovalApproved
	}
	a, err := h.opts.Store.Approvals().Decide(ctx, id, store.Resolution{Status: status, By: p.ID, Reason: reason})
	if err != nil {
		return a, err
	}
	h.log.Info("approval decided", "approval_id", id, "status", string(status), "by", p.ID)
	h.observeApproval(a)
	h.notifyApproval(ApprovalNotice{Approval: a})
	h.rememberApproval(a)
	if w != nil {
		select {
		case w.ch <- a:
		default:
		}
	}
	return a, nil
}
