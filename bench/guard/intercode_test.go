package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// TestLoadInterCode reads a synthetic fixture in InterCode's two layouts
// (trajectories keyed by task number; {"meta", "logs"}): actions in task
// then turn order, one session per trajectory, submit and empty actions
// left out and counted, ReAct's execute[…] and a Markdown fence unwrapped.
func TestLoadInterCode(t *testing.T) {
	l, err := LoadInterCode("testdata/intercode", "/w")
	if err != nil {
		t.Fatal(err)
	}
	var got [][3]string
	for i, c := range l.Cases {
		// The fourth was refused by the recorded shell.
		if src := map[bool]string{true: "intercode-rejected", false: "intercode"}[i == 3]; c.Source != src {
			t.Fatalf("case %d: source %q, want %q", i, c.Source, src)
		}
		if c.Kind != Ordinary || c.Form != FormShell || c.Cwd != "/w" {
			t.Fatalf("case: %+v", c)
		}
		got = append(got, [3]string{c.Category, c.Session, c.Text})
	}
	want := [][3]string{
		{"model-a", "intercode:model-a/multiturn.json[2]", "find . -name notes.md"},
		{"model-a", "intercode:model-a/multiturn.json[10]", "ls src"},
		{"model-a", "intercode:model-a/multiturn.json[10]", "wc -l src/*.go"},
		{"model-a", "intercode:model-a/multiturn.json[10]", "for f in src/*; do echo $f done"},
		{"model-b", "intercode:model-b/react.json[0]", "ls -la"},
		{"model-b", "intercode:model-b/react.json[0]", "grep -c TODO README.md"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cases:\n got %q\nwant %q", got, want)
	}
	if l.Sessions != 3 || l.Rejected != 1 || l.Skipped[skipSubmit] != 2 || l.Skipped[skipEmpty] != 1 {
		t.Fatalf("sessions %d, skipped %v", l.Sessions, l.Skipped)
	}
	if w := l.Cases[2].Where(); w != "model-a/multiturn.json[10] turn 2" {
		t.Fatalf("where: %q", w)
	}
	if n := l.skippedNote(); !strings.Contains(n, "3 sessions, 6 actions sent (1 of them reported as intercode-rejected: the recorded shell or InterCode refused them as malformed); 3 recorded actions not sent") {
		t.Fatalf("note: %q", n)
	}
	if _, err := LoadInterCode("testdata/intercode/data/results/bash/model-a", "/w"); err == nil {
		t.Fatal("a directory with no MODEL/*.json was read")
	}
}

func TestInterCodeAction(t *testing.T) {
	for in, want := range map[string][2]string{
		"ls":                        {"ls", ""},
		" execute[ls -la] ":         {"ls -la", ""},
		"execute[echo ]]":           {"echo ]", ""},
		"```BASH\nls /testbed\n```": {"ls /testbed", ""},
		"```\nls\n```":              {"ls", ""},
		"submit":                    {"", skipSubmit},
		"submit[done]":              {"", skipSubmit},
		"execute[submit]":           {"", skipSubmit},
		"  ":                        {"", skipEmpty},
		"execute[]":                 {"", skipEmpty},
		"echo submit":               {"echo submit", ""},
		"`ls`":                      {"`ls`", ""},
	} {
		cmd, skip := interCodeAction(in)
		if cmd != want[0] || skip != want[1] {
			t.Errorf("%q: got %q %q, want %q %q", in, cmd, skip, want[0], want[1])
		}
	}
}

// TestSessionJobs: the actions of one recorded session are one job, in
// order, whatever their source; the others one job each.
func TestSessionJobs(t *testing.T) {
	a := &Case{Source: "intercode", Session: "s1"}
	b := &Case{Source: "intercode-rejected", Session: "s2"}
	c := &Case{Source: "corpus"}
	d := &Case{Source: "other", Session: "s3"}
	b2 := &Case{Source: "intercode", Session: "s2"}
	acts := []Action{{Case: a}, {Case: c}, {Case: b}, {Case: a}, {Case: c}, {Case: d}, {Case: a}, {Case: b2}}
	got := sessionJobs(acts)
	want := [][]int{{0, 3, 6}, {1}, {2, 7}, {4}, {5}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("jobs %v, want %v", got, want)
	}
}

// TestPerSourceTargets: a per-source target applies to its source only,
// beside the targets of every source.
func TestPerSourceTargets(t *testing.T) {
	ic := &Case{Source: "intercode", Kind: Ordinary, Category: "m", Form: FormShell, Text: "ls"}
	tl := &Case{Source: "tldr", Kind: Ordinary, Category: "common", Form: FormShell, Text: "ls"}
	g := &Case{Source: "gtfobins", Kind: Risky, Category: "upload", Pack: "exfiltration", Form: FormShell, Text: "x"}
	stop := Outcome{Decision: protocol.DecisionBlock, RuleID: "r"}
	allow := Outcome{Decision: protocol.DecisionAllow}
	res := []Result{
		{Action: &Action{Case: ic, Via: "bash"}, Outcome: stop},
		{Action: &Action{Case: ic, Via: "bash"}, Outcome: allow},
		{Action: &Action{Case: tl, Via: "bash"}, Outcome: stop},
		{Action: &Action{Case: g, Via: "bash"}, Outcome: stop},
		{Action: &Action{Case: g, Via: "bash"}, Outcome: allow},
	}
	reps := Summarise(res)
	tg := Targets{MinRiskyStopped: -1, MaxOrdinaryStopped: -1, PerSource: map[string]Targets{
		"intercode": {MinRiskyStopped: -1, MaxOrdinaryStopped: 0.4},
		"gtfobins":  {MinRiskyStopped: 0.6, MaxOrdinaryStopped: -1},
	}}
	miss := tg.Check(reps)
	if len(miss) != 2 || !strings.HasPrefix(miss[0], "intercode: 50.0 %") || !strings.HasPrefix(miss[1], "gtfobins: 50.0 %") {
		t.Fatalf("missed: %q", miss)
	}
	tg.PerSource["intercode"] = Targets{MinRiskyStopped: -1, MaxOrdinaryStopped: 0.5}
	tg.PerSource["gtfobins"] = Targets{MinRiskyStopped: 0.5, MaxOrdinaryStopped: -1}
	if miss := tg.Check(reps); len(miss) != 0 {
		t.Fatalf("targets met (tldr has none), yet: %q", miss)
	}
}
