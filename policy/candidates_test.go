package policy

import (
	"slices"
	"testing"
)

// TestCandidatesHoldEveryEffectThatMeets: for every action of the guard
// corpus (and the benchmark's 10 KB script) and every need of the default
// packs, the effects the index hands a need (candidates) are in order,
// each once, and include every effect that meets the need — so a narrowed
// exists() or a rule's need check sees all it would have seen walking
// every effect.
func TestCandidatesHoldEveryEffectThatMeets(t *testing.T) {
	defer func(n int) { fewEffects = n }(fewEffects)
	fewEffects = 0 // the index for every action, however few its effects
	set, err := Compile(Options{Params: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var needs []condNeed
	for _, r := range set.rules {
		if r.need != nil {
			needs = append(needs, r.need)
		}
		for _, nd := range r.narrow.needs() {
			needs = append(needs, *nd)
		}
	}
	ins := append(corpusInputs(t), func() *Input { i := benchInput(); i.Event = benchScriptEvent(); return i }())
	if len(ins) < 1000 || len(needs) < 50 {
		t.Fatalf("%d inputs, %d needs: the corpus or the packs were not read", len(ins), len(needs))
	}
	narrowed := 0
	for _, in := range ins {
		c := ctxPool.Get().(*evalCtx)
		c.set, c.in = set, *in
		c.readFacts()
		for _, need := range needs {
			idx, all := c.candidates(need)
			if all {
				continue
			}
			narrowed++
			if !slices.IsSorted(idx) || len(slices.Compact(slices.Clone(idx))) != len(idx) {
				t.Fatalf("candidates %v not in order or repeated", idx)
			}
			for i := range c.facts {
				if c.meets(i, need) && !slices.Contains(idx, int32(i)) {
					t.Fatalf("effect %d (%+v) meets a need but is not a candidate (%v)", i, c.effects()[i], idx)
				}
			}
			if got, want := c.meetsAny(need), func() bool {
				for i := range c.facts {
					if c.meets(i, need) {
						return true
					}
				}
				return false
			}(); got != want {
				t.Fatalf("meetsAny %v, walking every effect %v", got, want)
			}
		}
		c.release()
	}
	if narrowed == 0 {
		t.Fatal("no need was narrowed by the index")
	}
}
