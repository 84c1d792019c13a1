package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/internal/jsonscan"
)

// FuzzArgumentsDifferential reads a payload as a Go tool does (its
// arguments decoded with encoding/json into a struct: member names
// matched ignoring case, the last of equal names winning) and as the
// policy does (shellCommand, which the shell packs judge). Whenever the
// tool would run a command, the policy must see it: a payload the server
// accepts (the I-JSON profile, internal/jsonscan) must not carry a command
// the packs never read.
func FuzzArgumentsDifferential(f *testing.F) {
	for _, s := range []string{
		`{"tool_name":"bash","arguments":{"command":"rm -rf /"}}`,
		`{"tool_name":"bash","arguments":{"Command":"rm -rf /"}}`,
		`{"tool_name":"bash","ARGUMENTS":{"cmd":"mkfs /dev/sda"}}`,
		`{"tool_name":"bash","arguments":{"\u017Fcript":"dd if=/dev/zero of=/dev/sda"}}`,
		`{"tool_name":"bash","arguments":{"comm\u0061nd":"shutdown now"}}`,
		`{"tool_name":"bash","arguments":{"command":"ls","Command":"rm -rf /"}}`,
		`{"tool_name":"bash","arguments":{"command":["rm","-rf","/"]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<14 || jsonscan.Kind(b) != '{' || jsonscan.Check(b) != nil {
			return // the server refuses it before any policy runs
		}
		var tool struct {
			Arguments struct {
				Command json.RawMessage `json:"command"`
				Cmd     json.RawMessage `json:"cmd"`
				Script  json.RawMessage `json:"script"`
			} `json:"arguments"`
		}
		if json.Unmarshal(b, &tool) != nil {
			return
		}
		seen := shellCommand(decodeJSON(string(b)))
		for name, raw := range map[string]json.RawMessage{
			"command": tool.Arguments.Command, "cmd": tool.Arguments.Cmd, "script": tool.Arguments.Script,
		} {
			var cmd string
			if json.Unmarshal(raw, &cmd) != nil || cmd == "" {
				continue
			}
			if !strings.Contains(seen, cmd) {
				t.Fatalf("a Go tool runs %s %q, the policy reads the command %q\ninput: %q", name, cmd, seen, b)
			}
		}
	})
}
