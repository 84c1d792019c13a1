package policy

import (
	"testing"

	"cel.dev/cel-go/common/types"

	"github.com/ahp-go/ahp/protocol"
)

// A member named as a field in other letter case is what a Go tool
// reading its arguments with encoding/json acts on ({"Command": …} runs
// as command), so the packs and rules judge it as that field.
func TestCaseVariantMembersAreJudged(t *testing.T) {
	const shell = "destructive_shell.rm_root_or_home"
	runPackCases(t, only("destructive_shell"), []packCase{
		{"Command", in(event(protocol.EventPreAction, `{"tool_name":"bash","arguments":{"Command":"rm -rf /"}}`)), shell},
		{"COMMAND", in(event(protocol.EventPreAction, `{"tool_name":"bash","arguments":{"COMMAND":"rm -rf /"}}`)), shell},
		{"Arguments", in(event(protocol.EventPreAction, `{"tool_name":"bash","Arguments":{"command":"rm -rf ~"}}`)), shell},
		{"Tool_Input and Cmd", in(event(protocol.EventPreAction, `{"tool_name":"Bash","Tool_Input":{"Cmd":"rm -rf ~"}}`)), shell},
		{"long s in script", in(event(protocol.EventPreAction, `{"tool_name":"bash","arguments":{"\u017Fcript":"rm -rf /"}}`)), shell},
		{"other key", in(event(protocol.EventPreAction, `{"tool_name":"bash","arguments":{"Comment":"rm -rf /"}}`)), ""},
	})
	runPackCases(t, func() Options {
		o := only("filesystem_scope")
		o.Params = map[string]any{"workspace_roots": []string{"/work/repo"}}
		return o
	}(), []packCase{
		{"File_Path", in(event(protocol.EventPreAction, `{"tool_name":"read","arguments":{"File_Path":"/etc/shadow"}}`)), "filesystem_scope.outside_workspace"},
		{"File_Path inside", in(event(protocol.EventPreAction, `{"tool_name":"read","arguments":{"File_Path":"/work/repo/a.go"}}`)), ""},
	})

	// A rule's own field selection and has() read case variants too, both
	// ways: a lower case member for an upper case name.
	set, err := Compile(noPacks(), Source{Name: "case.yaml", Data: []byte(`
rules:
  - id: deploy
    priority: 10
    target: {event_types: [pre_action]}
    condition: 'has(payload.arguments.target) && payload.arguments.target == "prod"'
    outcome: {decision: block, reason: "no prod"}
  - id: upper
    priority: 5
    target: {event_types: [pre_action]}
    condition: 'has(payload.Region) && payload.Region == "eu"'
    outcome: {decision: block, reason: "no eu"}
`)})
	if err != nil {
		t.Fatal(err)
	}
	for payload, want := range map[string]string{
		`{"tool_name":"deploy","arguments":{"Target":"prod"}}`: "deploy",
		`{"tool_name":"deploy","ARGUMENTS":{"target":"prod"}}`: "deploy",
		`{"tool_name":"deploy","arguments":{"target":"dev"}}`:  "",
		`{"tool_name":"deploy","arguments":{},"region":"eu"}`:  "upper",
		`{"tool_name":"deploy","arguments":{},"Region":"eu"}`:  "upper",
	} {
		r := set.Evaluate(in(event(protocol.EventPreAction, payload)))
		if r.Err != nil {
			t.Fatalf("%s: %v", payload, r.Err)
		}
		if got := map[bool]string{true: r.RuleID, false: ""}[r.Matched]; got != want {
			t.Errorf("%s: matched %q, want %q", payload, got, want)
		}
	}
}

func TestJSONObjectCaseFoldLookup(t *testing.T) {
	o := decodeJSON(`{"exact":1,"Mixed":2,"\u212Aelvin":3}`).(*jsonObject)
	for key, want := range map[string]ref0{
		"exact": 1, "EXACT": 1, "mixed": 2, "Mixed": 2, "kelvin": 3, "KELVIN": 3, "absent": 0, "mixe": 0,
	} {
		v, found := o.lookup(key)
		if want == 0 {
			if found {
				t.Errorf("%s: found %v", key, v)
			}
			continue
		}
		if !found || v.Equal(types.Int(want)) != types.True {
			t.Errorf("%s: %v %v, want %d", key, v, found, want)
		}
	}
	// An object of lower case names only: no folding pass is needed for a
	// lower case name, and an upper case one still finds its member.
	plain := decodeJSON(`{"command":"ls"}`).(*jsonObject)
	if plain.scan(); plain.folds {
		t.Error("an object of lower case names is marked as folding")
	}
	if v, found := plain.lookup("Command"); !found || v != types.String("ls") {
		t.Errorf("Command in a lower case object: %v %v", v, found)
	}
}

// ref0 is an expected integer member value; 0 means absent.
type ref0 = int
