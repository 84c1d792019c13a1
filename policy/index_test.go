package policy

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// evaluated runs ev through set and returns the ids of the rules whose
// condition was evaluated, in order.
func evaluated(set *Set, in *Input) []string {
	var mu sync.Mutex
	var ids []string
	s := *set
	s.onEval = func(id string) {
		mu.Lock()
		ids = append(ids, id)
		mu.Unlock()
	}
	s.Evaluate(in)
	return ids
}

func TestIndexSkipsUnrelatedRules(t *testing.T) {
	set := mustCompile(t, noPacks(), `
rules:
  - id: prompt-rule
    target: {event_types: [pre_prompt]}
    condition: "false"
    outcome: {decision: block, reason: x}
  - id: bash-rule
    target: {event_types: [pre_action], tools: [bash]}
    condition: "false"
    outcome: {decision: block, reason: x}
  - id: shell-glob
    target: {event_types: [pre_action], tools: ["shell*"]}
    condition: "false"
    outcome: {decision: block, reason: x}
  - id: any-tool-action
    target: {event_types: [pre_action]}
    condition: "false"
    outcome: {decision: block, reason: x}
  - id: every-event
    condition: "false"
    outcome: {decision: block, reason: x}
  - id: reviewer-only
    target: {agents: ["reviewer-*"]}
    condition: "false"
    outcome: {decision: block, reason: x}
  - id: shallow-only
    target: {depth: {max: 0}}
    condition: "false"
    outcome: {decision: block, reason: x}
`)
	deep := bash("ls")
	deep.Depth = 1
	cases := []struct {
		name string
		ev   *protocol.Event
		want []string
	}{
		{"bash", bash("ls"), []string{"bash-rule", "any-tool-action", "every-event", "shallow-only"}},
		{"glob tool", action("shell_exec", nil), []string{"shell-glob", "any-tool-action", "every-event", "shallow-only"}},
		{"other tool", action("read", nil), []string{"any-tool-action", "every-event", "shallow-only"}},
		{"no tool", event(protocol.EventPreAction, `{"x":1}`), []string{"any-tool-action", "every-event", "shallow-only"}},
		{"prompt", event(protocol.EventPrePrompt, `{"prompt":"hi"}`), []string{"prompt-rule", "every-event", "shallow-only"}},
		{"heartbeat", event(protocol.EventHeartbeat, `{}`), []string{"every-event", "shallow-only"}},
		{"depth 1", deep, []string{"bash-rule", "any-tool-action", "every-event"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := evaluated(set, &Input{Event: c.ev}); !slices.Equal(got, c.want) {
				t.Fatalf("evaluated %v, want %v", got, c.want)
			}
		})
	}
	rev := bash("ls")
	rev.AgentID = "reviewer-3"
	if got := evaluated(set, &Input{Event: rev}); !slices.Contains(got, "reviewer-only") {
		t.Fatalf("reviewer rule not evaluated: %v", got)
	}
}

func TestIndexCostDoesNotGrowWithUnrelatedRules(t *testing.T) {
	var b strings.Builder
	b.WriteString("rules:\n  - id: the-one\n    target: {event_types: [pre_action], tools: [bash]}\n    condition: 'false'\n    outcome: {decision: block, reason: x}\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "  - id: prompt-%d\n    target: {event_types: [pre_prompt]}\n    condition: 'false'\n    outcome: {decision: block, reason: x}\n", i)
		fmt.Fprintf(&b, "  - id: tool-%d\n    target: {event_types: [pre_action], tools: [tool%d]}\n    condition: 'false'\n    outcome: {decision: block, reason: x}\n", i, i)
	}
	set := mustCompile(t, noPacks(), b.String())
	if got := evaluated(set, &Input{Event: bash("ls")}); !slices.Equal(got, []string{"the-one"}) {
		t.Fatalf("evaluated %d rules: %v", len(got), got)
	}
}

func TestEvaluationStopsBelowTheDecidingPriority(t *testing.T) {
	set := mustCompile(t, noPacks(), `
rules:
  - id: high
    priority: 10
    outcome: {decision: allow}
  - id: same-level
    priority: 10
    condition: "false"
    outcome: {decision: block, reason: x}
  - id: lower
    priority: 1
    outcome: {decision: block, reason: x}
`)
	if got := evaluated(set, &Input{Event: bash("ls")}); !slices.Equal(got, []string{"high", "same-level"}) {
		t.Fatalf("evaluated %v", got)
	}
}
