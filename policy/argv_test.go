package policy

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// argvWords parses joinArgv(argv) back with a real shell parser
// (mvdan.cc/sh, as package effects reads commands) and returns the words
// of its simple commands after quote removal.
func argvWords(argv []string) []string {
	f, err := syntax.NewParser().Parse(strings.NewReader(joinArgv(argv)), "")
	if err != nil {
		return []string{"<parse error: " + err.Error() + ">"}
	}
	var out []string
	for i, st := range f.Stmts {
		if i > 0 {
			out = append(out, "<next command>")
		}
		call, ok := st.Cmd.(*syntax.CallExpr)
		if !ok {
			out = append(out, "<not a simple command>")
			continue
		}
		word := func(w *syntax.Word) string {
			if w == nil {
				return ""
			}
			fs, err := expand.Fields(nil, w)
			if err != nil || len(fs) != 1 {
				return fmt.Sprintf("<%d fields, %v>", len(fs), err)
			}
			return fs[0]
		}
		for _, as := range call.Assigns {
			out = append(out, as.Name.Value+"="+word(as.Value))
		}
		for _, w := range call.Args {
			out = append(out, word(w))
		}
	}
	return out
}

func TestJoinArgvReadsBackTheSameWords(t *testing.T) {
	cases := [][]string{
		{"cat", "it's", "/etc/ahp/ahp.yaml"},
		{"rm", "-rf", `"`, "/var/lib/ahp"},
		{"echo", "a b", "", "c"},
		{"sh", "-c", "cat /etc/passwd; rm -rf /"},
		{"printf", `%s\n`, "$HOME", "`id`", "$(id)", "a|b", "a&b", "x>y", "#c", "~", "*"},
		{"echo", "'", "''", `\'`, `'\''`, "\n", "tab\there", "é"},
		{"a=b", "--opt=v", "user@host:path", "a,b+c^d%e"},
		{""},
	}
	for _, argv := range cases {
		if got := argvWords(argv); strings.Join(got, "\x00") != strings.Join(argv, "\x00") {
			t.Errorf("joinArgv(%q) = %q reads back as %q", argv, joinArgv(argv), got)
		}
	}
	// Random elements over the characters a shell treats specially.
	const alphabet = "ab /'\"\\$`;&|()<>*?~#!\n\t={}[]-."
	r := rand.New(rand.NewSource(1))
	for range 2000 {
		argv := make([]string, 1+r.Intn(4))
		for i := range argv {
			b := make([]byte, r.Intn(6))
			for j := range b {
				b[j] = alphabet[r.Intn(len(alphabet))]
			}
			argv[i] = string(b)
		}
		if got := argvWords(argv); strings.Join(got, "\x00") != strings.Join(argv, "\x00") {
			t.Fatalf("joinArgv(%q) = %q reads back as %q", argv, joinArgv(argv), got)
		}
	}
}

func TestJoinArgvKeepsPlainWordsBare(t *testing.T) {
	for argv, want := range map[string]string{
		"rm -rf /":                          "rm -rf /",
		"go test ./... -run=TestX -count=1": "go test ./... -run=TestX -count=1",
		"git commit -m it's":                `git commit -m 'it'\''s'`,
		"ls ~":                              "ls '~'",
	} {
		if got := joinArgv(strings.Fields(argv)); got != want {
			t.Errorf("joinArgv(%q) = %q, want %q", strings.Fields(argv), got, want)
		}
	}
	if got := joinArgv([]string{"echo", ""}); got != "echo ''" {
		t.Errorf("empty element: %q", got)
	}
}

func TestArgvCommandText(t *testing.T) {
	set := mustCompile(t, noPacks(), `
rules:
  - id: rm-rf
    target: {event_types: [pre_action]}
    condition: event.command.contains("rm -rf")
    outcome: {decision: block, reason: no}
  - id: words
    target: {event_types: [pre_action]}
    condition: shell_command(payload) == "echo 'a b' '' 'it'\\''s'"
    outcome: {decision: block, reason: words}
`)
	for _, c := range []struct {
		args map[string]any
		rule string
	}{
		{map[string]any{"command": []string{"rm", "-rf", "/"}}, "rm-rf"},
		{map[string]any{"cmd": []string{"rm", "-rf", "build"}}, "rm-rf"},
		{map[string]any{"command": []string{"echo", "a b", "", "it's"}}, "words"},
		{map[string]any{"command": []string{"rm", "-r", "-f", "x"}}, ""},
	} {
		r := eval(set, action("exec", c.args))
		if r.RuleID != c.rule {
			t.Errorf("%v: got rule %q, want %q", c.args, r.RuleID, c.rule)
		}
	}
	// A "commands" list holds scripts: they are joined with newlines, not quoted.
	if got := shellCommandOf(t, `{"commands":["cd /tmp","rm -rf x"]}`); got != "cd /tmp\nrm -rf x" {
		t.Errorf("commands list: %q", got)
	}
}

// shellCommandOf decodes a JSON payload and returns shellCommand of it.
func shellCommandOf(t *testing.T, payload string) string {
	t.Helper()
	return shellCommand(decodeValue(payload, 0, nil))
}

// TestArgvQuotesDoNotHideWords: a quote inside an argv element is data to
// exec; read as shell it used to open a quote that hid the later words
// from self_protection and network_egress.
func TestArgvQuotesDoNotHideWords(t *testing.T) {
	f := newSPFixture(t)
	cfg := filepath.Join(f.root, "etc", "ahp.yaml")
	data := filepath.Join(f.proj, "ahp-data")
	const files = "self_protection.harness_files"
	cases := []packCase{
		{"argv cat config", f.tool("shell", map[string]any{"command": []string{"cat", cfg}}), files},
		{"argv apostrophe then config", f.tool("shell", map[string]any{"command": []string{"cat", "it's", cfg}}), files},
		{"argv lone double quote then rm data", f.tool("shell", map[string]any{"command": []string{"rm", "-rf", `"`, data}}), files},
		{"argv backslash then config", f.tool("shell", map[string]any{"command": []string{"cat", `x\`, cfg}}), files},
		{"argv bash -lc script", f.tool("shell", map[string]any{"command": []string{"bash", "-lc", "echo \"it's\"; cat " + cfg}}), files},
		{"argv quoted word is one path", f.tool("shell", map[string]any{"command": []string{"cat", "notes " + cfg}}), ""},
		{"argv harmless", f.tool("shell", map[string]any{"command": []string{"cat", "it's", "README.md"}}), ""},
	}
	runPackCases(t, f.opts, cases)

	// The same with every default pack on, as ahp serve runs them.
	opts := Options{Params: f.opts.Params}
	runPackCases(t, opts, cases[1:3])

	egress := only("network_egress")
	egress.Params = map[string]any{"allowed_hosts": []string{"github.com"}}
	runPackCases(t, egress, []packCase{
		{"argv apostrophe then url", in(action("exec", map[string]any{"command": []string{"curl", "it's", "https://evil.example/x"}})), "network_egress.host_not_allowed"},
		{"argv allowed url", in(action("exec", map[string]any{"command": []string{"curl", "it's", "https://github.com/x"}})), ""},
	})
}
