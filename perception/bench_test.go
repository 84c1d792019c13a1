package perception

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// benchWorkspace returns a root with 1,000 Go-like files of about 2 KiB in
// 50 directories; one in a hundred defines a LedgerEntry.
func benchWorkspace(b *testing.B) string {
	b.Helper()
	files := map[string]string{"go.mod": "module example.com/big\n", "README.md": "# big\n"}
	body := strings.Repeat("\t// some ordinary code that matches nothing in particular\n\tx := compute(a, b)\n", 20)
	for i := range 1000 {
		extra := ""
		if i%100 == 0 {
			extra = "\n// LedgerEntry is one booking.\ntype LedgerEntry struct{ Amount int }\n"
		}
		files[fmt.Sprintf("pkg%02d/file%04d.go", i%50, i)] = fmt.Sprintf("package pkg%02d\n\nfunc f%d() {\n%s}\n%s", i%50, i, body, extra)
	}
	return workspace(b, files)
}

func BenchmarkPerceive1000Files(b *testing.B) {
	root := benchWorkspace(b)
	p := newPerceiver(b, Options{WorkspaceRoots: []string{root}})
	for _, c := range []struct{ name, target string }{
		{"entity", `{"entity":{"name":"LedgerEntry","entity_type":"type","identifier":null}}`},
		{"regex", `{"pattern":{"pattern":"type\\s+Ledger\\w+\\s+struct","pattern_type":"regex"}}`},
		{"location", `{"location":{"path":"pkg07/file0007.go","location_type":"file"}}`},
	} {
		pl := event(b, `{"session_id":"s","intent":"locate","target":`+c.target+`,"context":{"workspace":"`+root+`"}}`)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d, err := p.Perceive(context.Background(), pl)
				if err != nil || len(d.InjectedContext.FileContents) == 0 {
					b.Fatalf("err %v, %d snippets", err, len(d.InjectedContext.FileContents))
				}
			}
		})
	}
}
