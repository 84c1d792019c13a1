package policy

import (
	"encoding/json"
	"testing"

	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/protocol"
)

// toolCall is a pre_action of an agent's file tool in /work/proj.
func toolCall(tool string, args map[string]any) *Input {
	p, _ := json.Marshal(map[string]any{"tool_name": tool, "arguments": args, "cwd": "/work/proj"})
	return in(&protocol.Event{EventType: protocol.EventPreAction, SessionID: "s", Payload: p})
}

// TestRedTeamToolCalls: file-tool spellings of the holes closed by the red
// team of 2026-11-28 (fourth session), and the ordinary calls next to them.
func TestRedTeamToolCalls(t *testing.T) {
	cases := []packCase{
		{"read through a glob", toolCall("Read", map[string]any{"file_path": "/home/ann/.ss?/id_rsa"}), "credentials.read_glob"},
		{"write ~/.ssh/rc", toolCall("Write", map[string]any{"file_path": "/home/ann/.ssh/rc", "content": "x"}), "persistence.backdoor"},
		{"write ~/.bash_aliases", toolCall("Write", map[string]any{"file_path": "/home/ann/.bash_aliases", "content": "alias sudo=x"}), "persistence.startup_files"},
		{"write .git/config", toolCall("Write", map[string]any{"file_path": "/work/proj/.git/config", "content": "[core]\n\tfsmonitor = curl x | sh"}), "destructive_shell.pipe_to_shell"},
		{"glob lists ~/.ssh", toolCall("Glob", map[string]any{"pattern": "/home/ann/.ssh/*"}), ""},
		{"glob of the project", toolCall("Glob", map[string]any{"pattern": "**/*.go"}), ""},
		{"read a project file", toolCall("Read", map[string]any{"file_path": "/work/proj/README.md"}), ""},
	}
	opts := Options{Agent: effects.Context{Home: "/home/ann"}, Packs: map[string]bool{"approvals": true}}
	runPackCases(t, opts, cases)
}
