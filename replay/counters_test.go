package replay

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

const budgetRule = `
  - id: action-budget
    priority: 10
    target: {event_types: [pre_action]}
    condition: session.actions >= 5
    outcome: {decision: block, reason: "action budget used up"}
`

// roundRobin sends n pre_action events to each session in turn; tool
// picks the tool of the i-th event of a session. gen = 100*session + i.
func roundRobin(sessions, n int, tool func(i int) string) []sent {
	var out []sent
	for i := range n {
		for s := range sessions {
			p := map[string]any{"tool_name": tool(i), "arguments": map[string]any{"command": fmt.Sprintf("echo %d", i)}}
			out = append(out, sent{principal: "agent", transport: "unix",
				ev: mkEvent(100*s+i, protocol.EventPreAction, fmt.Sprintf("c%d", s), p)})
		}
	}
	return out
}

// changedPositions returns, per session, the positions (i) of the changed
// events, as "session:i from→to".
func changedPositions(t *testing.T, src Source, rep *Report) []string {
	t.Helper()
	recs := allRecords(t, src)
	gen := map[int64]int{}
	for i := range recs {
		gen[recs[i].ID] = genOf(t, &recs[i])
	}
	var out []string
	for _, c := range rep.Changes {
		g := gen[c.ID]
		out = append(out, fmt.Sprintf("%d:%d %s→%s", g/100, g%100, c.Old.Decision, c.New.Decision))
	}
	slices.Sort(out)
	return out
}

func positions(sessions int, spec map[int]string) []string {
	var out []string
	for s := range sessions {
		for i, f := range spec {
			out = append(out, fmt.Sprintf("%d:%d %s", s, i, f))
		}
	}
	slices.Sort(out)
	return out
}

// A budget on session.actions flips exactly from the 6th action of each
// session on: the counters are rebuilt from the recorded stream.
func TestBudgetFlipsFromTheSixthAction(t *testing.T) {
	path := record(t, "", roundRobin(3, 10, func(int) string { return "bash" }))
	src := openStore(t, path)
	rep := run(t, src, Options{Engine: engine(t, "rules:"+budgetRule)})
	got := changedPositions(t, src, rep)
	want := positions(3, map[int]string{5: "allow→block", 6: "allow→block", 7: "allow→block", 8: "allow→block", 9: "allow→block"})
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("changed:\n%v\nwant\n%v", got, want)
	}
	for _, c := range rep.Changes {
		if c.New.RuleID != "action-budget" || c.Old.RuleID != "" {
			t.Fatalf("change %+v", c)
		}
	}
}

// The counter modes differ when the old policy blocked actions the new one
// allows: "new" counts them, "recorded" does not.
func TestCounterModes(t *testing.T) {
	const denyRule = `
  - id: deny-tool
    priority: 10
    target: {event_types: [pre_action], tools: ["deny"]}
    outcome: {decision: block, reason: "denied tool"}
`
	tool := func(i int) string {
		if i == 1 || i == 3 {
			return "deny"
		}
		return "bash"
	}
	path := record(t, "rules:"+denyRule, roundRobin(3, 10, tool))
	src := openStore(t, path)
	eng := engine(t, "rules:"+budgetRule)

	// New decisions: positions 0-4 are allowed (1 and 3 now too), so the
	// budget of 5 is used up from position 5.
	got := changedPositions(t, src, run(t, src, Options{Engine: eng}))
	want := positions(3, map[int]string{1: "block→allow", 3: "block→allow",
		5: "allow→block", 6: "allow→block", 7: "allow→block", 8: "allow→block", 9: "allow→block"})
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("counters=new:\n%v\nwant\n%v", got, want)
	}
	// Recorded decisions: 1 and 3 were blocked, so they did not count and
	// the budget is used up only at position 7.
	got = changedPositions(t, src, run(t, src, Options{Engine: eng, Counters: CountersRecorded}))
	want = positions(3, map[int]string{1: "block→allow", 3: "block→allow",
		7: "allow→block", 8: "allow→block", 9: "allow→block"})
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("counters=recorded:\n%v\nwant\n%v", got, want)
	}
}

// Notifications feed the counters too: heartbeat tokens reach a budget.
func TestTokensFromHeartbeats(t *testing.T) {
	var events []sent
	gen := 0
	add := func(ty protocol.EventType, p any) {
		events = append(events, sent{principal: "agent", transport: "unix", ev: mkEvent(gen, ty, "t1", p)})
		gen++
	}
	hb := func(tokens int) {
		add(protocol.EventHeartbeat, map[string]any{"uptime_ms": 1, "total_events_processed": 1, "current_state": "x", "tokens_used": tokens})
	}
	prompt := func() { add(protocol.EventPrePrompt, map[string]any{"prompt": "go on"}) }
	hb(100)
	prompt() // gen 1
	hb(200)
	prompt() // gen 3
	hb(300)
	prompt() // gen 5
	prompt() // gen 6
	path := record(t, "", events)
	src := openStore(t, path)
	rep := run(t, src, Options{Engine: engine(t, `
rules:
  - id: token-budget
    target: {event_types: [pre_prompt]}
    condition: session.tokens >= 300
    outcome: {decision: block, reason: "tokens used up"}
`)})
	recs := allRecords(t, src)
	var gens []int
	for _, c := range rep.Changes {
		i := slices.IndexFunc(recs, func(r store.AuditRecord) bool { return r.ID == c.ID })
		gens = append(gens, genOf(t, &recs[i]))
	}
	if fmt.Sprint(gens) != "[5 6]" || rep.Notifications != 3 {
		t.Fatalf("changed gens %v (notifications %d), want [5 6]", gens, rep.Notifications)
	}
}

// An escalation that waited for a human is compared as an escalation, and
// its recorded answer counts: replaying the recording policy, with a
// budget, changes nothing.
func TestApprovalEscalations(t *testing.T) {
	const policyText = `
rules:
  - id: approve-deploy
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("deploy")'
    outcome:
      decision: escalate
      reason: "deploys need an approval"
      await_approval: {timeout: 10ms, fallback: allow}
  - id: approve-drop
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("drop")'
    outcome:
      decision: escalate
      reason: "drops need an approval"
      await_approval: {timeout: 10ms, fallback: block}
  - id: approve-migrate
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("migrate")'
    outcome:
      decision: escalate
      reason: "migrations need an approval"
      await_approval: {timeout: 10s, fallback: block}
  - id: small-budget
    priority: 10
    target: {event_types: [pre_action]}
    condition: session.actions >= 3
    outcome: {decision: block, reason: "budget"}
`
	// A human approves the migration although nobody answering would
	// block it: the counters must take the human's answer.
	cmds := []string{"deploy a", "drop b", "migrate", "deploy c", "ls", "drop d", "ls"}
	var events []sent
	for i, c := range cmds {
		s := sent{principal: "agent", transport: "unix", ev: mkEvent(i, protocol.EventPreAction, "a1", bash(c))}
		if c == "migrate" {
			yes := true
			s.answer = &yes
		}
		events = append(events, s)
	}
	path := record(t, policyText, events)
	src := openStore(t, path)
	for _, mode := range []CounterMode{CountersNew, CountersRecorded} {
		rep := run(t, src, Options{Engine: engine(t, policyText), Counters: mode})
		if rep.DecisionChanges != 0 || rep.RuleChanges != 0 {
			t.Fatalf("%s: %+v", mode, rep.Changes)
		}
	}
	// Without the rules, the escalations become plain decisions. (The
	// recorded "drop d" escalated although the budget was used up: the
	// approval rule has the higher priority.)
	rep := run(t, src, Options{Engine: engine(t, "")})
	var got []string
	for _, c := range rep.Changes {
		got = append(got, c.Command+": "+verdictText(&c.Old)+" → "+verdictText(&c.New))
	}
	want := []string{
		"deploy a: escalate [approval expired: allow] (rule approve-deploy) → allow (default)",
		"drop b: escalate [approval expired: block] (rule approve-drop) → allow (default)",
		"migrate: escalate [approval approved: allow] (rule approve-migrate) → allow (default)",
		"deploy c: escalate [approval expired: allow] (rule approve-deploy) → allow (default)",
		"ls: block (rule small-budget) → allow (default)",
		"drop d: escalate [approval expired: block] (rule approve-drop) → allow (default)",
		"ls: block (rule small-budget) → allow (default)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("changes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
