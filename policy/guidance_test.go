package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

const guidancePolicy = `
rules:
  - id: no-rm
    target: {tools: [shell]}
    condition: 'event.command.contains("rm -rf")'
    outcome: {decision: block, reason: no rm -rf}
guidance:
  - id: db-migration
    description: how this team migrates databases
    when: '"migration" in event.words || event.problem.contains("migration")'
    strategy: step_by_step
    subtasks: [back up, dry-run, apply, verify]
    hints: [never edit an applied migration]
  - id: deep-agents
    when: 'event.depth >= 2'
    hints: [you are a sub-agent; report back instead of widening the task]
`

func planningEvent(t *testing.T, task string, depth uint32) *protocol.Event {
	t.Helper()
	p, _ := json.Marshal(protocol.PlanningPayload{SessionID: "s", TaskDescription: task,
		AvailableStrategies: []protocol.PlanningStrategy{protocol.StrategyTreeOfThoughts, protocol.StrategyStepByStep}})
	return &protocol.Event{EventType: protocol.EventPlanning, SessionID: "s", AgentID: "a", Depth: depth, Payload: p}
}

func TestGuidanceMatches(t *testing.T) {
	set, err := Compile(Options{}, Source{Name: "p.yaml", Data: []byte(guidancePolicy)})
	if err != nil {
		t.Fatal(err)
	}
	in, ok := GuidanceInputFor(planningEvent(t, "Add a database migration for the users table", 0))
	if !ok {
		t.Fatal("planning input not built")
	}
	gs, errs := set.Guidance(in)
	if len(errs) != 0 || len(gs) != 1 || gs[0].ID != "db-migration" || gs[0].Strategy != "step_by_step" ||
		strings.Join(gs[0].Subtasks, "|") != "back up|dry-run|apply|verify" {
		t.Fatalf("guidance = %+v, %v", gs, errs)
	}
	in, _ = GuidanceInputFor(planningEvent(t, "rename a variable", 3))
	if gs, _ := set.Guidance(in); len(gs) != 1 || gs[0].ID != "deep-agents" {
		t.Errorf("depth 3: %+v", gs)
	}
	rp, _ := json.Marshal(protocol.ReasoningPayload{SessionID: "s", ReasoningType: protocol.ReasoningType{Name: "chain_of_thought"},
		ProblemStatement: "the migration 0004 fails on a fresh database"})
	in, ok = GuidanceInputFor(&protocol.Event{EventType: protocol.EventReasoning, Payload: rp})
	if gs, _ := set.Guidance(in); !ok || len(gs) != 1 || gs[0].Hints[0] != "never edit an applied migration" {
		t.Errorf("reasoning: %+v", gs)
	}
	if _, ok := GuidanceInputFor(&protocol.Event{EventType: protocol.EventPreAction, Payload: []byte(`{}`)}); ok {
		t.Error("a pre_action built a guidance input")
	}
	if got := set.GuidanceIDs(); strings.Join(got, ",") != "db-migration,deep-agents" {
		t.Errorf("ids %v", got)
	}
}

// Guidance problems are load errors with their line, as ahp check prints them.
func TestGuidanceProblems(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"guidance:\n  - id: x\n    when: 'event.words.nope('\n    hints: [h]\n", "p.yaml:3: guidance x: when"},
		{"guidance:\n  - when: 'true'\n    hints: [h]\n", "invalid id"},
		{"guidance:\n  - id: x\n    when: '1 + 1'\n    hints: [h]\n", "not bool"},
		{"guidance:\n  - id: x\n", "give a strategy, subtasks or hints"},
		{"guidance:\n  - id: x\n    hints: [h]\n  - id: x\n    hints: [h]\n", "duplicate guidance id"},
		{"guidance:\n  - id: x\n    hint: [h]\n", "hint"},
		{"guidance: {a: 1}\n", "guidance: expected a list"},
	} {
		_, err := Compile(Options{}, Source{Name: "p.yaml", Data: []byte(c.src)})
		var le *LoadError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want a load error containing %q", c.src, err, c.want)
		}
	}
}

// ahp test checks guidance like rules.
func TestGuidanceInPolicyTests(t *testing.T) {
	tests := `
cases:
  - name: migrations get the team's plan
    event: {event_type: planning, payload: {session_id: s, task_description: write the migration, available_strategies: [step_by_step]}}
    expect: {decision: allow, guidance: [db-migration]}
  - name: a small task gets none
    event: {event_type: planning, payload: {session_id: s, task_description: fix a typo, available_strategies: []}}
    expect: {decision: allow, guidance: []}
  - name: wrong on purpose
    event: {event_type: planning, payload: {session_id: s, task_description: fix a typo, available_strategies: []}}
    expect: {decision: allow, guidance: [db-migration]}
`
	tf, err := ParseTestFile(Source{Name: "t.yaml", Data: []byte(tests)})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunTests(Options{}, []Source{{Name: "p.yaml", Data: []byte(guidancePolicy)}}, []*TestFile{tf})
	if err != nil {
		t.Fatal(err)
	}
	var passed []bool
	for _, r := range rep.Results {
		passed = append(passed, r.Passed())
	}
	if len(passed) != 3 || !passed[0] || !passed[1] || passed[2] {
		t.Fatalf("passed = %v; want true, true, false (%+v)", passed, rep.Results)
	}
	if f := rep.Results[2].Failures; len(f) != 1 || !strings.Contains(f[0], "expected guidance [db-migration], got []") {
		t.Errorf("failure text: %v", f)
	}
}
