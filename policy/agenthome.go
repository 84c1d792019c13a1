package policy

import "strings"

// UnknownHome is the home directory the effects of an event are read with
// when neither Options.Agent.Home nor the event (its payload's "home", as
// the hook adapters send it) names the agent's: "~", "~/x", $HOME and a
// bare cd are then this directory, and event.home is this path. A plain
// AHP client that sends no home is thus read as an agent with *a* home,
// whoever's it is: the rules that name home paths (~/.aws, ~/.ssh,
// /home/*/.ssh/id_*, rm -rf ~) match its actions as they match a hooked
// agent's, and never fail open because the home is not known. It names
// no directory of any machine ("~" is no user's name), so the file system
// view finds nothing under it: a glob over it stays a pattern and a link
// under it is not followed. The self_protection pack reads it as the
// harness's own home too (the agent may be the harness's user), so that
// a harness file under that home stays protected. docs/effects.md, "The
// agent's home", says what the harness assumes.
const UnknownHome = "/home/~"

// fromUnknownHome rewrites a path under UnknownHome with a leading "~"
// (UnknownHome itself is "~"); other paths are returned as they are.
func fromUnknownHome(p string) string {
	if p == UnknownHome {
		return "~"
	}
	if rest, ok := strings.CutPrefix(p, UnknownHome+"/"); ok {
		return "~/" + rest
	}
	return p
}
