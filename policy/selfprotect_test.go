package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// spFixture lays out a project as a developer runs ahp in it: the harness
// started in proj/ with its data in proj/ahp-data, the policy proj/team.yaml,
// the configuration in etc/ahp.yaml, a symbolic link proj/link to the data
// directory and another from elsewhere/data-link.
type spFixture struct {
	root, proj, home string
	opts             Options
}

const spPID = 4242

func newSPFixture(t *testing.T) *spFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &spFixture{root: root, proj: filepath.Join(root, "proj"), home: filepath.Join(root, "home")}
	for _, d := range []string{"proj/ahp-data", "proj/ahp-data-backup", "proj/src", "proj/.claude", "proj/.gemini", "etc", "elsewhere", "home/.codex", "home/.claude"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range []string{"proj/ahp-data/admin.token", "proj/ahp-data/ahp.db", "proj/team.yaml", "etc/ahp.yaml", "proj/README.md"} {
		if err := os.WriteFile(filepath.Join(root, file), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("ahp-data", filepath.Join(f.proj, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.proj, "ahp-data"), filepath.Join(root, "elsewhere", "data-link")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", f.home)
	sp := SelfProtection{
		Paths:      []string{"ahp-data", "team.yaml", "../etc/ahp.yaml", "ahp.sock"},
		Cwd:        f.proj,
		AdminAddrs: []string{"http://127.0.0.1:7700"},
		PIDs:       []int{spPID},
		Cmdlines:   []string{"/usr/local/bin/ahp serve --config /etc/ahp/ahp.yaml"},
	}
	f.opts = only("self_protection")
	f.opts.Params = sp.Params()
	return f
}

// sh is a Claude Code shaped shell event run in the project.
func (f *spFixture) sh(cmd string) *Input {
	return f.tool("Bash", map[string]any{"command": cmd})
}

// tool is a hook-shaped tool call (tool_name, tool_input, cwd).
func (f *spFixture) tool(name string, input map[string]any) *Input {
	b, err := json.Marshal(map[string]any{"tool_name": name, "tool_input": input, "cwd": f.proj})
	if err != nil {
		panic(err)
	}
	return in(event(protocol.EventPreAction, string(b)))
}

func TestSelfProtectionPack(t *testing.T) {
	f := newSPFixture(t)
	const (
		files = "self_protection.harness_files"
		hooks = "self_protection.agent_hooks"
		admin = "self_protection.admin_command"
		api   = "self_protection.admin_api"
		stop  = "self_protection.stop_harness"
	)
	data := filepath.Join(f.proj, "ahp-data")
	blocked := map[string]string{
		// The table.
		"cat ahp-data/admin.token":            files,
		"ahp approvals approve 1 --reason ok": admin,
		"curl -X POST -H 'Authorization: Bearer abc' http://127.0.0.1:7700/v1/approvals/1/approve": api,
		"sed -i s/block/allow/ team.yaml":             files,
		"echo 'rules: []' > team.yaml":                files,
		"kill 4242":                                   stop,
		"pkill -f 'ahp serve'":                        stop,
		"rm -rf ahp-data":                             files,
		"sqlite3 ahp-data/ahp.db 'delete from audit'": files,
		// Other quoting and spelling of the same paths.
		`cat "ahp-data/admin.token"`:          files,
		`cat 'ahp-data'/"admin.token"`:        files,
		`cat ahp\-data/admin.token`:           files,
		"cat ./src/../ahp-data/admin.token":   files,
		"cat " + data + "/admin.token":        files,
		"cat ahp-*/admin.token":               files,
		"cat < ahp-data/admin.token":          files,
		"cp ahp-data/admin.token /tmp/t":      files,
		"base64 --input=ahp-data/admin.token": files,
		// Symbolic links to the data directory.
		"cat link/admin.token":                       files,
		"cat ../elsewhere/data-link/admin.token":     files,
		"rm -rf " + f.root + "/elsewhere/data-link/": files,
		// bash -c, eval, cd.
		"bash -c 'cat ahp-data/admin.token'":                          files,
		`sh -c "cd ahp-data && cat admin.token"`:                      files,
		"cd ahp-data; cat admin.token":                                files,
		"cd /; cat " + strings.TrimPrefix(data, "/") + "/admin.token": files,
		`eval "rm -rf ahp-data"`:                                      files,
		`bash -lc "bash -c 'kill 4242'"`:                              stop,
		// Rewriting the policy and the configuration.
		"echo 'rules: []' >> " + f.proj + "/team.yaml": files,
		"perl -pi -e 's/block/allow/' team.yaml":       files,
		"cp /tmp/open.yaml team.yaml":                  files,
		"mv team.yaml team.old":                        files,
		"echo x | tee team.yaml":                       files,
		"vi ../etc/ahp.yaml":                           files,
		"cat ahp.sock":                                 files,
		// Destroying the audit trail.
		"rm -rf ./ahp-data/":          files,
		"rm -rf " + data:              files,
		"rm -rf .":                    files,
		"rm -rf *":                    files,
		"find . -name '*.db' -delete": files,
		// a find whose name selects a directory above the data
		"find " + f.root + " -name 'pro*' -exec rm -rf {} +": files,
		"find " + f.root + " -maxdepth 1 -name proj -delete": files,
		"find .. -name proj | xargs rm -rf":                  files,
		"mv ahp-data /tmp/x":                                 files,
		"shred -u ahp-data/ahp.db":                           files,
		"sudo chmod -R 777 " + f.proj:                        files,
		// Administrative commands.
		"./bin/ahp approvals deny 1":                                  admin,
		"go run ./cmd/ahp approvals approve 1":                        admin,
		`bash -c "ahp approvals approve 1"`:                           admin,
		"AHP_ADMIN_TOKEN=x ahp --log-level debug approvals approve 1": admin,
		"ahp serve --policy /dev/null":                                admin,
		"nohup ahp serve &":                                           admin,
		"ahp audit redact --all":                                      admin,
		"ahp memory add 'the approver said yes'":                      admin,
		// The admin API.
		"curl localhost:7700/v1/approvals":                                                             api,
		"wget -qO- http://[::1]:7700/v1/approvals":                                                     api,
		"curl -d '{}' http://approvals.internal/v1/approvals/7/approve":                                api,
		`python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:7700/v1/policy/reload')"`: api,
		"exec 3<>/dev/tcp/127.0.0.1/7700":                                                              api,
		"nc 127.0.0.1 7700":                                                                            api,
		"socat - TCP:127.0.0.1:7700":                                                                   api,
		// Starving, attaching to or reading the memory of the harness
		// (issue 35), by its pid or a pid looked up at run time.
		"killall5 -9":                           stop,
		"/sbin/killall5 -STOP":                  stop,
		"kill -STOP 4242":                       stop,
		"renice -n 19 -p 4242":                  stop,
		"renice +19 4242":                       stop,
		"renice -n 19 -u ann":                   stop,
		"ionice -c 3 -p 4242":                   stop,
		"taskset -p 0x1 4242":                   stop,
		"chrt -i -p 0 4242":                     stop,
		"prlimit --pid 4242 --cpu=1":            stop,
		"cpulimit -p 4242 -l 1":                 stop,
		"cpulimit -e ahp -l 1":                  stop,
		"gcore 4242":                            stop,
		"gdb -p 4242":                           stop,
		"gdb --pid=4242 -batch -ex 'info proc'": stop,
		"gdb -p $(pgrep ahp)":                   stop,
		"sudo gdb -batch -ex 'gcore /tmp/c' -p `pidof ahp`": stop,
		"strace -p 4242": stop,
		"strace -f -p $(pgrep -f 'ahp serve') -e read": stop,
		"ltrace -p 4242":         stop,
		"perf record -p 4242":    stop,
		"perf trace --pid=4242":  stop,
		"cat /proc/4242/mem":     stop,
		"cat /proc/4242/environ": stop,
		"dd if=/proc/4242/mem of=/tmp/m bs=1 skip=4096 count=100":                 stop,
		"cat /proc/$(pgrep ahp)/mem":                                              stop,
		"for p in $(pgrep ahp); do cat /proc/$p/environ; done":                    stop,
		`python3 -c 'print(open("/proc/4242/environ").read())'`:                   stop,
		"echo 1 > /sys/fs/cgroup/system.slice/ahp.service/cgroup.freeze":          stop,
		"ps aux | grep [a]hp | awk '{print $2}' | while read p; do kill $p; done": stop,
		"p=$(pgrep -f 'ahp serve'); kill -STOP $p":                                stop,
		// Stopping the harness.
		"kill -9 4242":                           stop,
		"kill -s KILL 4242":                      stop,
		"kill -- -4242":                          stop,
		"kill -9 -1":                             stop,
		"pkill ahp":                              stop,
		"killall ahp":                            stop,
		`pkill -f "ahp.*serve"`:                  stop,
		"pkill -9 -f serve":                      stop,
		"kill $(pgrep -f 'ahp serve')":           stop,
		"kill -9 `pidof ahp`":                    stop,
		"systemctl stop ahp":                     stop,
		"sudo systemctl --user kill ahp.service": stop,
		"systemctl disable --now ahp":            stop,
		"service ahp stop":                       stop,
		// Agent hook settings, by shell.
		"sed -i '/ahp hook/d' .claude/settings.json":                                         hooks,
		"echo '{}' > .claude/settings.local.json":                                            hooks,
		"jq 'del(.hooks)' .claude/settings.json > /tmp/s && mv /tmp/s .claude/settings.json": hooks,
		"rm -rf .claude":                                 hooks,
		"echo '{}' > ~/.codex/hooks.json":                hooks,
		"sed -i 's/ahp hook//' $HOME/.codex/config.toml": hooks,
		"cp /dev/null .gemini/settings.json":             hooks,
		"echo exit 0 > .claude/hooks/ahp.sh":             hooks,
		// Recursive writes into a settings directory, and settings
		// restored from git (each was let through).
		"tar xf /tmp/x.tar -C .claude":                      hooks,
		"cp -r /tmp/x/. ~/.claude/":                         hooks,
		"rsync -a /tmp/x/ .gemini/":                         hooks,
		"unzip -o /tmp/x.zip -d ~/.codex":                   hooks,
		"cp -r /tmp/x/.claude .":                            hooks,
		"git checkout -- .claude/settings.json":             hooks,
		"git checkout HEAD~3 -- .claude":                    hooks,
		"git restore --source=HEAD~2 .claude/settings.json": hooks,
	}
	allowed := []string{
		"cat README.md",
		"kill %1",
		"kill 1234",
		"renice -n 5 -p $$",
		"renice -n 10 -p 1234",
		"strace -o trace.txt ls",
		"strace -p 1234",
		"gdb ./build/app",
		"gdb -p $(pgrep -f 'node server.js')",
		"perf record ./build/app",
		"cat /proc/self/status",
		"cat /proc/1234/status",
		"cat /proc/cpuinfo",
		"taskset -c 0 make",
		"nice -n 10 make -j4",
		"pkill -f vite",
		"for p in $(pgrep -f vite); do kill $p; done",
		"kill $(cat server.pid)",
		"kill -l",
		"kill -0 $$",
		"pgrep ahp",
		"pkill -f 'node server.js'",
		"killall node",
		"systemctl status ahp",
		"systemctl restart nginx",
		"ls -la",
		"ls .",
		"find . -name '*.go'",
		"find " + f.root + " -name 'render-test-*' -exec rm -rf {} +",
		"grep -r TODO src",
		"git status",
		"rm -rf build",
		"cat ahp-data-backup/notes",
		"curl http://127.0.0.1:8080/health",
		"curl https://example.com:7700/",
		"ahp version",
		"ahp check policy.yaml",
		`echo "run ahp approvals approve later" > notes.txt`,
		"cat .claude/settings.json",
		"jq .hooks .claude/settings.json",
		"tar xf /tmp/x.tar",
		"git checkout main",
		"git checkout -b feature/x",
		"git restore --staged .claude/settings.json",
		"git checkout -- src/main.go",
		"cp -r /tmp/cmds .claude/commands",
		"vim config/settings.json",
		"echo '{}' > settings.json",
		"sed s/block/allow/ README.md",
	}
	var cases []packCase
	for cmd, rule := range blocked {
		cases = append(cases, packCase{"block " + cmd, f.sh(cmd), rule})
	}
	for _, cmd := range allowed {
		cases = append(cases, packCase{"allow " + cmd, f.sh(cmd), ""})
	}
	team := filepath.Join(f.proj, "team.yaml")
	cases = append(cases,
		// File tools writing the policy file.
		packCase{"Claude Code Write policy", f.tool("Write", map[string]any{"file_path": team, "content": "rules: []"}), files},
		packCase{"Claude Code Edit policy", f.tool("Edit", map[string]any{"file_path": team, "old_string": "block", "new_string": "allow"}), files},
		packCase{"Claude Code MultiEdit policy", f.tool("MultiEdit", map[string]any{"file_path": team, "edits": []any{}}), files},
		packCase{"Claude Code Read token", f.tool("Read", map[string]any{"file_path": filepath.Join(data, "admin.token")}), files},
		packCase{"Claude Code Read token via link", f.tool("Read", map[string]any{"file_path": filepath.Join(f.proj, "link", "admin.token")}), files},
		packCase{"Gemini write_file policy", f.tool("write_file", map[string]any{"file_path": "team.yaml", "content": "rules: []"}), files},
		packCase{"Gemini replace policy", f.tool("replace", map[string]any{"file_path": team, "old_string": "a", "new_string": "b"}), files},
		packCase{"Gemini read_file token", f.tool("read_file", map[string]any{"absolute_path": filepath.Join(data, "admin.token")}), files},
		packCase{"Codex apply_patch policy", f.tool("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: team.yaml\n@@\n-block\n+allow\n*** End Patch"}), files},
		packCase{"Codex apply_patch in a heredoc", f.sh("apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: ahp-data/ahp.db\n*** End Patch\nEOF"), files},
		packCase{"MCP filesystem write_file policy", in(action("mcp__filesystem__write_file", map[string]any{"path": team, "content": ""})), files},
		packCase{"MCP filesystem move_file data dir", in(action("mcp__filesystem__move_file", map[string]any{"source": data, "destination": "/tmp/x"})), files},
		packCase{"MCP filesystem delete project", in(action("mcp__fs__delete_directory", map[string]any{"path": f.proj})), files},
		// File tools writing each agent's hook settings.
		packCase{"Claude Code Write settings.json", f.tool("Write", map[string]any{"file_path": filepath.Join(f.proj, ".claude", "settings.json"), "content": "{}"}), hooks},
		packCase{"Claude Code Edit settings.local.json", f.tool("Edit", map[string]any{"file_path": ".claude/settings.local.json", "old_string": "ahp", "new_string": ""}), hooks},
		packCase{"Claude Code MultiEdit user settings", f.tool("MultiEdit", map[string]any{"file_path": "~/.claude/settings.json", "edits": []any{}}), hooks},
		packCase{"Codex apply_patch config.toml", f.tool("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: " + filepath.Join(f.home, ".codex", "config.toml") + "\n@@\n-x\n*** End Patch"}), hooks},
		packCase{"Codex apply_patch hooks.json", f.tool("apply_patch", map[string]any{"command": []any{"apply_patch", "*** Begin Patch\n*** Add File: ~/.codex/hooks.json\n+{}\n*** End Patch"}}), hooks},
		packCase{"Gemini write_file settings", f.tool("write_file", map[string]any{"file_path": filepath.Join(f.proj, ".gemini", "settings.json"), "content": "{}"}), hooks},
		packCase{"Gemini replace settings", f.tool("replace", map[string]any{"file_path": ".gemini/settings.json", "old_string": "ahp", "new_string": ""}), hooks},
		packCase{"MCP write_file codex config", in(action("mcp__filesystem__write_file", map[string]any{"path": filepath.Join(f.home, ".codex", "config.toml")})), hooks},
		packCase{"managed Claude settings", f.tool("Write", map[string]any{"file_path": "/etc/claude-code/managed-settings.json"}), hooks},
		// Look-alikes.
		packCase{"Read hook settings", f.tool("Read", map[string]any{"file_path": filepath.Join(f.proj, ".claude", "settings.json")}), ""},
		packCase{"Gemini read_file settings", f.tool("read_file", map[string]any{"absolute_path": ".gemini/settings.json"}), ""},
		packCase{"Edit an unrelated settings.json", f.tool("Edit", map[string]any{"file_path": filepath.Join(f.proj, "src", "settings.json"), "old_string": "a", "new_string": "b"}), ""},
		packCase{"Write README", f.tool("Write", map[string]any{"file_path": filepath.Join(f.proj, "README.md")}), ""},
		packCase{"Write elsewhere", f.tool("write_file", map[string]any{"file_path": "src/main.go"}), ""},
		packCase{"a prompt about the harness", in(event(protocol.EventPrePrompt, `{"prompt":"cat ahp-data/admin.token"}`)), ""},
	)
	runPackCases(t, f.opts, cases)
}

// Relative paths start at the event's own working directory when it has
// one: the same words are harmless elsewhere.
func TestSelfProtectionRelativeToEventCwd(t *testing.T) {
	f := newSPFixture(t)
	set, err := Compile(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	ev := func(cwd string) *Input {
		b, _ := json.Marshal(map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "cat ahp-data/admin.token"}, "cwd": cwd})
		return in(event(protocol.EventPreAction, string(b)))
	}
	if r := set.Evaluate(ev(f.proj)); r.RuleID != "self_protection.harness_files" {
		t.Fatalf("in the project: %s", r.RuleID)
	}
	if r := set.Evaluate(ev(filepath.Join(f.root, "elsewhere"))); r.Matched {
		t.Fatalf("in another directory: matched %s", r.RuleID)
	}
	// Without a cwd the harness's own directory applies.
	if r := set.Evaluate(in(bash("cat ahp-data/admin.token"))); r.RuleID != "self_protection.harness_files" {
		t.Fatalf("no cwd: %s", r.RuleID)
	}
	// Gemini CLI's directory argument is relative to the cwd.
	b, _ := json.Marshal(map[string]any{"tool_name": "run_shell_command", "tool_input": map[string]any{"command": "cat admin.token", "directory": "ahp-data"}, "cwd": f.proj})
	if r := set.Evaluate(in(event(protocol.EventPreAction, string(b)))); r.RuleID != "self_protection.harness_files" {
		t.Fatalf("directory argument: %s", r.RuleID)
	}
}

// The pack is on by default, its block says why, and switching it off
// lets the same actions through.
func TestSelfProtectionDefaultAndOff(t *testing.T) {
	if !(Options{}).PackEnabled("self_protection") {
		t.Fatal("self_protection is not on by default")
	}
	f := newSPFixture(t)
	on := f.opts
	on.Packs = nil
	set, err := Compile(on)
	if err != nil {
		t.Fatal(err)
	}
	r := set.Evaluate(f.sh("cat ahp-data/admin.token"))
	if r.Decision.Kind != protocol.DecisionBlock || !strings.Contains(r.Decision.Reason, "the harness protects itself") {
		t.Fatalf("default options: %+v", r.Decision)
	}
	off := f.opts
	off.Packs = map[string]bool{"self_protection": false}
	set, err = Compile(off)
	if err != nil {
		t.Fatal(err)
	}
	if r := set.Evaluate(f.sh("cat ahp-data/admin.token")); r.Matched && strings.HasPrefix(r.RuleID, "self_protection.") {
		t.Fatalf("pack off still matched %s", r.RuleID)
	}
}

func TestSelfProtectionParams(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "data")); err != nil {
		t.Fatal(err)
	}
	p := SelfProtection{Paths: []string{"data", "", "/etc/ahp.yaml"}, Cwd: dir, PIDs: []int{12, 0}, Names: []string{"ahp", "ahp-test"}}.Params()
	paths := p["self_protection_paths"].([]string)
	want := []string{filepath.Join(dir, "data"), filepath.Join(dir, "real"), "/etc/ahp.yaml"}
	if strings.Join(paths, ",") != strings.Join(want, ",") {
		t.Fatalf("paths = %v, want %v (given and real)", paths, want)
	}
	if pids := p["self_protection_pids"].([]string); len(pids) != 1 || pids[0] != "12" {
		t.Fatalf("pids = %v", pids)
	}
	if names := p["self_protection_names"].([]string); strings.Join(names, ",") != "ahp,ahp-test" {
		t.Fatalf("names = %v", names)
	}
}

// realPathByEvalSymlinks is realPath as it was before the Stat shortcut:
// EvalSymlinks on each ever shorter prefix. The two must agree.
func realPathByEvalSymlinks(p string) string {
	return resolveLongestPrefix(p, func(prefix string) (string, bool) {
		r, err := filepath.EvalSymlinks(prefix)
		return r, err == nil
	})
}

// TestRealPathAgreesWithEvalSymlinks: existing paths, missing tails,
// links (relative, absolute, to missing targets, in loops) resolve as
// EvalSymlinks on the longest resolvable prefix resolves them.
func TestRealPathAgreesWithEvalSymlinks(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "data", "sub"), 0o755))
	must(os.WriteFile(filepath.Join(root, "data", "ahp.db"), nil, 0o600))
	must(os.Symlink(filepath.Join(root, "data"), filepath.Join(root, "abs-link")))
	must(os.Symlink("data/sub", filepath.Join(root, "rel-link")))
	must(os.Symlink(filepath.Join(root, "missing"), filepath.Join(root, "dangling")))
	must(os.Symlink("loop-b", filepath.Join(root, "loop-a")))
	must(os.Symlink("loop-a", filepath.Join(root, "loop-b")))
	must(os.Symlink("../abs-link", filepath.Join(root, "data", "sub", "up")))
	for _, rel := range []string{
		"", "data", "data/ahp.db", "data/new.db", "data/x/y/z", "abs-link/ahp.db", "abs-link/new/deeper",
		"rel-link", "rel-link/file", "rel-link/up/ahp.db", "rel-link/up/none/x", "dangling", "dangling/x",
		"loop-a", "loop-a/x", "missing/a/b/c/d/e", "data/ahp.db/not-a-dir",
	} {
		p := filepath.Join(root, rel)
		if got, want := realPath(p), realPathByEvalSymlinks(p); got != want {
			t.Errorf("realPath(%s) = %s, EvalSymlinks way %s", rel, got, want)
		}
	}
	for _, p := range []string{"/", "/nonexistent/a/b", "relative/path"} {
		if got, want := realPath(p), realPathByEvalSymlinks(p); got != want {
			t.Errorf("realPath(%s) = %s, EvalSymlinks way %s", p, got, want)
		}
	}
}

// BenchmarkRealPath: a path whose tail does not exist (the usual case for
// the paths a command names: ls -la /workspace/project), resolved with the
// Stat shortcut and the EvalSymlinks way.
func BenchmarkRealPath(b *testing.B) {
	p := filepath.Join(b.TempDir(), "workspace", "project", "src", "main.go")
	b.Run("stat-then-resolve", func(b *testing.B) {
		for range b.N {
			_ = realPath(p)
		}
	})
	b.Run("evalsymlinks-each-prefix", func(b *testing.B) {
		for range b.N {
			_ = realPathByEvalSymlinks(p)
		}
	})
}
