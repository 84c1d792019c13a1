package policy

import (
	"errors"
	"strings"
	"testing"
)

func TestExamplePoliciesPass(t *testing.T) {
	srcs, err := ReadFiles("../examples/policies/team.yaml", "../examples/policies/team_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if IsTestFile(srcs[0]) || !IsTestFile(srcs[1]) {
		t.Fatal("file kinds not recognised")
	}
	tf, err := ParseTestFile(srcs[1])
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunTests(Options{}, srcs[:1], []*TestFile{tf})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		for _, f := range r.Failures {
			t.Errorf("%s:%d: %s: %s", r.Case.File, r.Case.Line, r.Case.Name, f)
		}
	}
	if rep.Passed != len(tf.Cases) || rep.Failed != 0 || rep.Passed < 15 {
		t.Fatalf("%d passed, %d failed", rep.Passed, rep.Failed)
	}
}

func TestFailingCasesAreReported(t *testing.T) {
	policy := Source{Name: "p.yaml", Data: []byte(`
rules:
  - id: no-rm
    condition: event.command.startsWith("rm ")
    outcome: {decision: block, reason: "no rm"}
  - id: ask
    condition: event.command.startsWith("deploy")
    outcome: {decision: escalate, reason: "ask", await_approval: {timeout: 1m}}
`)}
	tests := Source{Name: "p_test.yaml", Data: []byte(`
options:
  packs: []
cases:
  - name: wrong decision
    event: {event_type: pre_action, payload: {tool_name: bash, arguments: {command: "rm x"}}}
    expect: {decision: allow}
  - name: wrong rule and reason
    event: {event_type: pre_action, payload: {tool_name: bash, arguments: {command: "rm x"}}}
    expect: {decision: block, rule: other, reason_contains: "forbidden"}
  - name: wrong approval
    event: {event_type: pre_action, payload: {tool_name: bash, arguments: {command: "deploy"}}}
    expect: {decision: escalate, approval: {timeout: 2m}}
  - name: passes
    event: {event_type: pre_action, payload: {tool_name: bash, arguments: {command: "ls"}}}
    expect: {decision: allow, matched: false}
`)}
	tf, err := ParseTestFile(tests)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunTests(Options{}, []Source{policy}, []*TestFile{tf})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed != 1 || rep.Failed != 3 {
		t.Fatalf("%d passed, %d failed", rep.Passed, rep.Failed)
	}
	want := [][]string{
		{"expected decision allow, got block (rule no-rm)"},
		{"expected rule other, got rule no-rm", `expected a reason containing "forbidden", got "no rm"`},
		{`expected approval {timeout: 2m0s, fallback: block, approver_role: ""}, got {timeout: 1m0s, fallback: block, approver_role: ""}`},
	}
	for i, w := range want {
		got := rep.Results[i].Failures
		if strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("case %d failures\n got %q\nwant %q", i, got, w)
		}
		if rep.Results[i].Case.Line != 5+3*i {
			t.Errorf("case %d line %d", i, rep.Results[i].Case.Line)
		}
	}
}

func TestTestFileOptions(t *testing.T) {
	tests := Source{Name: "t.yaml", Data: []byte(`
options:
  packs: {filesystem_scope: true, secrets: false}
  params: {workspace_roots: [/w]}
  default: block
cases:
  - name: outside
    event: {event_type: pre_action, payload: {tool_name: read, arguments: {path: /etc/passwd}}}
    expect: {decision: block, rule: filesystem_scope.outside_workspace}
  - name: inside falls to the default block
    event: {event_type: pre_action, payload: {tool_name: read, arguments: {path: /w/x}}}
    expect: {decision: block, matched: false}
  - name: destructive pack still on
    event: {event_type: pre_action, payload: {tool_name: bash, arguments: {command: "rm -rf ~"}}}
    expect: {decision: block, rule: destructive_shell.rm_root_or_home}
`)}
	tf, err := ParseTestFile(tests)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunTests(Options{}, nil, []*TestFile{tf})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 0 {
		t.Fatalf("failures: %+v", rep.Results)
	}
	// A policy that does not compile is an error, not a failed case.
	_, err = RunTests(Options{}, []Source{{Name: "bad.yaml", Data: []byte("rules: 3\n")}}, []*TestFile{tf})
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("got %v", err)
	}
}

func TestTestFileProblems(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"cases: {}\n", "t.yaml:1: cases: expected a list"},
		{"options: {}\n", "t.yaml:1: no cases"},
		{"cases:\n  - name: a\n    expect: {decision: allow}\n", "t.yaml:2: a: missing event"},
		{"cases:\n  - name: a\n    event: {event_type: nope}\n    expect: {decision: allow}\n", `t.yaml:3: a: event: event_type: unknown event type "nope"`},
		{"cases:\n  - name: a\n    event: {event_type: pre_action}\n    expect: {decision: deny}\n", `t.yaml:4: a: expect.decision: unknown decision "deny"`},
		{"cases:\n  - name: a\n    event: {event_type: pre_action}\n    expect: {decision: allow, rules: x}\n", `t.yaml:4: unknown field "rules"`},
		{"cases:\n  - name: a\n    event: {event_type: pre_action}\n", "t.yaml:2: a: missing expect"},
	}
	for _, c := range cases {
		_, err := ParseTestFile(Source{Name: "t.yaml", Data: []byte(c.yaml)})
		var le *LoadError
		if !errors.As(err, &le) || !strings.HasPrefix(le.Problems[0].String(), c.want) {
			t.Errorf("%q: got %v, want %s", c.yaml, err, c.want)
		}
	}
}
