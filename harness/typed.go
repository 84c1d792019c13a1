package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// errNotRecorded is returned when a typed decision could not be recorded:
// the server answers -32603 and the agent gets no decision (fail closed).
var errNotRecorded = errors.New("harness could not record the decision (audit log unavailable)")

// typedCall is one typed event in progress: the policy's verdict on it and
// what is needed to record the answer.
type typedCall struct {
	h      *Harness
	ev     *protocol.Event
	peer   transport.Info
	start  time.Time
	res    policy.Result
	sealed sealed // the event as it may be stored
}

// gate evaluates the policy for a typed event. Rules may target typed
// event types like any other; a block (or a failed evaluation) refuses the
// event in the typed decision's own terms.
func (h *Harness) gate(ctx context.Context, ev *protocol.Event) *typedCall {
	peer := peerOf(ctx)
	c := &typedCall{h: h, ev: ev, peer: peer, start: h.now(), res: h.evaluate(ev, peer)}
	c.sealed = h.seal(ev, c.res.PayloadSecrets)
	return c
}

// blocked reports whether the policy refused the event, and why.
func (c *typedCall) blocked() (bool, string) {
	if c.res.Decision.Kind == protocol.DecisionBlock {
		return true, c.res.Decision.Reason
	}
	return false, ""
}

// done records the typed decision d durably.
func (c *typedCall) done(ctx context.Context, d any, outcome string) error {
	errText := ""
	if c.res.Err != nil {
		errText = c.res.Err.Error()
	}
	if err := c.h.record(ctx, &c.sealed, c.peer, c.start, d, &c.res, errText); err != nil {
		c.h.log.Error("audit append failed: failing closed", "error", err, "event_type", string(c.ev.EventType))
		return errNotRecorded
	}
	c.h.met.decided(c.ev.EventType, outcome, c.res.RuleID, c.h.now().Sub(c.start))
	return nil
}

// modifiedObject decodes the modified payload of a modify decision.
func (c *typedCall) modifiedObject(v any) bool {
	d := c.res.Decision
	if d.Kind != protocol.DecisionModify || len(d.ModifiedPayload) == 0 {
		return false
	}
	return json.Unmarshal(d.ModifiedPayload, v) == nil
}

// HandleIntentDetection classifies the prompt unless a policy blocks it:
// with the LLM when one is configured and answers in time, else with the
// phrase tables. The recorded decision names the classifier that decided;
// the prompt is kept as a memory of the session.
func (h *Harness) HandleIntentDetection(ctx context.Context, ev *protocol.Event, p *protocol.IntentDetectionPayload) (protocol.IntentDetectionDecision, error) {
	c := h.gate(ctx, ev)
	h.memory.learnWorkspace(ev.SessionID, p.Workspace)
	var d protocol.IntentDetectionDecision
	if ok, reason := c.blocked(); ok {
		d = protocol.IntentDetectionDecision{Decision: "block", Reason: reason}
		return d, c.done(ctx, d, d.Decision)
	}
	r, llmErr := h.llm.DetectContext(ctx, p.Prompt, p.LanguageHint)
	if llmErr != nil {
		h.log.Debug("intent: LLM did not decide; phrase tables used", "error", c.sealed.text(llmErr.Error()))
	}
	d = protocol.IntentDetectionDecision{Decision: "allow", DetectedIntent: r.Intent, Confidence: r.Confidence}
	if r.Target.Name != "" {
		d.TargetHints = &protocol.TargetHints{TargetType: r.Target.Type, TargetName: r.Target.Name}
	}
	h.memory.keep(ev.SessionID, store.KindPrompt, store.OriginAgent, "agent "+ev.AgentID, "asked: "+p.Prompt)
	return d, c.done(ctx, withClassifier(d, r.Classifier), d.Decision)
}

// withClassifier is the decision as recorded: the decision sent, with a
// "classifier" member saying which classifier decided.
func withClassifier(d protocol.IntentDetectionDecision, classifier string) any {
	if classifier == "" {
		return d
	}
	return withMember(d, "classifier", classifier)
}

// withMember is a decision as recorded with one more member (which
// classifier decided, which guidance applied), for audit and replay; the
// agent gets the decision without it.
func withMember(d any, key string, v any) any {
	b, err := json.Marshal(d)
	if err != nil || len(b) < 2 || b[len(b)-1] != '}' {
		return d
	}
	k, _ := json.Marshal(key)
	val, err := json.Marshal(v)
	if err != nil {
		return d
	}
	out := append(b[:len(b)-1:len(b)-1], ',')
	out = append(append(append(out, k...), ':'), val...)
	return json.RawMessage(append(out, '}'))
}

// HandleContextPerception injects facts, file snippets and a project
// summary from the configured workspace, unless a policy blocks it.
func (h *Harness) HandleContextPerception(ctx context.Context, ev *protocol.Event, p *protocol.ContextPerceptionPayload) (protocol.ContextPerceptionDecision, error) {
	c := h.gate(ctx, ev)
	h.memory.learnWorkspace(ev.SessionID, p.Context.Workspace)
	var d protocol.ContextPerceptionDecision
	if ok, reason := c.blocked(); ok {
		d = protocol.ContextPerceptionDecision{Decision: "block", Reason: reason}
	} else if h.opts.Perceiver != nil {
		var err error
		d, err = h.opts.Perceiver.Perceive(ctx, p)
		if err != nil {
			d = protocol.ContextPerceptionDecision{Decision: "block", Reason: "context could not be gathered: " + err.Error()}
		}
	} else {
		d = protocol.ContextPerceptionDecision{Decision: "allow"}
	}
	return d, c.done(ctx, d, d.Decision)
}

// HandleMemoryRecall returns the facts that match the query, ranked by
// relevance and recency: the session's own, its project's (the
// working_directory, else the workspace the session last named) and the
// global ones, of the kinds memory_type asks for; never another project's.
// Across sessions only human and policy memories are recalled unless
// MemoryOptions.CrossSessionAgentFacts. Each fact's source names its
// origin, kind and session.
func (h *Harness) HandleMemoryRecall(ctx context.Context, ev *protocol.Event, p *protocol.MemoryRecallPayload) (protocol.MemoryRecallDecision, error) {
	c := h.gate(ctx, ev)
	h.memory.learnWorkspace(ev.SessionID, p.WorkingDirectory)
	var d protocol.MemoryRecallDecision
	if ok, reason := c.blocked(); ok {
		d = protocol.MemoryRecallDecision{Decision: "block", Reason: reason}
		return d, c.done(ctx, d, d.Decision)
	}
	limit := h.opts.MemoryMaxResults
	if p.MaxResults > 0 && int(min(p.MaxResults, 1<<20)) < limit {
		limit = int(p.MaxResults)
	}
	query := p.Query
	if len(query) > store.MaxFactQueryBytes {
		query = query[:store.MaxFactQueryBytes]
	}
	q := store.FactQuery{Text: query, SessionID: ev.SessionID, Workspace: h.memory.workspace(ev.SessionID),
		Kinds: memoryKinds(p.MemoryType), Now: h.now(), Limit: limit}
	if !h.opts.Memory.CrossSessionAgentFacts {
		q.CrossSessionOrigins = []string{store.OriginHuman, store.OriginPolicy}
	}
	facts, err := h.opts.Store.Memory().Search(ctx, q)
	if err != nil {
		d = protocol.MemoryRecallDecision{Decision: "block", Reason: "memory could not be searched: " + err.Error()}
		return d, c.done(ctx, d, d.Decision)
	}
	d = protocol.MemoryRecallDecision{Decision: "allow", InjectedFacts: make([]protocol.Fact, 0, len(facts))}
	for _, f := range facts {
		d.InjectedFacts = append(d.InjectedFacts, recallFact(f, ev.SessionID))
	}
	return d, c.done(ctx, d, d.Decision)
}

// planningChoice is what a modify rule may compute for planning events.
type planningChoice struct {
	Strategy string   `json:"strategy"`
	Task     string   `json:"task"`
	Hints    []string `json:"hints"`
}

// HandlePlanning selects a strategy: the one a policy's modify outcome
// names ({"strategy": ...} or {"task": ..., "hints": [...]}), else the one
// the operator's guidance names, else the first one offered; the matching
// guidance's subtasks and hints go into planning_template. A policy block
// refuses the plan.
func (h *Harness) HandlePlanning(ctx context.Context, ev *protocol.Event, p *protocol.PlanningPayload) (protocol.PlanningDecision, error) {
	c := h.gate(ctx, ev)
	var d protocol.PlanningDecision
	var pc planningChoice
	var guided []string
	switch {
	case c.res.Decision.Kind == protocol.DecisionBlock:
		d = protocol.PlanningDecision{Decision: "block", Reason: c.res.Decision.Reason}
	case c.modifiedObject(&pc) && pc.Task != "":
		d = protocol.PlanningDecision{Decision: "modify", ModifiedTask: pc.Task, Hints: pc.Hints}
	default:
		s := protocol.StrategyStepByStep
		if len(p.AvailableStrategies) > 0 {
			s = p.AvailableStrategies[0]
		}
		d = protocol.PlanningDecision{Decision: "allow", SelectedStrategy: s, Metadata: c.res.Decision.Metadata}
		guided = guidedPlan(&d, p, h.guidanceFor(ev))
		if pc.Strategy != "" {
			for _, offered := range p.AvailableStrategies {
				if offered.String() == pc.Strategy {
					d.SelectedStrategy = offered
				}
			}
		}
	}
	if len(guided) > 0 {
		return d, c.done(ctx, withMember(d, "guidance", guided), d.Decision)
	}
	return d, c.done(ctx, d, d.Decision)
}

// HandleReasoning allows, with the hints a policy's modify outcome gives
// ({"hints": [...]}) and those of the operator's matching guidance; a
// policy block refuses.
func (h *Harness) HandleReasoning(ctx context.Context, ev *protocol.Event, p *protocol.ReasoningPayload) (protocol.ReasoningDecision, error) {
	c := h.gate(ctx, ev)
	var d protocol.ReasoningDecision
	var pc planningChoice
	if ok, reason := c.blocked(); ok {
		d = protocol.ReasoningDecision{Decision: "block", Reason: reason}
	} else {
		c.modifiedObject(&pc)
		hints := pc.Hints
		var guided []string
		for _, g := range h.guidanceFor(ev) {
			hints = appendHints(hints, g.Hints)
			guided = append(guided, g.ID)
		}
		d = protocol.ReasoningDecision{Decision: "allow", Hints: hints, Metadata: c.res.Decision.Metadata}
		if len(guided) > 0 {
			return d, c.done(ctx, withMember(d, "guidance", guided), d.Decision)
		}
	}
	return d, c.done(ctx, d, d.Decision)
}

// HandleRateLimit answers by policy: block → skip, defer → retry after the
// longer of the policy's and the agent's delay, modify with
// {"action":"queue"} → queue; otherwise retry after the agent's delay.
func (h *Harness) HandleRateLimit(ctx context.Context, ev *protocol.Event, p *protocol.RateLimitPayload) (protocol.RateLimitDecision, error) {
	c := h.gate(ctx, ev)
	var d protocol.RateLimitDecision
	var act struct {
		Action string `json:"action"`
	}
	switch {
	case c.res.Decision.Kind == protocol.DecisionBlock:
		d = protocol.RateLimitDecision{Decision: "skip", Reason: c.res.Decision.Reason}
	case c.res.Decision.Kind == protocol.DecisionDefer:
		d = protocol.RateLimitDecision{Decision: "retry", RetryAfterMs: max(c.res.Decision.RetryAfterMs, p.RetryAfterMs)}
	case c.modifiedObject(&act) && act.Action == "queue":
		d = protocol.RateLimitDecision{Decision: "queue"}
	default:
		d = protocol.RateLimitDecision{Decision: "retry", RetryAfterMs: p.RetryAfterMs}
	}
	return d, c.done(ctx, d, d.Decision)
}

// HandleIdle allows, or defers while approvals are pending (so the agent
// does not wander off while a human decides) or when a policy defers.
func (h *Harness) HandleIdle(ctx context.Context, ev *protocol.Event, _ *protocol.IdlePayload) (protocol.IdleDecision, error) {
	c := h.gate(ctx, ev)
	d := protocol.IdleDecision{Decision: "allow"}
	switch k := c.res.Decision.Kind; {
	case k == protocol.DecisionDefer || k == protocol.DecisionBlock:
		d = protocol.IdleDecision{Decision: "defer", Reason: orText(c.res.Decision.Reason, "deferred by policy")}
	case h.opts.DeferIdleWhilePending && h.Pending() > 0:
		d = protocol.IdleDecision{Decision: "defer", Reason: fmt.Sprintf("%d approval(s) pending", h.Pending())}
	}
	return d, c.done(ctx, d, d.Decision)
}

// HandleConfirmation answers a confirmation. A policy rule may approve
// (allow) or reject (block) it directly, or hold it for a human (escalate,
// await_approval). With no rule, a user_confirm is the agent's own user's
// to answer: the agent is told at once to escalate to that user, the answer
// it would get anyway when no approver answers in time. Every other type
// (safety_confirm, which ahp hook and ahp mcp-proxy send for an escalated
// action, cost_confirm, custom types) goes through the approval queue: a
// human approves or rejects; without an answer in time the agent is told to
// escalate to its own user. No path approves without a rule or a human.
func (h *Harness) HandleConfirmation(ctx context.Context, ev *protocol.Event, p *protocol.ConfirmationPayload) (protocol.ConfirmationDecision, error) {
	c := h.gate(ctx, ev)
	var d protocol.ConfirmationDecision
	switch {
	case c.res.Decision.Kind == protocol.DecisionBlock:
		d = protocol.ConfirmationDecision{Decision: "reject", Reason: c.res.Decision.Reason}
	case c.res.Matched && c.res.Decision.Allowed():
		d = protocol.ConfirmationDecision{Decision: "approve"}
	case !c.res.Matched && c.res.Decision.Allowed() && p.ConfirmationType.Name == "user_confirm":
		d = protocol.ConfirmationDecision{Decision: "escalate"}
	default:
		timeout := h.opts.ApprovalTimeout
		role := ""
		if c.res.Approval != nil {
			if c.res.Approval.Timeout > 0 {
				timeout = c.res.Approval.Timeout
			}
			role = c.res.Approval.ApproverRole
		}
		reason := "confirmation (" + p.ConfirmationType.String() + "): " + p.Message
		gd, _ := h.waitForHuman(ctx, &c.sealed, c.peer, orText(c.res.RuleID, "confirmation"), reason, role, timeout, protocol.DecisionBlock)
		var meta struct {
			Status string `json:"approval_status"`
		}
		_ = json.Unmarshal(gd.Metadata, &meta)
		switch meta.Status {
		case string(store.ApprovalApproved):
			d = protocol.ConfirmationDecision{Decision: "approve"}
		case string(store.ApprovalDenied):
			d = protocol.ConfirmationDecision{Decision: "reject", Reason: gd.Reason}
		default:
			d = protocol.ConfirmationDecision{Decision: "escalate"}
		}
	}
	return d, c.done(ctx, d, d.Decision)
}
