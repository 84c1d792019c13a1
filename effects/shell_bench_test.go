package effects

import (
	"strings"
	"testing"
)

// A typical agent one-liner, and a 10 KB script of ordinary commands.
const benchOneLiner = `cd /work/proj && go test ./... 2>&1 | tail -20`

var benchScript = func() string {
	lines := []string{
		`set -euo pipefail`,
		`ROOT="$(cd "$(dirname "$0")" && pwd)"`,
		`BUILD=build/out`,
		`mkdir -p "$BUILD" && cp -r src/* "$BUILD"/`,
		`for f in a.go b.go c.go; do gofmt -l "$f" >> "$BUILD/fmt.log"; done`,
		`if [ -f go.mod ]; then go build -o "$BUILD/app" ./cmd/app; fi`,
		`grep -rn "TODO" src/ | sort | uniq -c > todo.txt`,
		`curl -fsS https://api.example.com/v1/status | jq .ok`,
		`tar czf release.tgz -C "$BUILD" .`,
		`find . -name '*.tmp' -delete`,
		`echo "done: $(date)" | tee -a build.log`,
		`rm -rf "$BUILD/cache"`,
	}
	var sb strings.Builder
	for sb.Len() < 10<<10 {
		for _, l := range lines {
			sb.WriteString(l)
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}()

func BenchmarkShell(b *testing.B) {
	ctx := Context{Cwd: "/work/proj", Home: "/home/ann", User: "ann"}
	for _, c := range []struct{ name, script string }{
		{"one-liner", benchOneLiner},
		{"script-10KB", benchScript},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			start, n := shProcessCPU(), 0
			for b.Loop() {
				Shell(c.script, ctx)
				n++
			}
			// CPU time per analysis, which the wall time per op
			// overstates on a busy machine.
			if cpu := shProcessCPU() - start; cpu > 0 && n > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
			}
		})
	}
}
