package policy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/protocol"
)

// spRules are the rule ids of the self_protection pack.
const (
	spFiles = "self_protection.harness_files"
	spHooks = "self_protection.agent_hooks"
	spAdmin = "self_protection.admin_command"
	spAPI   = "self_protection.admin_api"
	spStop  = "self_protection.stop_harness"
)

// withExecutables adds the executables the hooks run to the fixture: the
// harness's ahp binary (bin/ahp) and a hook script the settings name.
func (f *spFixture) withExecutables(t *testing.T) (ahpBin, hookScript string) {
	t.Helper()
	ahpBin = filepath.Join(f.root, "bin", "ahp")
	hookScript = filepath.Join(f.root, "hooks", "guard.sh")
	for _, p := range []string{ahpBin, hookScript} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sp := SelfProtection{
		Paths:       []string{"ahp-data", "team.yaml", "../etc/ahp.yaml", "ahp.sock"},
		Executables: []string{ahpBin, hookScript},
		Cwd:         f.proj,
		AdminAddrs:  []string{"http://127.0.0.1:7700"},
		PIDs:        []int{spPID},
		Cmdlines:    []string{"/usr/local/bin/ahp serve --config /etc/ahp/ahp.yaml"},
	}
	f.opts.Params = sp.Params()
	return ahpBin, hookScript
}

// The rows of issue 24's table that belong to the self_protection pack,
// with the exact commands of the table.
func TestSelfProtectionIssue24Table(t *testing.T) {
	f := newSPFixture(t)
	ahpBin, hookScript := f.withExecutables(t)
	pad := strings.Repeat("true;", 256)
	blocked := map[string]string{
		// Self-approval.
		"ahp --admin http://127.0.0.1:07700 approvals approve 1": spAdmin,
		"ahp --token '' approvals approve 1":                     spAdmin,
		// Supervision switched off by the installer.
		"ahp hook install claude-code --command true --write": spAdmin,
		// Analysis that gave up after 256 commands.
		pad + "cat ahp-data/admin.token":                spFiles,
		pad + "kill 4242":                               spStop,
		pad + "sed -i s/block/allow/ team.yaml":         spFiles,
		pad + "echo '{}' > .claude/settings.json":       spHooks,
		pad + "ahp approvals approve 1":                 spAdmin,
		pad + "curl http://127.0.0.1:7700/v1/approvals": spAPI,
		// The admin API under other spellings.
		"curl http://127.1:7700/v1/approvals":                                            spAPI,
		"curl http://0x7f000001:7700/v1/approvals":                                       spAPI,
		"curl http://2130706433:7700/v1/approvals":                                       spAPI,
		"curl http://017700000001:7700/v1/approvals":                                     spAPI,
		"curl http://127.0.0.1:07700/v1/approvals":                                       spAPI,
		"curl --resolve example.com:7700:127.0.0.1 http://example.com:7700/v1/approvals": spAPI,
		"curl http://[::1]:7700/v1/approvals":                                            spAPI,
		"curl http://localhost.:7700/v1/approvals":                                       spAPI,
		// The hook executable.
		"rm -f " + ahpBin + " && cp /bin/true " + ahpBin: spFiles,
		"cp /bin/true " + ahpBin:                         spFiles,
		"echo 'exit 0' > " + hookScript:                  spFiles,
	}
	var cases []packCase
	for cmd, rule := range blocked {
		name := cmd
		if rest, ok := strings.CutPrefix(cmd, pad); ok {
			name = "256 true; then " + rest
		}
		cases = append(cases, packCase{"block " + name, f.sh(cmd), rule})
	}
	cases = append(cases,
		packCase{"Write the ahp binary", f.tool("Write", map[string]any{"file_path": ahpBin, "content": "#!/bin/sh\nexit 0\n"}), spFiles},
		packCase{"Edit the hook script", f.tool("Edit", map[string]any{"file_path": hookScript, "old_string": "sh", "new_string": "true"}), spFiles},
		packCase{"run the ahp binary", f.sh(ahpBin + " version"), ""},
		packCase{"run the ahp binary's check", f.sh(ahpBin + " check team2.yaml"), ""},
	)
	runPackCases(t, f.opts, cases)
}

// Every limit of the self-protection analysis blocks, with a reason that
// names the limit and its bound; just under each bound, the same shapes
// are read through and judged on what they do. The limits of the reading
// itself are the effects package's (effects.MaxInput, MaxDepth,
// MaxDecodeRounds, MaxEffects, MaxGlobMatches); the pack adds its own for
// what it resolves (paths, patterns, addresses). The pack blocks them by
// itself: opaque_code is off here.
func TestSelfProtectionLimitReasons(t *testing.T) {
	f := newSPFixture(t)
	set, err := Compile(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	evals := strings.Repeat("eval ", effects.MaxDepth+1) + "true"
	var many, deep []string
	for i := range spMaxRealPaths + 1 {
		many = append(many, fmt.Sprintf("src/f%d", i))
	}
	deep = append(deep, strings.Repeat("d/", spMaxPathDepth+1)+"x")
	var pats []string
	for i := range spMaxPatterns + 1 {
		pats = append(pats, fmt.Sprintf("p%d", i))
	}
	// Five encoded payloads (one more than effects.MaxDecodeRounds), each
	// decoded and run.
	decode := strings.Repeat("echo dHJ1ZQ== | base64 -d | sh; ", effects.MaxDecodeRounds+1)
	for _, c := range []struct {
		limit, cmd, bound string
	}{
		{"size", "echo " + strings.Repeat("a", effects.MaxInput), "256 KiB"},
		{"effects", strings.Repeat("true;", effects.MaxEffects), strconv.Itoa(effects.MaxEffects - 1)},
		{"effects", strings.Repeat("true;", effects.MaxEffects) + "cat ahp-data/admin.token", strconv.Itoa(effects.MaxEffects - 1)},
		{"nesting", evals, strconv.Itoa(effects.MaxDepth)},
		{"decoding", decode, strconv.Itoa(effects.MaxDecodeRounds)},
		{"expansion", "echo {1..300}", strconv.Itoa(effects.MaxGlobMatches)},
		{"paths", "ls " + strings.Join(many, " "), strconv.Itoa(spMaxRealPaths)},
		{"paths", "cat " + strings.Join(deep, " "), strconv.Itoa(spMaxPathDepth)},
		{"patterns", "killall " + strings.Join(pats, " "), strconv.Itoa(spMaxPatterns)},
		{"addresses", "echo " + strings.Repeat("a:1,", spMaxAddrs+1), strconv.Itoa(spMaxAddrs)},
		// bash runs the first line, then stops at the stray fi
		{"syntax", "cat ahp-data/admin.token\nfi", "syntax error"},
		{"syntax", "bash -c 'pkill -f ahp\nfi'", "syntax error"},
	} {
		r := set.Evaluate(f.sh(c.cmd))
		if r.RuleID != "self_protection.limit_"+c.limit || r.Decision.Kind != protocol.DecisionBlock {
			t.Errorf("%s: rule %q, decision %s", c.limit, r.RuleID, r.Decision.Kind)
			continue
		}
		if !strings.Contains(r.Decision.Reason, c.bound) || !strings.Contains(r.Decision.Reason, "protects itself") {
			t.Errorf("%s: reason %q does not name the bound %s", c.limit, r.Decision.Reason, c.bound)
		}
	}
	// Just under the bounds: read through, and judged. "true" is one run
	// effect, "cat FILE" two (run, read).
	under := map[string]string{
		strings.Repeat("true;", effects.MaxEffects-3) + "cat ahp-data/admin.token": spFiles,
		strings.Repeat("eval ", effects.MaxDepth-1) + "cat ahp-data/admin.token":   spFiles,
		"ls " + strings.Join(many[:spMaxRealPaths-1], " ") + " ahp-data":           spFiles,
		"killall " + strings.Join(pats[:spMaxPatterns-1], " ") + " ahp":            spStop,
		strings.Repeat("true;", effects.MaxEffects-1):                              "",
		"ls " + strings.Join(many[:spMaxRealPaths], " "):                           "",
		"echo {1..256}":                      "",
		"echo" + strings.Repeat(" a", 65536): "",
	}
	for cmd, rule := range under {
		if r := set.Evaluate(f.sh(cmd)); r.RuleID != rule {
			t.Errorf("under the bounds (%.40s...): rule %q, want %q", cmd, r.RuleID, rule)
		}
	}
}

// effectsLimit names every limit reason the effects package gives; none
// falls to "other" (which still blocks, with a less precise reason).
func TestSelfProtectionEffectsLimitNames(t *testing.T) {
	for reason, want := range map[string]string{
		"shell script of 300000 bytes, longer than the 262144 read": limitSize,
		"python code longer than 262144 bytes":                      limitSize,
		"bash runs the script /x, larger than the 65536 bytes read": limitSize,
		"python: more than 200000 syntax nodes":                     limitSize,
		"code nested more than 8 levels deep":                       limitNesting,
		"recursive function f: it calls itself":                     limitNesting,
		"function f called more than 8 levels deep":                 limitNesting,
		"more than 256 function calls":                              limitNesting,
		"more than 4 encoded payloads decoded (base64)":             limitDecoding,
		"python: more than 4 encoded payloads":                      limitDecoding,
		"more than 4095 effects":                                    limitEffects,
		"pattern /x/* matches more than 256 paths":                  limitExpansion,
		"brace expansion of {1..300} gives more than 256 words":     limitExpansion,
		"xargs: more than 16 arguments read from its input":         limitExpansion,
		"parallel: more than 16 arguments":                          limitExpansion,
		"payload: nested more than 64 levels":                       limitNesting,
		"something new":                                             limitOther,
	} {
		if got := effectsLimit(reason); got != want {
			t.Errorf("effectsLimit(%q) = %q, want %q", reason, got, want)
		}
	}
}

// The reader judges the words the shell runs, not the text: quotes and
// backslashes inside a command name do not hide it.
func TestSelfProtectionQuotedCommandNames(t *testing.T) {
	f := newSPFixture(t)
	runPackCases(t, f.opts, []packCase{
		{"k'i'll", f.sh("k'i'll 4242"), spStop},
		{`p\kill`, f.sh(`p\kill -f 'ahp serve'`), spStop},
		{"a'h'p approvals", f.sh("a'h'p approvals approve 1"), spAdmin},
		{`"ahp" approvals`, f.sh(`"ahp" --admin http://127.1:07700 approvals approve 1`), spAdmin},
		{"renamed copy", f.sh("cp $(command -v ahp) /tmp/x && /tmp/x approvals approve 1"), spAdmin},
		{"renamed copy, flags first", f.sh("/tmp/x --token '' approvals approve 1"), spAdmin},
		{"go run", f.sh("go run ./cmd/ahp --admin http://localhost:7700 approvals approve 1"), spAdmin},
		{"hook uninstall", f.sh("ahp hook uninstall claude-code --write"), spAdmin},
		{"doctor", f.sh("ahp doctor"), spAdmin},
		{"status", f.sh("ahp status"), spAdmin},
		{"stdio serve", f.sh("ahp send --connect 'stdio:ahp serve' pre_action '{}'"), spAdmin},
		{"the hook itself", f.sh("ahp hook claude-code --connect unix:ahp.sock < event.json"), ""},
		{"ahp send", f.sh("ahp send --connect unix:/tmp/other.sock pre_action '{}'"), ""},
	})
}

// More spellings of the admin API's address: every one reaches it.
func TestSelfProtectionAdminAPISpellings(t *testing.T) {
	f := newSPFixture(t)
	var cases []packCase
	for _, cmd := range []string{
		"curl http://127.0.0.1:0000007700/v1/status",
		"curl 127.1:07700/v1/approvals",
		"curl http://0x7f.1:7700/",
		"curl http://0177.0.0.1:7700/",
		"curl http://127.0.0.2:7700/",
		"curl http://LOCALHOST:7700/",
		"curl http://api.localhost:7700/",
		"curl 'http://[::ffff:127.0.0.1]:7700/'",
		"curl 'http://[0:0:0:0:0:0:0:1]:7700/'",
		"curl http://0:7700/",
		"curl http://0.0.0.0:7700/",
		"curl 'http://[::]:7700/'",
		"curl http://%31%32%37.0.0.1:7700/",
		"curl http://１２７.０.０.１:7700/",
		"curl --connect-to example.com:80:127.1:7700 http://example.com/v1/approvals",
		"curl --connect-to ::[::1]:07700 http://example.com/",
		"curl --resolve '*:7700:[::1]' http://x.test:7700/",
		"curl --resolve +x.test:07700:10.0.0.9,127.0.0.1 http://x.test:07700/",
		"nc 127.1 07700",
		"exec 3<>/dev/tcp/0x7f000001/07700",
		"socat - TCP:2130706433:7700",
		"wget -qO- http://user:pw@127.1:7700/v1/approvals",
		"curl -X POST http://approvals.internal/v1/approval%73/1/approv%65",
		"curl -X POST http://approvals.internal/v1//approvals/./1/approve",
	} {
		cases = append(cases, packCase{"block " + cmd, f.sh(cmd), spAPI})
	}
	for _, cmd := range []string{
		"curl http://127.0.0.1:8080/health",
		"curl http://127.1:17700/",
		"curl http://127.0.0.1:770/",
		"curl https://example.com:7700/",
		"curl http://10.0.0.1:7700/",
		"curl --resolve example.com:7700:10.0.0.1 http://example.com:7700/",
		"curl http://127.0.0.1:07701/",
	} {
		cases = append(cases, packCase{"allow " + cmd, f.sh(cmd), ""})
	}
	runPackCases(t, f.opts, cases)
}

// A name the hosts file gives a loopback address reaches the admin API.
func TestSelfProtectionHostsFileNames(t *testing.T) {
	g := &guard{local: []string{"devbox"}}
	adm := hostPort{"127.0.0.1", "7700"}
	if !g.reaches(adm, hostPort{"DevBox.", "07700"}) {
		t.Fatal("a hosts-file loopback name does not reach the admin API")
	}
	if g.reaches(adm, hostPort{"otherbox", "7700"}) {
		t.Fatal("another name reaches the admin API")
	}
	everywhere := hostPort{"0.0.0.0", "7700"}
	if !g.reaches(everywhere, hostPort{"10.1.2.3", "7700"}) || g.reaches(everywhere, hostPort{"10.1.2.3", "7701"}) {
		t.Fatal("an admin API on every address")
	}
	mine := hostPort{"10.1.2.3", "7700"}
	if !g.reaches(mine, hostPort{"0xa010203", "7700"}) || g.reaches(mine, hostPort{"127.0.0.1", "7700"}) {
		t.Fatal("an admin API on one address, in another spelling")
	}
}

// ".." after a symbolic link is the link target's parent, as the kernel
// takes it: elsewhere/data-link/.. is the project, not elsewhere.
func TestSelfProtectionDotDotAfterLink(t *testing.T) {
	f := newSPFixture(t)
	link := filepath.Join(f.root, "elsewhere", "data-link")
	runPackCases(t, f.opts, []packCase{
		{"cat through link/..", f.sh("cat ../elsewhere/data-link/../ahp-data/admin.token"), spFiles},
		{"absolute, through link/..", f.sh("cat " + link + "/../team.yaml"), spFiles},
		{"write a new file through link/..", f.sh("echo x > ../elsewhere/data-link/../ahp-data/new.db"), spFiles},
		{"Read through link/..", f.tool("Read", map[string]any{"file_path": link + "/../ahp-data/admin.token"}), spFiles},
		{"lexical .. elsewhere", f.sh("cat ../elsewhere/../proj/README.md"), ""},
	})
}

// pkill and killall without a pattern signal every process their selectors
// (-u, -U, -g, -P...) pick, the harness among them when it runs as that
// user.
func TestSelfProtectionKillEveryProcessOfAUser(t *testing.T) {
	f := newSPFixture(t)
	var cases []packCase
	for _, cmd := range []string{"pkill -u $USER", "pkill -9 -U 1000", "pkill --euid=1000", "pkill -u1000", "killall -u dev", "killall --user dev", "kill $(pgrep -u dev)", "pkill -P 1"} {
		cases = append(cases, packCase{"block " + cmd, f.sh(cmd), spStop})
	}
	for _, cmd := range []string{"pkill -u dev node", "killall -u dev node", "pgrep -u dev", "pkill -f 'node server.js'"} {
		cases = append(cases, packCase{"allow " + cmd, f.sh(cmd), ""})
	}
	runPackCases(t, f.opts, cases)
}

// A find -delete filtered by name deletes only the files whose names
// match: in a project that holds the data directory it touches the harness
// only when a protected file (or one inside a protected directory) has a
// matching name. find -exec of a program that changes nothing touches
// nothing. A recursive delete of the whole tree, a find whose filter
// cannot be read as names only (!, -o, -path, no -name), and any delete
// inside the data directory are deletes of the harness's files.
func TestSelfProtectionFindPrecision(t *testing.T) {
	f := newSPFixture(t)
	var cases []packCase
	for _, cmd := range []string{
		`find . -exec echo {} \;`,
		"find . -name '*.txt' -delete",
		"find . -type f -name '*.log' -mtime +7 -delete",
		"find . -maxdepth 3 -iname '*.TMP' -delete",
		"find src -name '*.o' -delete",
		"find . -name '*.go' -print",
		"find . -name '*.tmp' -exec rm {} +",
		`find . -name '*.md' -exec cat {} \;`,
		"find / -name '*.pyc' -exec rm -f {} +",
	} {
		cases = append(cases, packCase{"allow " + cmd, f.sh(cmd), ""})
	}
	for _, cmd := range []string{
		"find . -name '*.db' -delete",
		"find . -iname '*.DB' -delete",
		"find . -name 'admin.*' -delete",
		"find . -name 'ahp-*' -delete",
		"find . -name team.yaml -delete",
		"find . -type f -delete",
		"find . -delete",
		"find . ! -name '*.txt' -delete",
		"find . -not -name '*.txt' -delete",
		"find . -name '*.txt' -o -name x -delete",
		"find . -path '*/x/*' -delete",
		"find ahp-data -name '*.txt' -delete",
		`find . -exec rm {} \;`,
		"rm -rf .",
		"cd /tmp && find / -name admin.token -exec cat {} +",
		`find . -name '*.token' -exec cat {} \;`,
		"find . -name x -print; rm -rf .",
		`find . -name '*.txt' -exec rm {} \; ; rm -rf .`,
	} {
		cases = append(cases, packCase{"block " + cmd, f.sh(cmd), spFiles})
	}
	runPackCases(t, f.opts, cases)
}

// Signals reach the harness from interpreter code too (os.kill), and a
// protected file from Python's open: one reading serves every reader.
func TestSelfProtectionInterpreterCode(t *testing.T) {
	f := newSPFixture(t)
	runPackCases(t, f.opts, []packCase{
		{"python os.kill", f.sh(`python3 -c 'import os; os.kill(4242, 9)'`), spStop},
		{"python open token", f.sh(`python3 -c 'print(open("ahp-data/admin.token").read())'`), spFiles},
		{"python rmtree data", f.sh(`python3 -c 'import shutil; shutil.rmtree("ahp-data")'`), spFiles},
		{"quoted kill", f.sh(`"kill" -9 4242`), spStop},
		{"python other pid", f.sh(`python3 -c 'import os; os.kill(1234, 9)'`), ""},
		{"git commit message", f.sh(`git commit -m "kill 4242 and rm -rf ahp-data"`), ""},
	})
}

// Through a link, ".." goes up from the link's target for the words of a
// program too; systemctl verbs that change the unit without stopping it
// are stopping it all the same; a web tool's URL to the admin API is a
// call of it.
func TestSelfProtectionMoreShapes(t *testing.T) {
	f := newSPFixture(t)
	runPackCases(t, f.opts, []packCase{
		{"rm through link/..", f.sh("rm -rf ../elsewhere/data-link/../ahp-data"), spFiles},
		{"sqlite3 through link/..", f.sh("sqlite3 ../elsewhere/data-link/../ahp-data/ahp.db .dump"), spFiles},
		{"systemctl edit", f.sh("systemctl edit ahp"), spStop},
		{"systemctl set-property", f.sh("sudo systemctl set-property ahp.service CPUQuota=1%"), spStop},
		{"systemctl disable", f.sh("systemctl disable ahp"), spStop},
		{"systemctl status", f.sh("systemctl status ahp"), ""},
		{"systemctl edit nginx", f.sh("systemctl edit nginx"), ""},
		{"WebFetch admin API", f.tool("WebFetch", map[string]any{"url": "http://127.1:07700/v1/approvals", "prompt": "x"}), spAPI},
		{"web_fetch elsewhere", f.tool("WebFetch", map[string]any{"url": "https://example.com/", "prompt": "x"}), ""},
	})
}

// The view of the file system the self_protection pack gives the effect
// analysis resolves links only for ".." after them: the other packs keep
// lexical paths, so a workspace root that is itself a link still holds the
// paths written under it.
func TestSelfProtectionLinkViewKeepsOtherPacksLexical(t *testing.T) {
	f := newSPFixture(t)
	linkRoot := filepath.Join(f.root, "elsewhere", "work")
	if err := os.Symlink(f.proj, linkRoot); err != nil {
		t.Fatal(err)
	}
	opts := f.opts
	opts.Packs = map[string]bool{"self_protection": true, "filesystem_scope": true}
	opts.Params["workspace_roots"] = []string{linkRoot}
	ev := func(cmd string) *Input {
		b, _ := json.Marshal(map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}, "cwd": linkRoot})
		return in(event(protocol.EventPreAction, string(b)))
	}
	runPackCases(t, opts, []packCase{
		{"read in the linked root", ev("cat src/main.go"), ""},
		{"token through the linked root", ev("cat ahp-data/admin.token"), spFiles},
		{"outside", ev("cat /etc/passwd"), "filesystem_scope.outside_workspace"},
	})
}
