package hooks

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// The agent's home and user name given in Options reach the harness with
// each pre_action (the harness reads "~" with them), and only there.
func TestHandleSendsAgentHome(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pre, _ := marshalPlain(map[string]any{"session_id": "s-1", "cwd": "/work/app", "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]string{"command": "rm -rf ~/x"}})
	h := &fakeHarness{decision: protocol.Decision{Kind: protocol.DecisionAllow}}
	Handle(ctx, ClaudeCode, pre, h, Options{Now: fixedNow, Home: "/home/ann", User: "ann"})
	if len(h.events) != 1 {
		t.Fatalf("%d events", len(h.events))
	}
	var p map[string]any
	if err := json.Unmarshal(h.events[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p["home"] != "/home/ann" || p["user"] != "ann" || p["cwd"] != "/work/app" {
		t.Errorf("pre_action payload: %s", h.events[0].Payload)
	}
	prompt, _ := marshalPlain(map[string]any{"session_id": "s-1", "hook_event_name": "UserPromptSubmit", "prompt": "hi"})
	h = &fakeHarness{decision: protocol.Decision{Kind: protocol.DecisionAllow}}
	Handle(ctx, ClaudeCode, prompt, h, Options{Now: fixedNow, Home: "/home/ann", User: "ann"})
	if len(h.events) != 1 || string(h.events[0].Payload) != `{"agent":"claude-code","prompt":"hi"}` {
		t.Errorf("a prompt must not carry the home: %d events, %s", len(h.events), h.events[0].Payload)
	}
	if home, _ := AgentEnv(); home != "" && home[0] != '/' {
		t.Errorf("AgentEnv home %q is not absolute", home)
	}
}
