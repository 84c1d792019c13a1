package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

const infoPolicy = `
rules:
  - id: secret-rule
    description: Stops a thing we do not explain.
    private: true
    priority: 10
    target: {event_types: [pre_action], tools: [bash]}
    condition: event.command.contains("magic-word-xyz")
    outcome: {decision: block, reason: "not allowed"}
  - id: open-rule
    description: Deploys need a human.
    priority: 20
    target: {event_types: [pre_action], tools: ["deploy*"]}
    condition: event.tool == "deploy_prod"
    outcome:
      decision: escalate
      reason: "deploys need approval"
      await_approval: {timeout: 2m, approver_role: approver}
  - id: prompts
    target: {event_types: [pre_prompt], agents: [writer]}
    outcome: {decision: allow}
  - id: watching
    mode: shadow
    target: {event_types: [pre_action]}
    outcome: {decision: block, reason: "would block"}
`

func TestRulesHidePrivateConditions(t *testing.T) {
	set := mustCompile(t, noPacks(), infoPolicy)
	all := set.Rules(RuleFilter{EventType: protocol.EventPreAction, ToolName: "bash"})
	if len(all) != 1 || all[0].ID != "secret-rule" {
		t.Fatalf("rules for bash: %+v", all)
	}
	r := all[0]
	if !r.Private || r.Condition != "" {
		t.Fatalf("private rule shows its condition: %+v", r)
	}
	if r.Description == "" || r.Outcome.Decision != protocol.DecisionBlock || r.Outcome.Reason != "not allowed" {
		t.Fatalf("private rule lost its description or outcome: %+v", r)
	}
	open := set.Rules(RuleFilter{EventType: protocol.EventPreAction, ToolName: "deploy_prod"})
	if len(open) != 1 || open[0].ID != "open-rule" || !strings.Contains(open[0].Condition, "deploy_prod") {
		t.Fatalf("open rule: %+v", open)
	}
	if a := open[0].Outcome.Approval; a == nil || a.TimeoutMs != (2*time.Minute).Milliseconds() || a.ApproverRole != "approver" {
		t.Fatalf("approval: %+v", open[0].Outcome.Approval)
	}
}

func TestRulesFilterAndOrder(t *testing.T) {
	set := mustCompile(t, noPacks(), infoPolicy)
	ids := func(rs []RuleInfo) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		f    RuleFilter
		want string
	}{
		{RuleFilter{}, "open-rule,secret-rule,prompts"}, // by priority; the shadow rule never decides
		{RuleFilter{EventType: protocol.EventPrePrompt}, "prompts"},
		{RuleFilter{EventType: protocol.EventPrePrompt, AgentID: "coder"}, ""},
		{RuleFilter{EventType: protocol.EventPreAction, ToolName: "python"}, ""},
	} {
		if got := ids(set.Rules(c.f)); got != c.want {
			t.Errorf("Rules(%+v) = %q, want %q", c.f, got, c.want)
		}
	}
}

func TestPrivateMustBeBoolean(t *testing.T) {
	ps := loadProblems(t, noPacks(), `
rules:
  - id: r
    private: "yes"
    outcome: {decision: allow}
`)
	if len(ps) != 1 || !strings.Contains(ps[0].Message, "private") {
		t.Fatalf("problems: %+v", ps)
	}
}

func TestParamAndLoadedAt(t *testing.T) {
	opts := noPacks()
	opts.Packs["budgets"] = true
	opts.Params = map[string]any{"max_actions": 5}
	before := time.Now()
	e, err := NewEngine(opts)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := e.Set().Param("max_actions"); !ok || v != int64(5) {
		t.Fatalf("max_actions = %v (%T), %v", v, v, ok)
	}
	if v, ok := e.Set().Param("budget_action"); !ok || v != "block" {
		t.Fatalf("budget_action = %v, %v", v, ok)
	}
	if _, ok := e.Set().Param("nope"); ok {
		t.Fatal("unknown param reported as set")
	}
	if e.LoadedAt().Before(before) || e.Loads() != 1 {
		t.Fatalf("loaded at %v, loads %d", e.LoadedAt(), e.Loads())
	}
	if err := e.Load(); err != nil {
		t.Fatal(err)
	}
	if e.Loads() != 2 {
		t.Fatalf("loads after a reload: %d", e.Loads())
	}
}
