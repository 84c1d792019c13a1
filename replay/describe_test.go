package replay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

func TestDescribe(t *testing.T) {
	long := strings.Repeat("é", 600)
	for _, c := range []struct {
		payload, tool, command, prompt string
	}{
		{`{"tool_name":"bash","arguments":{"command":"ls -la"}}`, "bash", "ls -la", ""},
		{`{"tool_name":"sh","arguments":{"cmd":["git","push","-f"]}}`, "sh", "git push -f", ""},
		{`{"tool_name":"sh","arguments":{"commands":["a","b"],"script":""}}`, "sh", "a\nb", ""},
		{`{"tool_name":"sh","arguments":{"script":"x","command":"y"}}`, "sh", "y", ""},
		{`{"prompt":"hello \"you\""}`, "", "", `hello "you"`},
		{`{"session_id":"s","message":"ok?","query":"q"}`, "", "", "ok?"},
		{`{"tool_name":"read","arguments":"not an object"}`, "read", "", ""},
		{`{"prompt":"` + long + `"}`, "", "", long[:maxDetailBytes-4] + "…"},
	} {
		var ch Change
		describe(&protocol.Event{Payload: json.RawMessage(c.payload)}, &ch)
		if ch.Tool != c.tool || ch.Command != c.command || ch.Prompt != c.prompt {
			t.Errorf("%s: got %q %q %q", c.payload, ch.Tool, ch.Command, ch.Prompt)
		}
	}
}

// Recorded fields cannot break a text line.
func TestTextCleansFields(t *testing.T) {
	c := Change{ID: 1, SessionID: "a\nb", EventType: "pre_action", Kind: DecisionChanged,
		Old: Verdict{Decision: "allow"}, New: Verdict{Decision: "block", RuleID: "r\x1b[2J"}, Command: "rm\n-rf"}
	var b strings.Builder
	(&Report{DecisionChanges: 1, Changes: []Change{c}}).writeChanges(&b, DecisionChanged, 1, "decision changes")
	got := b.String()
	if strings.Count(got, "\n") != 3 || strings.Contains(got, "\x1b") || !strings.Contains(got, `command: "rm\n-rf"`) || !strings.Contains(got, "a?b") {
		t.Fatalf("%q", got)
	}
}
