package policy

import (
	"encoding/json"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// noPacks switches every built-in pack off.
func noPacks() Options {
	o := Options{Packs: map[string]bool{}}
	for _, n := range PackNames() {
		o.Packs[n] = false
	}
	return o
}

// mustCompile compiles one policy text or fails the test.
func mustCompile(t testing.TB, opts Options, yaml string) *Set {
	t.Helper()
	set, err := Compile(opts, Source{Name: "test.yaml", Data: []byte(yaml)})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return set
}

// event builds an event of type t with a JSON payload.
func event(t protocol.EventType, payload string) *protocol.Event {
	return &protocol.Event{EventType: t, SessionID: "s", AgentID: "a", Timestamp: "2026-01-01T00:00:00Z", Payload: json.RawMessage(payload)}
}

// action builds a pre_action event for a tool call.
func action(tool string, args map[string]any) *protocol.Event {
	b, err := json.Marshal(map[string]any{"tool_name": tool, "arguments": args})
	if err != nil {
		panic(err)
	}
	return event(protocol.EventPreAction, string(b))
}

// bash builds a pre_action event running a shell command.
func bash(cmd string) *protocol.Event { return action("bash", map[string]any{"command": cmd}) }

// eval evaluates ev with set.
func eval(set *Set, ev *protocol.Event) Result { return set.Evaluate(&Input{Event: ev}) }

// loadProblems compiles yaml and returns the problems it must have.
func loadProblems(t *testing.T, opts Options, yaml string) []Problem {
	t.Helper()
	_, err := Compile(opts, Source{Name: "p.yaml", Data: []byte(yaml)})
	le, ok := err.(*LoadError)
	if !ok {
		t.Fatalf("expected a *LoadError, got %v", err)
	}
	return le.Problems
}
