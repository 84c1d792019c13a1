package effects

import (
	"regexp"
	"testing"
)

// shInterpreterRE is the expression shInterpreter spells out.
var shInterpreterRE = regexp.MustCompile(`^(python|pypy|node|nodejs|perl|ruby|php|deno|bun)([0-9][0-9.]*)?$`)

func TestShellInterpreterIsTheExpression(t *testing.T) {
	names := []string{"python", "python3", "python3.12", "python3.", "python.3", "pythonx", "py", "pypy3", "node", "nodejs",
		"node18", "nodejs20.1", "perl5.36", "ruby", "php8", "deno", "bun", "bun1.1", "bash", "sh", "", "3", "python3a",
		"xpython", "perl6x", "ruby..", "php-fpm", "node-18", "Python3", "python33.1.2.3"}
	for _, n := range names {
		want := ""
		if m := shInterpreterRE.FindStringSubmatch(n); m != nil {
			want = m[1]
		}
		if got := shInterpreter(n); got != want {
			t.Errorf("%q: %q, the expression gives %q", n, got, want)
		}
	}
}

func FuzzShellInterpreter(f *testing.F) {
	f.Add("python3.12")
	f.Add("nodejs")
	f.Fuzz(func(t *testing.T, n string) {
		want := ""
		if m := shInterpreterRE.FindStringSubmatch(n); m != nil {
			want = m[1]
		}
		if got := shInterpreter(n); got != want {
			t.Errorf("%q: %q, the expression gives %q", n, got, want)
		}
	})
}
