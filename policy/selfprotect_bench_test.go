package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cel.dev/cel-go/common/types"
)

// BenchmarkSelfProtectionScript10KB is the self_protection pack's share of
// BenchmarkEvaluateScript10KB: its five checks and its limit, on the
// effects of the 10 KB build script already read (the effect analysis and
// the other packs are not in it), with the guard ahp serve gives it.
func BenchmarkSelfProtectionScript10KB(b *testing.B) {
	benchSelfProtectionScript(b, string(benchScriptEvent().Payload))
}

// BenchmarkSelfProtectionScript10KBRealCwd is BenchmarkSelfProtectionScript10KB
// with the script run in a project that exists on this machine (its
// directories, sources and outputs made), so that the paths it names are
// resolved through the file system rather than found missing at once.
func BenchmarkSelfProtectionScript10KBRealCwd(b *testing.B) {
	proj, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range []string{"cmd/api", "cmd/worker", "cmd/cli", "docs", "build", "dist/bin", "dist/docs"} {
		if err := os.MkdirAll(filepath.Join(proj, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for _, f := range []string{"go.mod", "docs/index.md.in", "release.log", "cmd/api/main.go", "dist/bin/api"} {
		if err := os.WriteFile(filepath.Join(proj, f), []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchSelfProtectionScript(b, strings.ReplaceAll(string(benchScriptEvent().Payload), `"cwd":"/work/proj"`, `"cwd":"`+proj+`"`))
}

func benchSelfProtectionScript(b *testing.B, src string) {
	opts := serveOptions(b)
	set, err := Compile(opts)
	if err != nil {
		b.Fatal(err)
	}
	if !strings.Contains(src, `"cwd":"/`) {
		b.Fatal("the script event has no working directory")
	}
	payload := (*objArena)(nil).newObject(src)
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
