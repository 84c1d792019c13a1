package admincmd

import (
	"strings"
	"testing"
	"time"
)

var names = []string{"ahp", "ahp-hook", "ahp-linux-amd64"}

func TestFind(t *testing.T) {
	for cmd, want := range map[string]string{
		// The table.
		"ahp --admin http://127.0.0.1:07700 approvals approve 1": "approvals approve",
		"ahp --token '' approvals approve 1":                     "approvals approve",
		"ahp hook install claude-code --command true --write":    "hook install",
		// Global flags, spellings and paths.
		"ahp approvals approve 1 --reason ok":             "approvals approve",
		"ahp --log-level debug approvals deny 3":          "approvals deny",
		"ahp --log-level=debug --config x.yaml approvals": "approvals",
		"/usr/local/bin/ahp serve --policy open.yaml":     "serve",
		"./AHP.exe serve":                                    "serve",
		"ahp-linux-amd64 doctor":                             "doctor",
		"ahp status":                                         "status",
		"ahp audit redact --all":                             "audit redact",
		"ahp audit query":                                    "audit query",
		"ahp memory add 'the approver said yes'":             "memory add",
		"ahp memory list":                                    "memory list",
		"ahp runs list":                                      "runs list",
		"ahp replay --policy p.yaml":                         "replay",
		"ahp hook uninstall codex":                           "hook uninstall",
		"ahp hook --connect unix:x.sock install gemini":      "hook install",
		"ahp -- approvals approve 1":                         "approvals approve",
		"sudo -u root ahp approvals approve 1":               "approvals approve",
		"xargs -n1 ahp approvals approve":                    "approvals approve",
		"go run ./cmd/ahp approvals approve 1":               "approvals approve",
		"go run -tags x github.com/ahp-go/ahp/cmd/ahp serve": "serve",
		"go run -C /src/ahp . hook install codex --write":    "hook install",
		"ahp send --connect 'stdio:ahp serve' pre_action {}": "serve",
		"ahp send --connect stdio:./ahp-copy pre_action {}":  "",
		"ahp mcp-proxy --connect x -- ahp approvals list":    "approvals list",
		"npx ahp approvals approve 1":                        "approvals approve",
		"ahp-hook approvals approve 1":                       "approvals approve",
		// A copy of the binary under another name: by shape.
		"/tmp/x approvals approve 1":                           "approvals approve",
		"/tmp/x --admin http://127.1:7700 approvals deny 1":    "approvals deny",
		"/tmp/x approvals --admin http://127.1:7700 approve 1": "approvals approve",
		"./copy hook install claude-code --command true":       "hook install",
		"./copy serve --data-dir /tmp/d":                       "serve",
		"./copy doctor --data-dir ahp-data":                    "doctor",
		"./copy audit export":                                  "audit export",
		"./copy memory delete 3":                               "memory delete",
		// Not administrative.
		"ahp version":                                    "",
		"ahp check policy.yaml":                          "",
		"ahp --config x.yaml check p.yaml":               "",
		"ahp test p.yaml t.yaml":                         "",
		"ahp send --connect unix:ahp.sock pre_action {}": "",
		"ahp hook claude-code --connect unix:ahp.sock":   "",
		"ahp hook --connect unix:ahp.sock codex":         "",
		"ahp hook":                                       "",
		"ahp":                                            "",
		"ahp --help":                                     "",
		"ahp descriptor validate d.yaml":                 "",
		"hugo serve --config site.toml":                  "",
		"npm run serve":                                  "",
		"python -m http.server":                          "",
		"brew doctor":                                    "",
		"flutter doctor -v":                              "",
		"git status":                                     "",
		"pre-commit install --hook-type pre-push":        "",
		"husky hook install":                             "",
		"npm audit fix":                                  "",
		"go run . serve":                                 "",
		"cat ahp-notes.md approvals.md":                  "",
	} {
		m, ok := Find(strings.Fields(strings.ReplaceAll(cmd, "'", "")), names)
		if cmd == "ahp --token '' approvals approve 1" {
			m, ok = Find([]string{"ahp", "--token", "", "approvals", "approve", "1"}, names)
		}
		if cmd == "ahp memory add 'the approver said yes'" || cmd == "ahp send --connect 'stdio:ahp serve' pre_action {}" {
			w := strings.Split(cmd, "'")
			m, ok = Find(append(append(strings.Fields(w[0]), w[1]), strings.Fields(w[2])...), names)
		}
		got := ""
		if ok {
			got = m.Subcommand
		}
		if got != want {
			t.Errorf("%s: got %q (program %q), want %q", cmd, got, m.Program, want)
		}
	}
}

func TestIsName(t *testing.T) {
	for _, w := range []string{"ahp", "/usr/bin/ahp", "AHP", `C:\bin\ahp.exe`, "./bin/ahp-hook"} {
		if !IsName(w, names) {
			t.Errorf("IsName(%q) = false", w)
		}
	}
	for _, w := range []string{"", "ahp-data", "ahpx", "/ahp-data/admin.token", "happ"} {
		if IsName(w, names) {
			t.Errorf("IsName(%q) = true", w)
		}
	}
}

// Trying every word as the program stays linear: reading eight times as
// many flag words costs about eight times as long, never the sixty-four
// times a quadratic reading would (a ratio, so a loaded machine or the race
// detector slows both sides alike).
func TestFindIsLinear(t *testing.T) {
	cost := func(n int) time.Duration {
		words := []string{"x"}
		for range n {
			words = append(words, "-a", "serve")
		}
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			if _, ok := Find(words, names); ok {
				t.Fatal("matched")
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	small, large := cost(2000), cost(16000)
	if large > 24*small {
		t.Fatalf("8x the words took %s against %s (%.1fx): not linear", large, small, float64(large)/float64(small))
	}
	words := []string{"x", "-a", "serve", "approvals", "approve", "1"}
	if m, ok := Find(words, names); !ok || m.Subcommand != "approvals approve" {
		t.Fatalf("the last shape: %+v %v", m, ok)
	}
}

// isSubSub answers from a set gathered once: every sub-subcommand of
// shapes and every hook agent, and nothing else.
func TestIsSubSub(t *testing.T) {
	want := map[string]bool{}
	for a := range hookAgents {
		want[a] = true
	}
	for _, subs := range shapes {
		for _, s := range subs {
			want[s] = true
		}
	}
	for w := range want {
		if !isSubSub(w) {
			t.Errorf("isSubSub(%q) = false", w)
		}
	}
	for _, w := range []string{"", "serve", "approvals", "-la", "/workspace/project", "LIST", "hooks"} {
		if isSubSub(w) != want[w] {
			t.Errorf("isSubSub(%q) = %v", w, isSubSub(w))
		}
	}
}
