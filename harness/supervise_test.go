package harness

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/descriptor"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

const testDescriptor = `
metadata: {name: support, version: v1}
runtime: {entry_agent: router, max_turns: 2}
tools:
  lookup_order: {target: example://tool/lookup_order}
  refund: {target: example://tool/refund}
agents:
  router:
    handoffs: [order]
    instructions: Route the request.
  order:
    tools: [lookup_order]
    instructions: Look orders up.
`

func loadTestDescriptor(t *testing.T) *descriptor.Descriptor {
	t.Helper()
	d, err := descriptor.Parse([]byte(testDescriptor), descriptor.FormatYAML, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func pev(typ protocol.EventType, agent, payload string) *protocol.Event {
	return &protocol.Event{EventType: typ, SessionID: "s", AgentID: agent, Payload: json.RawMessage(payload)}
}

func TestDescriptorSupervisor(t *testing.T) {
	s := NewDescriptorSupervisor(loadTestDescriptor(t))
	cases := []struct {
		ev   *protocol.Event
		want string // substring of the reason, "" for allowed
	}{
		{pev(protocol.EventPreAction, "order", `{"tool_name":"lookup_order","arguments":{}}`), ""},
		{pev(protocol.EventPreAction, "order", `{"tool_name":"refund","arguments":{}}`), `agent "order" does not declare tool "refund"`},
		{pev(protocol.EventPreAction, "router", `{"tool_name":"bash"}`), `agent "router" does not declare tool "bash"`},
		{pev(protocol.EventPreAction, "router", `{"Tool_Name":"bash"}`), `agent "router" does not declare tool "bash"`},
		{pev(protocol.EventPreAction, "ghost", `{"tool_name":"lookup_order"}`), `agent "ghost" is not declared`},
		{pev(protocol.EventPreAction, "router", `{"tool_name":"transfer_to_order"}`), ""},
		{pev(protocol.EventPreAction, "router", `{"action_type":"handoff","tool_name":"handoff","arguments":{"target_agent":"order"}}`), ""},
		{pev(protocol.EventPreAction, "order", `{"tool_name":"transfer_to_router"}`), `agent "order" may not hand off to "router"`},
		{pev(protocol.EventPreAction, "router", `{"tool_name":"handoff","arguments":{"to":"billing"}}`), `may not hand off to "billing"`},
		// A target named in other letter case is what a Go tool reads.
		{pev(protocol.EventPreAction, "router", `{"tool_name":"handoff","arguments":{"Target_Agent":"billing"}}`), `may not hand off to "billing"`},
		{pev(protocol.EventPreAction, "router", `{"tool_name":"handoff","Arguments":{"TO":"billing"}}`), `may not hand off to "billing"`},
		// Two different targets: which one is followed depends on the tool.
		{pev(protocol.EventPreAction, "router", `{"tool_name":"handoff","arguments":{"to":"order","target_agent":"billing"}}`), "two different target agents"},
		{pev(protocol.EventPreAction, "router", `{"tool_name":"handoff","arguments":{"to":"order","agent":"order"}}`), ""},
		{pev(protocol.EventPreAction, "router", `{"tool_name":"handoff","arguments":{"note":"x"}}`), "handoff without a target agent"},
		{pev(protocol.EventPostAction, "ghost", `{}`), ""},
	}
	for _, c := range cases {
		got := s.Check(c.ev)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s %s: got %q, want %q", c.ev.AgentID, c.ev.Payload, got, c.want)
		}
	}
	// max_turns counts pre_prompt per run.
	s.Observe(pev(protocol.EventRunLifecycle, "router", `{"run_id":"r1","session_id":"s","status":"executing","updated_at":"x"}`))
	prompt := pev(protocol.EventPrePrompt, "router", `{"prompt":"hi"}`)
	for turn := 1; turn <= 2; turn++ {
		if got := s.Check(prompt); got != "" {
			t.Fatalf("turn %d within max_turns refused: %s", turn, got)
		}
	}
	if got := s.Check(prompt); !strings.Contains(got, "max_turns 2 reached in run r1") {
		t.Fatalf("third turn: %q", got)
	}
	s.Observe(pev(protocol.EventRunLifecycle, "router", `{"run_id":"r2","session_id":"s","status":"created","updated_at":"x"}`))
	if got := s.Check(prompt); got != "" {
		t.Fatalf("new run still limited: %q", got)
	}
}

// An undeclared tool is blocked through the harness, and the audit entry
// carries the descriptor hash.
func TestSupervisedHarnessRecordsDescriptorHash(t *testing.T) {
	f := newFixture(t)
	d := loadTestDescriptor(t)
	f.h.opts.Supervisor = NewDescriptorSupervisor(d)
	ev := pev(protocol.EventPreAction, "order", `{"tool_name":"refund","arguments":{"order":"A1"}}`)
	ev.Timestamp = "2026-11-21T10:00:00Z"
	dec, err := f.h.HandleEvent(context.Background(), ev)
	if err != nil || dec.Kind != protocol.DecisionBlock || !strings.Contains(dec.Reason, `"refund"`) {
		t.Fatalf("undeclared tool: %+v %v", dec, err)
	}
	recs := f.audit(t, store.AuditFilter{SessionID: "s", RuleID: "descriptor"})
	if len(recs) != 1 || recs[0].DescriptorHash != d.Hash() || !strings.HasPrefix(d.Hash(), "sha256:") {
		t.Fatalf("audit: %+v (hash %s)", recs, d.Hash())
	}
}
