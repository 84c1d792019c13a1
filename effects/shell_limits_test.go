package effects

import (
	"strings"
	"testing"
)

// Every limit of the analysis yields an Unknown with Limit set.
func TestShellLimits(t *testing.T) {
	ctx := Context{Cwd: "/work/proj", Home: "/home/ann"}
	nest := func(n int) string {
		s := "rm -rf /deep"
		for i := 0; i < n; i++ {
			s = "sh -c " + "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
		return s
	}
	cases := []struct {
		name   string
		script string
		want   []Effect
	}{
		{"MaxInput", "echo " + strings.Repeat("a", MaxInput), nil},
		{"MaxDepth", nest(MaxDepth + 1), nil},
		{"MaxDecodeRounds", `echo VjFSSmQyUXhiM2RsUm14VVlsUkdTMVZZY0c1UFVUMDk= | base64 -d | base64 -d | base64 -d | base64 -d | base64 -d | sh`, nil},
		{"MaxEffects", strings.Repeat("rm a; ", MaxEffects), []Effect{eDel("/work/proj/a")}},
		{"MaxGlobMatches (braces)", `rm /x{1..300}`, []Effect{eDel("/x1")}},
		{"function depth", `f() { f; }; f`, nil},
		{"work budget", `f(){ f;f;f;f;f;f;f;f; }; f`, nil},
		{"variable length", `X=aaaaaaaaaaaaaaaa` + strings.Repeat("; X=$X$X", 16) + `; rm $X`, nil},
		{"printf width", `printf '%999999999d' 1`, nil},
		{"for items", `for f in $(echo 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17); do rm $f; done`, nil},
		{"xargs items", `echo 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 | xargs -n1 rm`, []Effect{eDel("/work/proj/1")}},
	}
	for _, c := range cases {
		got := Shell(c.script, ctx)
		if !shHasEffect(got, eLimit()) {
			t.Errorf("%s: no limit Unknown; got:%s", c.name, shDumpEffects(got[:min(len(got), 10)]))
		}
		if len(got) > MaxEffects {
			t.Errorf("%s: %d effects, more than MaxEffects", c.name, len(got))
		}
		for _, w := range c.want {
			if !shHasEffect(got, w) {
				t.Errorf("%s: missing %+v", c.name, w)
			}
		}
	}
	// One level less than MaxDepth is still read.
	if got := Shell(nest(MaxDepth-1), ctx); !shHasEffect(got, eDelR("/deep")) || shHasEffect(got, eLimit()) {
		t.Errorf("nesting of %d levels not read:%s", MaxDepth-1, shDumpEffects(got))
	}
}

// The reader is used by concurrent requests: shared parsers, printers and
// option tables must not race (run with -race).
func TestShellConcurrent(t *testing.T) {
	ctx := Context{Cwd: "/work/proj", Home: "/home/ann"}
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			for _, c := range shellTable[:200] {
				Shell(c.cmd, ctx)
			}
			done <- true
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}
