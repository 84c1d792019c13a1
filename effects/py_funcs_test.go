package effects

import (
	"fmt"
	"strings"
	"testing"
)

// TestLocalCallBounds: calls of local functions nested deeper, or more of
// them, than the readers follow are an analysis limit (held), never let
// through as read.
func TestLocalCallBounds(t *testing.T) {
	withShellProbe(t)
	chain := func(lang string, n int) string {
		var b strings.Builder
		switch lang {
		case "python":
			b.WriteString("import os\ndef f0(c): os.system(c)\n")
			for i := 1; i < n; i++ {
				fmt.Fprintf(&b, "def f%d(c): f%d(c)\n", i, i-1)
			}
			fmt.Fprintf(&b, "f%d(\"rm -rf ~\")\n", n-1)
		case "node":
			b.WriteString("function f0(c) { require('child_process').execSync(c) }\n")
			for i := 1; i < n; i++ {
				fmt.Fprintf(&b, "function f%d(c) { f%d(c) }\n", i, i-1)
			}
			fmt.Fprintf(&b, "f%d(\"rm -rf ~\")\n", n-1)
		}
		return b.String()
	}
	wide := func(n int) string {
		var b strings.Builder
		b.WriteString("import os\ndef f0(c): os.system(c)\n")
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, "def f%d(c):\n    f%d(c)\n    f%d(c)\n", i, i-1, i-1)
		}
		fmt.Fprintf(&b, "f%d(\"ls\")\n", n-1)
		return b.String()
	}
	cases := []struct {
		lang, code string
		limit      bool
	}{
		{"python", chain("python", 10), false},
		{"python", chain("python", pyMaxCallDepth+2), true},
		{"python", wide(10), true}, // 2^9 calls
		{"node", chain("node", 5), false},
		{"node", chain("node", scMaxCallDepth+2), true},
	}
	for i, c := range cases {
		if c.lang == "python" && !pythonParsed() {
			continue // one opaque Unknown without cgo (TestCodeTable)
		}
		got := Code(c.lang, c.code, testCtx)
		limit, ran := false, false
		for _, e := range got {
			limit = limit || e.Kind == Unknown && e.Limit
			ran = ran || e.Kind == Run && strings.Join(e.Argv, " ") == "rm -rf ~"
		}
		if limit != c.limit {
			t.Errorf("#%d %s: limit %v, want %v (%d effects)", i, c.lang, limit, c.limit, len(got))
		}
		if !c.limit && !ran && strings.Contains(c.code, "rm -rf ~") {
			t.Errorf("#%d %s: rm -rf ~ not read through the calls", i, c.lang)
		}
	}
}
