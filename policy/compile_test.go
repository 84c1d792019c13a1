package policy

import (
	"strings"
	"testing"
)

func TestLoadErrorsNameFileLineAndRule(t *testing.T) {
	ps := loadProblems(t, noPacks(), `rules:
  - id: typo
    target: {event_types: [pre_action]}
    condition: session.actons > 3
    outcome: {decision: block, reason: x}
  - id: wrong-type
    condition: 'event.depth > "3"'
    outcome: {decision: block, reason: x}
  - id: not-bool
    condition: event.tool
    outcome: {decision: block, reason: x}
  - id: block-regex
    condition: |
      event.tool == "bash" &&
      event.command.matches("(unclosed")
    outcome: {decision: block, reason: x}
  - id: undeclared
    condition: request.path == "/"
    outcome: {decision: block, reason: x}
`)
	want := []string{
		`p.yaml:4: rule typo: condition: undefined field 'actons' (column 23)`,
		`p.yaml:7: rule wrong-type: condition: found no matching overload for '_>_' applied to '(int, string)' (column 29)`,
		`p.yaml:10: rule not-bool: condition: must be a bool expression, but it is string`,
		`p.yaml:15: rule block-regex: condition: bad regular expression (column 29): error parsing regexp: missing closing ): ` + "`(unclosed`",
		`p.yaml:18: rule undeclared: condition: undeclared reference to 'request' (column 16)`,
	}
	if len(ps) != len(want) {
		t.Fatalf("got %d problems:\n%v", len(ps), (&LoadError{ps}).Error())
	}
	for i := range want {
		if ps[i].String() != want[i] {
			t.Errorf("problem %d\n got %s\nwant %s", i, ps[i], want[i])
		}
	}
}

func TestStructureProblems(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"yaml syntax", "rules:\n  - id: x\n   condition: [\n", "p.yaml:"},
		{"no rules", "description: nothing\n", "p.yaml: no rules"},
		{"top-level list", "- id: x\n", "p.yaml:1: expected a mapping at the top level"},
		{"unknown field", "rules:\n  - id: x\n    conditon: 'true'\n    outcome: {decision: allow}\n", `p.yaml:3: rule x: unknown field "conditon"`},
		{"missing id", "rules:\n  - outcome: {decision: allow}\n", "p.yaml:2: rule without an id"},
		{"bad id", "rules:\n  - id: 'has space'\n    outcome: {decision: allow}\n", "p.yaml:2: rule has space: invalid id"},
		{"duplicate id", "rules:\n  - id: x\n    outcome: {decision: allow}\n  - id: x\n    outcome: {decision: allow}\n", "p.yaml:4: rule x: duplicate rule id (first defined at p.yaml:2)"},
		{"missing outcome", "rules:\n  - id: x\n", "p.yaml:2: rule x: missing outcome"},
		{"unknown decision", "rules:\n  - id: x\n    outcome: {decision: deny}\n", `p.yaml:3: rule x: outcome.decision: unknown decision "deny"`},
		{"block without reason", "rules:\n  - id: x\n    outcome: {decision: block}\n", "p.yaml:3: rule x: outcome: a block decision needs a reason"},
		{"defer without retry", "rules:\n  - id: x\n    outcome: {decision: defer}\n", "p.yaml:3: rule x: outcome: a defer decision needs retry_after_ms"},
		{"modify without payload", "rules:\n  - id: x\n    outcome: {decision: modify}\n", "p.yaml:3: rule x: outcome: a modify decision needs modified_payload"},
		{"field of another decision", "rules:\n  - id: x\n    outcome: {decision: allow, retry_after_ms: 5}\n", "p.yaml:3: rule x: outcome.retry_after_ms: not used by allow decisions"},
		{"unknown event type", "rules:\n  - id: x\n    target: {event_types: [pre_actoin]}\n    outcome: {decision: allow}\n", `p.yaml:3: rule x: target.event_types: unknown event type "pre_actoin"`},
		{"bad depth", "rules:\n  - id: x\n    target: {depth: {min: 3, max: 1}}\n    outcome: {decision: allow}\n", "p.yaml:3: rule x: target.depth: min is greater than max"},
		{"bad priority", "rules:\n  - id: x\n    priority: high\n    outcome: {decision: allow}\n", "p.yaml:3: rule x: priority: expected an integer"},
		{"modify expression error", "rules:\n  - id: x\n    outcome: {decision: modify, modified_payload: 'payload +'}\n", "p.yaml:3: rule x: outcome.modified_payload: Syntax error"},
		{"test file given as policy", "cases: []\n", "p.yaml:1: this is a policy test file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := loadProblems(t, noPacks(), c.yaml)
			if !strings.HasPrefix(ps[0].String(), c.want) {
				t.Fatalf("got %v\nwant prefix %s", (&LoadError{ps}).Error(), c.want)
			}
		})
	}
}

func TestOptionProblems(t *testing.T) {
	ps := loadProblems(t, Options{Packs: map[string]bool{"nope": true}}, "rules: []\n")
	if !strings.Contains(ps[0].String(), `unknown pack "nope"`) {
		t.Fatalf("got %v", ps)
	}
	ps = loadProblems(t, Options{Packs: map[string]bool{"filesystem_scope": true}}, "rules: []\n")
	if ps[0].String() != "pack filesystem_scope needs param workspace_roots" {
		t.Fatalf("got %v", ps)
	}
	ps = loadProblems(t, Options{Packs: map[string]bool{"filesystem_scope": true},
		Params: map[string]any{"workspace_roots": "/work"}}, "rules: []\n")
	if ps[0].String() != "param workspace_roots: expected a list, got a string" {
		t.Fatalf("got %v", ps)
	}
	ps = loadProblems(t, Options{Params: map[string]any{"bad": make(chan int)}}, "rules: []\n")
	if !strings.Contains(ps[0].String(), "params") {
		t.Fatalf("got %v", ps)
	}
}

func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadFiles(dir + "/missing.yaml"); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestPacksCompile(t *testing.T) {
	opts := Options{Packs: map[string]bool{}, Params: map[string]any{"workspace_roots": []string{"/w"}}}
	for _, p := range Packs() {
		opts.Packs[p.Name] = true
		if p.Description == "" {
			t.Errorf("pack %s has no description", p.Name)
		}
	}
	set, err := Compile(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Packs()) != len(Packs()) {
		t.Fatalf("packs %v", set.Packs())
	}
	for _, id := range set.RuleIDs() {
		if !strings.Contains(id, ".") {
			t.Errorf("pack rule %s has no pack prefix", id)
		}
	}
	def, err := Compile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(def.Packs(), ","); got != "credentials,data_loss,defense_evasion,destructive_shell,exfiltration,opaque_code,persistence,privilege,process_control,remote_shell,secrets,self_protection,shared_infrastructure,system_integrity,untrusted_code" {
		t.Fatalf("default packs %s", got)
	}
}
