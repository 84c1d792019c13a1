package policy

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/effects"
)

// TestKindFilterChangesNoDecision: skipping the rules whose effect kinds
// or programs an action lacks gives the same decision as evaluating every
// rule, over the bench/guard corpus (risky and ordinary shell actions).
func TestKindFilterChangesNoDecision(t *testing.T) {
	set, err := Compile(Options{Agent: effects.Context{Home: "/home/ann"}})
	if err != nil {
		t.Fatal(err)
	}
	filtered := 0
	for _, r := range set.rules {
		if r.kinds != 0 || r.need != nil {
			filtered++
		}
	}
	if filtered < len(set.rules)/2 {
		t.Errorf("only %d of %d rules have a filter", filtered, len(set.rules))
	}
	var cmds []string
	files, _ := filepath.Glob("../bench/guard/corpus/*/*.txt")
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "sh ") {
				cmds = append(cmds, strings.TrimPrefix(line, "sh "))
			}
		}
		fh.Close()
	}
	if len(cmds) < 100 {
		t.Fatalf("only %d corpus commands read", len(cmds))
	}
	defer func() { noKindFilter = false }()
	for _, c := range cmds {
		noKindFilter = false
		a := set.Evaluate(inCwd(c))
		noKindFilter = true
		b := set.Evaluate(inCwd(c))
		if a.RuleID != b.RuleID || a.Decision.Kind != b.Decision.Kind {
			t.Errorf("%q: filtered %s/%s, unfiltered %s/%s", c, a.Decision.Kind, a.RuleID, b.Decision.Kind, b.RuleID)
		}
	}
}
