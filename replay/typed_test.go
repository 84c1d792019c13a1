package replay

import (
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// Typed events compare block against not block, with the typed answer the
// harness recorded.
func TestTypedEvents(t *testing.T) {
	const policyText = `
rules:
  - id: idle-wait
    target: {event_types: [idle]}
    condition: 'payload.idle_reason == "waiting"'
    outcome: {decision: defer, retry_after_ms: 1000, reason: "hold on"}
  - id: no-hacks
    target: {event_types: [reasoning]}
    condition: 'payload.problem_statement.contains("hack")'
    outcome: {decision: block, reason: "no hacking"}
  - id: skip-tools
    target: {event_types: [rate_limit]}
    condition: 'payload.limit_type == "tool_execution_limit"'
    outcome: {decision: block, reason: "skip"}
`
	var events []sent
	add := func(ty protocol.EventType, p map[string]any) {
		events = append(events, sent{principal: "agent", transport: "unix", ev: mkEvent(len(events), ty, "ty", p)})
	}
	add(protocol.EventIdle, map[string]any{"idle_duration_ms": 5, "idle_reason": "waiting"})
	add(protocol.EventIdle, map[string]any{"idle_duration_ms": 5, "idle_reason": "done"})
	add(protocol.EventReasoning, map[string]any{"session_id": "ty", "reasoning_type": "re_act", "problem_statement": "hack the box"})
	add(protocol.EventReasoning, map[string]any{"session_id": "ty", "reasoning_type": "re_act", "problem_statement": "sort a list"})
	add(protocol.EventRateLimit, map[string]any{"session_id": "ty", "limit_type": "tool_execution_limit", "retry_after_ms": 5, "current_usage": "x"})
	add(protocol.EventRateLimit, map[string]any{"session_id": "ty", "limit_type": "llm_token_limit", "retry_after_ms": 5, "current_usage": "x"})
	// No rule decides a confirmation: the harness answers escalate (a
	// user_confirm at once, as its agent's user is the one to answer it).
	add(protocol.EventConfirmation, map[string]any{"session_id": "ty", "confirmation_type": "user_confirm", "message": "ok?"})
	path := record(t, policyText, events)
	src := openStore(t, path)

	rep := run(t, src, Options{Engine: engine(t, policyText)})
	if rep.DecisionChanges != 0 || rep.RuleChanges != 0 || rep.Typed != 7 {
		t.Fatalf("same policy: %+v", rep)
	}
	rep = run(t, src, Options{Engine: engine(t, "")})
	var got []string
	for _, c := range rep.Changes {
		got = append(got, c.EventType+": "+verdictText(&c.Old)+" → "+verdictText(&c.New))
	}
	want := []string{
		"idle: block [defer] (rule idle-wait) → allow (default)",
		"reasoning: block (rule no-hacks) → allow (default)",
		"rate_limit: block [skip] (rule skip-tools) → allow (default)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("changes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Refusals the harness made on its own (a human, a failed read, pending
// approvals) are not policy blocks.
func TestRefusalsOutsideThePolicy(t *testing.T) {
	for _, c := range []struct {
		t        protocol.EventType
		outcome  string
		decision string
		want     string
	}{
		{protocol.EventConfirmation, "reject", `{"decision":"reject","reason":"denied by bob: no"}`, "allow"},
		{protocol.EventConfirmation, "reject", `{"decision":"reject","reason":"rule says no"}`, "block"},
		{protocol.EventIdle, "defer", `{"decision":"defer","reason":"2 approval(s) pending"}`, "allow"},
		{protocol.EventIdle, "defer", `{"decision":"defer","reason":"deferred by policy"}`, "block"},
		{protocol.EventContextPerception, "block", `{"decision":"block","reason":"context could not be gathered: io"}`, "allow"},
		{protocol.EventMemoryRecall, "block", `{"decision":"block","reason":"memory could not be searched: io"}`, "allow"},
		{protocol.EventMemoryRecall, "allow", `{"decision":"allow"}`, "allow"},
		{protocol.EventRateLimit, "retry", `{"decision":"retry","retry_after_ms":5}`, "allow"},
	} {
		rec := &store.AuditRecord{Outcome: c.outcome, Decision: []byte(c.decision)}
		v, human := oldVerdict(rec, c.t)
		if v.Decision != c.want || v.Answer != c.outcome || human {
			t.Errorf("%s %s: %+v, want decision %s", c.t, c.decision, v, c.want)
		}
	}
	// A generic block whose approval could not be stored was an escalation.
	v, _ := oldVerdict(&store.AuditRecord{Outcome: "block", Error: "approval store: disk full",
		Decision: []byte(`{"decision":"block","reason":"approval required but could not be stored; failing closed"}`)}, protocol.EventPreAction)
	if v.Decision != "escalate" {
		t.Fatalf("%+v", v)
	}
}
