package policy

import (
	"testing"

	"cel.dev/cel-go/common/types"
)

// BenchmarkSelfProtectionScript10KB is the self_protection pack's share of
// BenchmarkEvaluateScript10KB: its five checks and its limit, on the
// effects of the 10 KB build script already read (the effect analysis and
// the other packs are not in it), with the guard ahp serve gives it.
func BenchmarkSelfProtectionScript10KB(b *testing.B) {
	opts := serveOptions(b)
	set, err := Compile(opts)
	if err != nil {
		b.Fatal(err)
	}
	payload := (*objArena)(nil).newObject(string(benchScriptEvent().Payload))
	acts := payloadEffects(payload, set.agent)
	g := parseGuard(types.DefaultTypeAdapter.NativeToValue(opts.Params))
	if len(g.paths) < 4 || len(g.admin) != 1 {
		b.Fatalf("the guard was not read: %d paths, %d addresses", len(g.paths), len(g.admin))
	}
	b.ReportAllocs()
	start, ok := processCPU()
	n := 0
	for b.Loop() {
		a := &spAction{g: g, cwd: g.cwd, acts: acts}
		a.toolContext(payload)
		if lim := a.limitReached(); lim != "" || a.results != [spChecks]int8{1, 1, 1, 1, 1} {
			b.Fatalf("the ordinary script was judged: limit %q, checks %v", lim, a.results)
		}
		n++
	}
	if end, ok2 := processCPU(); ok && ok2 && n > 0 {
		b.ReportMetric(float64(end-start)/float64(n), "cpu-ns/op")
	}
}
