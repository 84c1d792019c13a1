package policy

import (
	"testing"
)

// A pattern that is not a constant (a parameter, a payload field) is
// compiled once and kept; a different pattern on the next call is compiled
// afresh, so every call matches against its own pattern, and a bad one
// is an error, never a silent false.
func TestMatchesWithAPatternKnownWhenTheRuleRuns(t *testing.T) {
	set := mustCompile(t, noPacks(), `rules:
  - id: dyn
    target: {event_types: [pre_action]}
    condition: payload.arguments.command.matches(payload.arguments.pattern)
    outcome: {decision: block, reason: matched}
`)
	cases := []struct {
		cmd, pattern string
		match        bool
	}{
		{"mkfs.ext4 /dev/sdb1", `^mkfs(\..+)?`, true},
		{"mkfs.ext4 /dev/sdb1", `^mkfs(\..+)?`, true},
		{"ls -la", `^mkfs(\..+)?`, false},
		{"ls -la", `^ls\b`, true},
		{"mkfs.ext4 /dev/sdb1", `^ls\b`, false},
		{"MKFS", `(?i)^mkfs`, true},
		{"abc", `b`, true},
		{"abc", `^b`, false},
	}
	for _, c := range cases {
		r := set.Evaluate(in(action("bash", map[string]any{"command": c.cmd, "pattern": c.pattern})))
		if got := r.RuleID == "dyn"; got != c.match {
			t.Errorf("%q matches %q: got %v (%s %s), want %v", c.cmd, c.pattern, got, r.RuleID, r.Decision.Kind, c.match)
		}
	}
	bad := set.Evaluate(in(action("bash", map[string]any{"command": "x", "pattern": "(unclosed"})))
	if bad.Err == nil {
		t.Errorf("a bad pattern was read as a plain non-match: %+v", bad)
	}
}
