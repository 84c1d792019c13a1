package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// Bounds on list answers.
const (
	maxRulesInAnswer     = 256
	maxConditionBytes    = 1024
	maxApprovalsInAnswer = 20
	maxApprovalIDBytes   = 256
	maxToolNameBytes     = 256
)

// budget answers a budget query.
func (c *queryCall) budget() answer {
	h := c.h
	st := h.sessions.State(c.q.SessionID)
	a := &protocol.BudgetAnswer{SessionID: c.q.SessionID, Limits: map[string]protocol.BudgetLimit{},
		Counters: protocol.SessionCounters{Actions: st.Actions, Tokens: st.Tokens, Errors: st.Errors,
			RecentTools: append([]string{}, st.RecentTools...), RunStatus: st.RunStatus}}
	set := h.opts.Engine.Set()
	if slices.Contains(set.Packs(), "budgets") {
		then := protocol.DecisionBlock
		if v, _ := set.Param("budget_action"); v == "defer" {
			then = protocol.DecisionDefer
		}
		for _, l := range []struct {
			name, param, rule string
			used              int64
		}{
			{"actions", "max_actions", "budgets.actions", st.Actions},
			{"tokens", "max_tokens", "budgets.tokens", st.Tokens},
			{"errors", "max_errors", "budgets.errors", st.Errors},
		} {
			limit, ok := intParam(set, l.param)
			if !ok || limit <= 0 {
				continue
			}
			rule := l.rule
			if then == protocol.DecisionDefer {
				rule += "_defer"
			}
			a.Limits[l.name] = protocol.BudgetLimit{Limit: limit, Used: l.used, Remaining: max(0, limit-l.used), RuleID: rule, Then: then}
		}
	}
	rate, burst := h.queryRate(), h.queryBurst()
	a.QueryRate = protocol.RateLimitInfo{PerSecond: rate, Burst: burst, Available: int(h.queries.tokens(c.q.SessionID, rate, burst, c.start))}
	c.summary = map[string]any{"answered": true}
	return answer{value: a}
}

// intParam reads a numeric parameter of the policy.
func intParam(set *policy.Set, name string) (int64, bool) {
	v, ok := set.Param(name)
	if !ok {
		return 0, false
	}
	switch x := v.(type) {
	case int64:
		return x, true
	case uint64:
		return int64(min(x, 1<<62)), true
	case float64:
		return int64(x), true
	}
	return 0, false
}

// approval answers an approval query: {approval_id} → its status; {} →
// the pending approvals of the query's session.
func (c *queryCall) approval(ctx context.Context) answer {
	h := c.h
	var req protocol.ApprovalQuery
	if err := decodePayload(c.q.Payload, &req); err != nil {
		return answer{reason: "approval: " + err.Error() + ` (expected {"approval_id": "..."})`}
	}
	c.summary = map[string]any{"answered": false}
	if req.ApprovalID == "" {
		list, err := h.opts.Store.Approvals().List(ctx, store.ApprovalFilter{SessionID: c.q.SessionID, Status: store.ApprovalPending, Limit: maxApprovalsInAnswer})
		if err != nil {
			return answer{reason: "approvals could not be read: " + err.Error()}
		}
		out := make([]protocol.ApprovalAnswer, 0, len(list))
		for _, a := range list {
			out = append(out, h.approvalAnswer(a))
		}
		c.summary["answered"] = true
		return answer{value: &protocol.PendingApprovals{SessionID: c.q.SessionID, Pending: out},
			reason: fmt.Sprintf("pending approvals of the session (at most %d)", maxApprovalsInAnswer)}
	}
	if len(req.ApprovalID) > maxApprovalIDBytes {
		return answer{reason: fmt.Sprintf("approval_id too long (limit %d bytes)", maxApprovalIDBytes)}
	}
	notFound := answer{reason: fmt.Sprintf("no approval %q that this principal may see", clip(req.ApprovalID, 64))}
	a, err := h.opts.Store.Approvals().Get(ctx, req.ApprovalID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound
	case err != nil:
		return answer{reason: "approval could not be read: " + err.Error()}
	}
	// The same answer for another principal's approval as for none, so
	// that ids cannot be probed.
	if !c.peer.Principal.Has(RoleObserver) && a.RequestedBy != principalID(c.peer) {
		if owner, known, err := h.sessionOwner(ctx, a.SessionID); err != nil || !known || owner != principalID(c.peer) {
			return notFound
		}
	}
	c.summary = map[string]any{"answered": true, "approval_id": a.ID, "status": string(a.Status)}
	return answer{value: h.approvalAnswer(a)}
}

func (h *Harness) approvalAnswer(a store.Approval) protocol.ApprovalAnswer {
	out := protocol.ApprovalAnswer{ApprovalID: a.ID, Status: string(a.Status), SessionID: a.SessionID, RuleID: a.RuleID, Reason: a.Reason,
		Created: a.Created.UTC(), Waiting: h.approvals.get(a.ID) != nil, DecidedBy: a.DecidedBy, DecisionReason: a.DecisionReason}
	if !a.DecidedAt.IsZero() {
		t := a.DecidedAt.UTC()
		out.DecidedAt = &t
	}
	return out
}

// rules answers a rules query: {event_type?, tool_name?}.
func (c *queryCall) rules() answer {
	var req protocol.RulesQuery
	if err := decodePayload(c.q.Payload, &req); err != nil {
		return answer{reason: "rules: " + err.Error() + ` (expected {"event_type": "pre_action", "tool_name": "bash"}, both optional)`}
	}
	if req.EventType != "" && !req.EventType.Known() {
		return answer{reason: fmt.Sprintf("rules: unknown event type %q", clip(string(req.EventType), 64))}
	}
	if len(req.ToolName) > maxToolNameBytes {
		return answer{reason: fmt.Sprintf("rules: tool_name too long (limit %d bytes)", maxToolNameBytes)}
	}
	set := c.h.opts.Engine.Set()
	all := set.Rules(policy.RuleFilter{EventType: req.EventType, ToolName: req.ToolName, AgentID: c.q.AgentID})
	a := &protocol.RulesAnswer{Rules: []protocol.RuleInfo{}, Total: len(all), Default: set.Default(), PolicyVersion: set.Version()}
	reason := ""
	if len(all) > maxRulesInAnswer {
		all = all[:maxRulesInAnswer]
		reason = fmt.Sprintf("the first %d of %d rules; narrow with event_type or tool_name", maxRulesInAnswer, a.Total)
	}
	for _, r := range all {
		a.Rules = append(a.Rules, ruleInfo(r))
	}
	c.summary = map[string]any{"answered": true, "rules": len(a.Rules)}
	return answer{value: a, reason: reason}
}

// policy answers a policy query.
func (c *queryCall) policy() answer {
	e := c.h.opts.Engine
	set := e.Set()
	c.summary = map[string]any{"answered": true}
	return answer{value: &protocol.PolicyAnswer{
		Version: set.Version(), Packs: set.Packs(), Rules: len(set.RuleIDs()), Default: set.Default(),
		LoadedAt: e.LoadedAt().UTC(), Reloads: max(0, e.Loads()-1), DescriptorHash: c.h.descriptorHash(), QueryTypes: QueryTypes,
	}}
}

// ruleInfo is the agent's view of a rule (a private rule's condition is
// already withheld by the policy package).
func ruleInfo(r policy.RuleInfo) protocol.RuleInfo {
	out := protocol.RuleInfo{ID: r.ID, Description: r.Description, Pack: r.Pack, Priority: r.Priority,
		EventTypes: r.EventTypes, Tools: r.Tools, Agents: r.Agents, DepthMin: r.DepthMin, DepthMax: r.DepthMax,
		Condition: clip(r.Condition, maxConditionBytes), Private: r.Private,
		Outcome: protocol.RuleOutcome{Decision: r.Outcome.Decision, Reason: r.Outcome.Reason, RetryAfterMs: r.Outcome.RetryAfterMs,
			EscalationTarget: r.Outcome.EscalationTarget, Modifies: r.Outcome.Modifies}}
	if ap := r.Outcome.Approval; ap != nil {
		out.Outcome.Approval = &protocol.ApprovalSpecInfo{TimeoutMs: ap.TimeoutMs, Fallback: ap.Fallback, ApproverRole: ap.ApproverRole}
	}
	return out
}
