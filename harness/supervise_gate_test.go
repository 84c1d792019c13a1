package harness

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/descriptor"
	"github.com/ahp-go/ahp/protocol"
)

// gatedDescriptor declares a handoff from router to tutor that holds only
// when state.kolbEnabled is true, next to a plain handoff to qna.
const gatedDescriptor = `
runtime: {entry_agent: router}
context:
  fields:
    state.kolbEnabled: {type: boolean, default: false}
  references:
    state.kolbEnabled: {type: boolean}
agents:
  router:
    handoffs:
      - qna
      - agent: tutor
        where: {context: state.kolbEnabled}
  qna: {}
  tutor: {}
`

// withRunContext returns ev with metadata {"run_context": ctx}.
func withRunContext(ev *protocol.Event, ctx string) *protocol.Event {
	ev.Metadata = json.RawMessage(`{"run_context":` + ctx + `}`)
	return ev
}

func TestGatedHandoff(t *testing.T) {
	d, err := descriptor.Parse([]byte(gatedDescriptor), descriptor.FormatYAML, "")
	if err != nil {
		t.Fatal(err)
	}
	toTutor := func() *protocol.Event {
		return pev(protocol.EventPreAction, "router", `{"tool_name":"transfer_to_tutor"}`)
	}
	s := NewDescriptorSupervisor(d)
	for _, c := range []struct {
		name string
		ev   *protocol.Event
		want string // substring of the reason, "" for allowed
	}{
		{"ungated", pev(protocol.EventPreAction, "router", `{"tool_name":"transfer_to_qna"}`), ""},
		{"gate true", withRunContext(toTutor(), `{"state":{"kolbEnabled":true}}`), ""},
		{"gate false", withRunContext(toTutor(), `{"state":{"kolbEnabled":false}}`), `only when context path "state.kolbEnabled" is true; it is false in the event's run context`},
		{"gate not boolean", withRunContext(toTutor(), `{"state":{"kolbEnabled":"yes"}}`), "needs a boolean"},
		{"gate missing", withRunContext(toTutor(), `{"state":{}}`), "is missing"},
		// No context reported: the descriptor's defaults decide (false here).
		{"no context, default false", toTutor(), `it is false in the descriptor's context defaults`},
		{"run_context not an object", withRunContext(toTutor(), `[true]`), "run_context must be an object"},
	} {
		got := s.Check(c.ev)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}

	// A context reported once on a notification (run_lifecycle) holds for
	// later events of the session that carry none.
	s.Observe(withRunContext(pev(protocol.EventRunLifecycle, "router", `{"run_id":"r1","status":"executing"}`), `{"state":{"kolbEnabled":true}}`))
	if got := s.Check(toTutor()); got != "" {
		t.Fatalf("after a reported context that opens the gate: %q", got)
	}
	// The event's own context wins over the remembered one.
	if got := s.Check(withRunContext(toTutor(), `{"state":{"kolbEnabled":false}}`)); got == "" {
		t.Fatal("the event's own context (gate false) was not used")
	}
	// A tutor may not hand back: nothing declared.
	if got := s.Check(pev(protocol.EventPreAction, "tutor", `{"tool_name":"transfer_to_router"}`)); !strings.Contains(got, "may not hand off") {
		t.Fatalf("undeclared handoff: %q", got)
	}

	// With a default of true, the gate is open without any reported context.
	open, err := descriptor.Parse([]byte(strings.Replace(gatedDescriptor, "default: false", "default: true", 1)), descriptor.FormatYAML, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := NewDescriptorSupervisor(open).Check(toTutor()); got != "" {
		t.Fatalf("default true: %q", got)
	}
}
