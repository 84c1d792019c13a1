package policy

import (
	"encoding/json"
	"testing"

	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/protocol"
)

// withHome is a bash pre_action as the hook adapters send it: the agent's
// working directory, home and user name in the payload.
func withHome(cmd, home, user string) *protocol.Event {
	p, _ := json.Marshal(map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": cmd},
		"cwd": "/work/proj", "home": home, "user": user})
	return &protocol.Event{EventType: protocol.EventPreAction, SessionID: "s", Payload: p}
}

// TestPayloadHome: a home sent with the event is what "~", $HOME and a bare
// cd mean when the harness's configuration names none; the configuration's
// wins, and a home that is not an absolute path is ignored.
func TestPayloadHome(t *testing.T) {
	set, err := Compile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	// cd with no operand goes home: without the agent's home the directory
	// is unknown and rm -rf . was let through.
	if r := set.Evaluate(&Input{Event: withHome("cd; rm -rf .", "/home/ann", "ann")}); r.RuleID != "destructive_shell.rm_root_or_home" {
		t.Errorf("cd; rm -rf . with home /home/ann: got %q (%v), want destructive_shell.rm_root_or_home", r.RuleID, r.Decision)
	}
	paths := func(s *Set, ev *protocol.Event) []string {
		var out []string
		for _, e := range s.Effects(ev) {
			if e.Kind == effects.Delete {
				out = append(out, e.Path)
			}
		}
		return out
	}
	if got := paths(set, withHome(`rm -rf ~/.cache/x "$HOME/tmp"`, "/home/ann", "ann")); len(got) != 2 || got[0] != "/home/ann/.cache/x" || got[1] != "/home/ann/tmp" {
		t.Errorf("payload home: deletes %q", got)
	}
	if got := paths(set, withHome(`rm -rf ~/x`, "home/ann", "")); len(got) != 1 || got[0] != "~/x" {
		t.Errorf("a relative home must be ignored: deletes %q", got)
	}
	bob, err := Compile(Options{Agent: effects.Context{Home: "/home/bob"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(bob, withHome(`rm -rf ~/x`, "/tmp/fake", "")); len(got) != 1 || got[0] != "/home/bob/x" {
		t.Errorf("the configured home must win: deletes %q", got)
	}
}
