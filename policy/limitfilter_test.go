package policy

import (
	"strings"
	"testing"

	"github.com/ahp-go/ahp/effects"
)

// TestLimitFilter: every self_protection.limit_* rule of the default packs
// is marked as needing a limit, no other rule of theirs is, and a condition
// that is true when no limit was reached (== "", !=, ||) is never marked.
func TestLimitFilter(t *testing.T) {
	f := newSPFixture(t)
	set, err := Compile(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	marked := 0
	for _, r := range set.rules {
		want := strings.HasPrefix(r.id, "self_protection.limit_")
		if r.limit != want {
			t.Errorf("%s: limit filter %v, want %v", r.id, r.limit, want)
		}
		if r.limit {
			marked++
		}
	}
	if marked < 9 {
		t.Errorf("only %d limit rules marked", marked)
	}
	for cond, want := range map[string]bool{
		`self_protection_limit(payload, config) == "size"`:                                   true,
		`"paths" == self_protection_limit(payload, config)`:                                  true,
		`event.tool == "Bash" && self_protection_limit(payload, config) == "nesting"`:        true,
		`self_protection_limit(payload, config) == ""`:                                       false,
		`self_protection_limit(payload, config) != "size"`:                                   false,
		`self_protection_limit(payload, config) == "size" || event.tool == "Bash"`:           false,
		`!(self_protection_limit(payload, config) == "size")`:                                false,
		`self_protection_limit(payload.tool_input, config) == "size"`:                        false,
		`[payload].exists(p, self_protection_limit(p, config) == "size")`:                    false,
		`self_protection_limit(payload, config) == "size" ? false : true`:                    false,
		`event.effects.exists(e, e.kind == "run") && touches_harness_files(payload, config)`: false,
	} {
		set, err := Compile(f.opts, Source{Name: "t.yaml", Data: []byte("rules:\n  - id: t.rule\n    condition: '" +
			strings.ReplaceAll(cond, "'", "''") + "'\n    outcome: {decision: block, reason: x}\n")})
		if err != nil {
			t.Fatalf("%s: %v", cond, err)
		}
		var got *rule
		for _, r := range set.rules {
			if r.id == "t.rule" {
				got = r
			}
		}
		if got == nil {
			t.Fatalf("%s: rule not compiled", cond)
		}
		if got.limit != want {
			t.Errorf("%s: marked %v, want %v", cond, got.limit, want)
		}
	}
}

// TestLimitFilterChangesNoDecision: with the limit filter, events that
// reach each limit and ordinary ones get the decision they get when every
// rule's CEL runs.
func TestLimitFilterChangesNoDecision(t *testing.T) {
	f := newSPFixture(t)
	set, err := Compile(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	cmds := []string{
		"ls -la /workspace/project", "cat ahp-data/admin.token", "git status", "rm -rf ahp-data",
		"echo " + strings.Repeat("a", effects.MaxInput),
		strings.Repeat("true;", effects.MaxEffects),
		strings.Repeat("eval ", effects.MaxDepth+1) + "true",
		strings.Repeat("echo dHJ1ZQ== | base64 -d | sh; ", effects.MaxDecodeRounds+1),
		"echo {1..300}",
		"cat " + strings.Repeat("d/", spMaxPathDepth+1) + "x",
		"echo " + strings.Repeat("a:1,", spMaxAddrs+1),
	}
	defer func() { noKindFilter = false }()
	limits := 0
	for _, c := range cmds {
		noKindFilter = false
		a := set.Evaluate(f.sh(c))
		noKindFilter = true
		b := set.Evaluate(f.sh(c))
		if a.RuleID != b.RuleID || a.Decision.Kind != b.Decision.Kind {
			t.Errorf("%.40q: filtered %s/%s, unfiltered %s/%s", c, a.Decision.Kind, a.RuleID, b.Decision.Kind, b.RuleID)
		}
		if strings.HasPrefix(a.RuleID, "self_protection.limit_") {
			limits++
		}
	}
	if limits < 6 {
		t.Errorf("only %d of the commands reached a limit", limits)
	}
}
