package policy

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cel.dev/cel-go/common/types"

	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/internal/admincmd"
	"github.com/ahp-go/ahp/protocol"
)

// The shortcuts allPaths, runsHarnessAdmin and callsAdminAPI take on a long
// script (a path read once however often it is named, argv words that
// cannot name a protected path skipped, the links of a directory looked up
// once, admincmd asked only about words that can be a subcommand) change no
// judgement. These tests hold them to that: attacker spellings after a
// long ordinary prefix, the reading of every path compared with
// refAllPaths (allPaths as it was before the shortcuts), and the cached
// link lookups compared with realPath.

// refAllPaths is allPaths before the shortcuts: every path of every effect
// and every argv word made absolute and kept, then looked up in order.
func refAllPaths(a *spAction) []spPath {
	var paths []spPath
	add := func(p string, kind effects.Kind, destroy bool) *spPath {
		abs := a.abs(p)
		if !filepath.IsAbs(abs) {
			return nil
		}
		paths = append(paths, spPath{abs: abs, kind: kind, destroy: destroy, glob: strings.ContainsAny(abs, "*?[")})
		return &paths[len(paths)-1]
	}
	for i, e := range a.acts {
		switch e.Kind {
		case effects.Read:
			if p := add(e.Path, e.Kind, false); p != nil && e.Recursive {
				p.names, p.fold, p.find = a.findFilterOf(i)
			}
		case effects.Write, effects.Create:
			add(e.Path, e.Kind, false)
		case effects.Delete:
			if p := add(e.Path, e.Kind, true); p != nil && e.Recursive {
				p.names, p.fold, p.find = a.findFilterOf(i)
			}
		case effects.Chmod, effects.Chown:
			add(e.Path, e.Kind, true)
		case effects.Move:
			add(e.Path, e.Kind, true)
			add(e.Dest, effects.Write, false)
		case effects.Download:
			add(e.Path, effects.Write, false)
		case effects.Send:
			if e.Source() != "" && e.Source() != "stdin" && e.Source() != "output" && e.Source() != "data" {
				add(e.Source(), effects.Read, false)
			}
		case effects.Run:
			if e.Path != "" {
				if p := add(e.Path, effects.Run, false); p != nil {
					p.exec = true
				}
			}
			for _, w := range argvOperands(e.Argv) {
				cs, n := wordPaths(w)
				for _, c := range cs[:n] {
					if p := add(c, effects.Read, false); p != nil {
						p.argv, p.slash = true, strings.Contains(c, "/")
						p.raw = rawJoin(expandHomeWith(c, a.g.home), a.cwd)
					}
				}
			}
		}
	}
	seen := map[string]string{}
	for i := range paths {
		p := &paths[i]
		p.real = p.abs
		if p.glob || p.argv && !p.slash {
			continue
		}
		if r, ok := seen[p.abs]; ok && p.raw == "" {
			p.real = r
			continue
		}
		if a.real >= spMaxRealPaths || strings.Count(p.abs, "/") > spMaxPathDepth {
			a.reach(limitPaths)
			continue
		}
		a.real++
		if p.raw != "" {
			p.real = realPath(p.raw)
			continue
		}
		p.real = realPath(p.abs)
		seen[p.abs] = p.real
	}
	for _, r := range a.raw {
		if a.real >= spMaxRealPaths || strings.Count(r, "/") > spMaxPathDepth {
			a.reach(limitPaths)
			continue
		}
		a.real++
		real := realPath(r)
		paths = append(paths, spPath{abs: real, real: real, kind: effects.Read, argv: true})
	}
	return paths
}

// spReading is what the path checks made of one event.
type spReading struct {
	files, hooks bool
	limit        string
	lookups      int
}

// spReadings reads one event twice, with allPaths and with refAllPaths.
func spReadings(t *testing.T, set *Set, g *guard, ev *protocol.Event) (got, want spReading) {
	t.Helper()
	read := func(ref bool) spReading {
		payload := (*objArena)(nil).newObject(string(ev.Payload))
		a := &spAction{g: g, cwd: g.cwd, acts: payloadEffects(payload, set.agent)}
		a.toolContext(payload)
		if ref {
			a.paths, a.done = refAllPaths(a), true
		}
		return spReading{files: a.check(spCheckFiles), hooks: a.check(spCheckHooks), limit: a.limit, lookups: a.real}
	}
	return read(false), read(true)
}

// spFastFixture is newSPFixture with ahp.yaml in the project protected
// too, a subdirectory, a home directory the fixture protects, and links
// in a directory of their own (as an agent would make in /tmp): to the
// data directory, to the token, and to the project.
type spFastFixture struct {
	*spFixture
	tmp string // the links' directory
}

func newSPFastFixture(t *testing.T) *spFastFixture {
	t.Helper()
	f := &spFastFixture{spFixture: newSPFixture(t)}
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f.tmp = tmp
	for _, d := range []string{"proj/src/sub", "home/secret"} {
		if err := os.MkdirAll(filepath.Join(f.root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range []string{"proj/ahp.yaml", "proj/src/a.go", "home/secret/key"} {
		if err := os.WriteFile(filepath.Join(f.root, file), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"dl":    filepath.Join(f.proj, "ahp-data"),
		"tok":   filepath.Join(f.proj, "ahp-data", "admin.token"),
		"proj":  f.proj,
		"cfg":   filepath.Join(f.proj, "ahp.yaml"),
		"loop":  filepath.Join(tmp, "loop"),
		"gone":  filepath.Join(tmp, "missing"),
		"rel":   "../" + filepath.Base(tmp) + "/dl",
		"notes": "notes.txt",
	} {
		if err := os.Symlink(target, filepath.Join(tmp, link)); err != nil {
			t.Fatal(err)
		}
	}
	sp := SelfProtection{
		Paths:      []string{"ahp-data", "team.yaml", "../etc/ahp.yaml", "ahp.sock", "ahp.yaml", f.home + "/secret"},
		Cwd:        f.proj,
		AdminAddrs: []string{"http://127.0.0.1:7700"},
		PIDs:       []int{spPID},
	}
	f.opts.Params = sp.Params()
	return f
}

// shIn is a shell event run in dir.
func (f *spFastFixture) shIn(dir, cmd string) *Input {
	b, err := json.Marshal(map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}, "cwd": dir})
	if err != nil {
		panic(err)
	}
	return in(event(protocol.EventPreAction, string(b)))
}

// spOrdinary is a long ordinary prefix: the same words many times, files
// next to the protected ones (their directories' links are looked up, and
// remembered, before the attack), bare words and options.
func (f *spFastFixture) spOrdinary() string {
	step := "cat README.md src/a.go " + f.tmp + "/notes.txt; ls -l src ./src/sub; go build -o bin/x ./cmd/x; " +
		"grep -rn TODO --include=*.go . | wc -l; cp " + f.tmp + "/notes.txt " + f.tmp + "/notes2.txt; echo ok >> release.log\n"
	return strings.Repeat(step, 40)
}

// Attacker spellings after a long ordinary prefix are caught, each by the
// files rule (none of them is an admin command or a hook file).
func TestSelfProtectionLongScriptAttackerSpellings(t *testing.T) {
	f := newSPFastFixture(t)
	set, err := Compile(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	src, data := filepath.Join(f.proj, "src"), filepath.Join(f.proj, "ahp-data")
	pre := f.spOrdinary()
	cases := []struct{ dir, cmd string }{
		{src, "cat ../ahp-data/admin.token"},
		{src, "sqlite3 ../ahp-data/ahp.db .dump"},
		{filepath.Join(src, "sub"), "base64 ../../ahp.yaml"},
		{src, "myprog --config=../ahp.yaml"},
		{f.proj, "myprog --config=ahp.yaml"},
		{f.proj, "myprog --policy team.yaml"},
		{f.proj, "myprog of=ahp.sock"},
		{f.proj, "myprog ahp-data"},
		{f.proj, "myprog ahp.yaml"},
		{f.proj, "cat ahp-d*/admin.tok?"},
		{f.proj, "base64 ahp-d*/admin.tok?"},
		{f.proj, "myprog ahp.y?ml"},
		{f.proj, "cat " + f.tmp + "/dl/admin.token"},
		{f.proj, "base64 " + f.tmp + "/dl/admin.token"},
		{f.proj, "cat " + f.tmp + "/tok"},
		{f.proj, "sqlite3 " + f.tmp + "/tok"},
		{f.proj, "echo x > " + f.tmp + "/cfg"},
		{f.proj, "cat " + f.tmp + "/rel/admin.token"},
		{f.proj, "cat " + f.tmp + "/proj/team.yaml"},
		{f.proj, "base64 " + f.tmp + "/proj/src/../ahp.yaml"},
		{f.proj, "cat ../elsewhere/data-link/../ahp-data/admin.token"},
		{f.proj, "base64 ../elsewhere/data-link/../ahp-data/admin.token"},
		{f.proj, "cat ../elsewhere/data-link/admin.token"},
		{f.proj, "cat link/admin.token"},
		{data, "cat admin.token"},
		{data, "myprog admin.token"},
		{data, "myprog ."},
		{src, "rm -rf .."},
		{f.proj, "myprog ~/secret/key"},
		{f.proj, "myprog $HOME/secret"},
		{f.home, "myprog secret"},
		{f.proj, "rm -rf " + f.proj},
		{f.proj, "mv . ../moved"},
	}
	for _, c := range cases {
		for _, prefix := range []string{"", pre} {
			r := set.Evaluate(f.shIn(c.dir, prefix+c.cmd))
			if r.RuleID != spFiles {
				t.Errorf("in %s, %q after %d bytes: rule %q, want %s", c.dir, c.cmd, len(prefix), r.RuleID, spFiles)
			}
		}
	}
	// The prefix alone, and look-alikes, touch nothing.
	for _, c := range []struct{ dir, cmd string }{
		{f.proj, pre},
		{f.proj, pre + "myprog ahp.yml ahp-data2 team.yaml.bak --config=ahp.json"},
		{src, pre + "myprog ahp.yaml team.yaml ahp-data"},
		{src, pre + "cat " + f.tmp + "/notes"},
	} {
		if r := set.Evaluate(f.shIn(c.dir, c.cmd)); r.Matched {
			t.Errorf("in %s, %.60q...: matched %s", c.dir, c.cmd[max(0, len(c.cmd)-60):], r.RuleID)
		}
	}
}

// allPaths judges every event as refAllPaths does, with the same count of
// lookups and the same limit, on generated scripts of paths spelt every
// way, from several working directories.
func TestSelfProtectionPathsAsBefore(t *testing.T) {
	f := newSPFastFixture(t)
	set, err := Compile(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	g := parseGuard(types.DefaultTypeAdapter.NativeToValue(f.opts.Params))
	words := []string{
		"ahp-data", "ahp-data/admin.token", "./ahp-data", "ahp.yaml", "ahp.yml", "team.yaml", "ahp.sock",
		"README.md", "src", "src/a.go", "src/sub", "..", ".", "../ahp-data/admin.token", "../ahp.yaml",
		"../../etc/ahp.yaml", "link", "link/admin.token", "link/../team.yaml", "elsewhere/data-link/../ahp-data/admin.token",
		"~", "~/secret", "$HOME/secret/key", "${HOME}", "secret", "admin.token", "ahp-d*/admin.tok?", "*.yaml",
		"--config=ahp.yaml", "--out=src/x", "of=ahp.sock", "-v", "-rf", f.tmp + "/dl", f.tmp + "/dl/admin.token",
		f.tmp + "/tok", f.tmp + "/cfg", f.tmp + "/notes", f.tmp + "/notes.txt", f.tmp + "/loop", f.tmp + "/gone/x",
		f.tmp + "/rel/../dl", f.tmp + "/proj/src/../ahp.yaml", f.proj, f.root, "/", "//tmp//x/", "/etc/./passwd",
		".claude/settings.json", ".codex/config.toml", "http://x/y",
	}
	progs := []string{"cat", "myprog", "sqlite3", "rm -rf", "rm", "mv", "cp", "chmod 600", "chown me", "ls", "tee", "touch",
		"find . -name '*.token' -delete", "base64", "echo x >", "sed -i s/a/b/", "ln -s"}
	dirs := []string{f.proj, filepath.Join(f.proj, "src"), filepath.Join(f.proj, "ahp-data"), f.root, f.home, f.tmp, "/"}
	rng := rand.New(rand.NewPCG(25, 1))
	cmds := []string{
		"ls " + strings.Repeat("src/../README.md ", spMaxRealPaths+1),
		"ls " + strings.Repeat("src/../README.md ", spMaxRealPaths-1) + "ahp-data",
		"cat " + strings.Repeat("src/a.go ", spMaxRealPaths+5) + "ahp-data/admin.token",
	}
	for range 600 {
		var sb strings.Builder
		for range 1 + rng.IntN(6) {
			sb.WriteString(progs[rng.IntN(len(progs))])
			for range 1 + rng.IntN(4) {
				sb.WriteByte(' ')
				sb.WriteString(words[rng.IntN(len(words))])
			}
			sb.WriteString("; ")
		}
		cmds = append(cmds, sb.String())
	}
	hits := 0
	for i, cmd := range cmds {
		dir := dirs[i%len(dirs)]
		got, want := spReadings(t, set, g, f.shIn(dir, cmd).Event)
		if got != want {
			t.Errorf("in %s, %.200q: read %+v, before %+v", dir, cmd, got, want)
		}
		if want.files {
			hits++
		}
	}
	if hits < len(cmds)/4 || hits == len(cmds) {
		t.Errorf("%d of %d generated scripts touch a protected path: the comparison says little", hits, len(cmds))
	}
}

// The links of a path's directories are looked up once per evaluation,
// and the cached lookups give realPath's answer for links to directories
// and files, chains of links, loops, dangling links, missing tails and
// "..", in every order.
func TestSelfProtectionRealPathCache(t *testing.T) {
	f := newSPFastFixture(t)
	ps := []string{
		f.tmp + "/dl/admin.token", f.tmp + "/dl", f.tmp + "/tok", f.tmp + "/cfg", f.tmp + "/rel/admin.token",
		f.tmp + "/rel/../proj/team.yaml", f.tmp + "/dl/../team.yaml", f.tmp + "/loop", f.tmp + "/loop/x",
		f.tmp + "/gone", f.tmp + "/gone/x/y", f.tmp + "/notes", f.tmp + "/notes.txt", f.tmp + "/new/dir/file",
		f.tmp + "/proj/link/admin.token", f.tmp + "/proj/src/sub/../../ahp.yaml", f.proj + "/link", f.proj + "/link/",
		f.proj + "/./src", f.proj + "//src", f.root + "/elsewhere/data-link/../ahp-data/admin.token", "/", "/nonexistent/x",
		f.tmp + strings.Repeat("/d", 200), f.proj + strings.Repeat("/src/..", 100) + "/ahp-data/admin.token",
		f.tmp + "/dl" + strings.Repeat("/..", 70) + f.proj + "/team.yaml",
	}
	rng := rand.New(rand.NewPCG(25, 2))
	for round := range 20 {
		r := &pathReader{}
		order := slices.Clone(ps)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, p := range order {
			if got, want := r.realPath(p), realPath(p); got != want {
				t.Errorf("round %d: %s resolves to %s, realPath gives %s", round, p, got, want)
			}
		}
	}
	if got, want := (&pathReader{}).realPath(f.tmp+"/dl/admin.token"), filepath.Join(f.proj, "ahp-data", "admin.token"); got != want {
		t.Errorf("a link to the data directory resolves to %s, want %s", got, want)
	}
}

// mayRunAdmin passes every argv admincmd.Find matches: generated word
// lists of ahp's subcommands, their arguments, flags, wrappers and other
// words, and the words of the 10 KB build script.
func TestMayRunAdminCoversFind(t *testing.T) {
	vocab := []string{"ahp", "/usr/local/bin/ahp", "AHP.EXE", "ahp-hook", "myahp", "npx", "sudo", "env", "go", "run",
		"./cmd/ahp", "github.com/ahp-go/ahp/cmd/ahp@latest", "main.go", "stdio:ahp serve", "stdio:x approvals approve 1",
		"--data-dir", "--data-dir=/x", "--admin", "http://127.0.0.1:7700", "--token", "-v", "--", "-C", "x", "1", "git",
		"status", "log", "Serve", "SERVE", "approval", "claude-code", "codex", "gemini"}
	for sub := range admincmd.Subcommands {
		vocab = append(vocab, sub)
	}
	vocab = append(vocab, "list", "show", "approve", "deny", "install", "uninstall", "query", "tail", "export",
		"redact", "shadow-report", "add", "delete")
	names := []string{"myahp"}
	rng := rand.New(rand.NewPCG(25, 3))
	found := 0
	for range 50000 {
		argv := make([]string, 1+rng.IntN(7))
		for i := range argv {
			argv[i] = vocab[rng.IntN(len(vocab))]
		}
		if _, ok := admincmd.Find(argv, names); ok {
			found++
			if !mayRunAdmin(argv) {
				t.Fatalf("admincmd.Find matches %q, mayRunAdmin says it cannot", argv)
			}
		}
	}
	if found < 1000 {
		t.Fatalf("only %d generated commands run an admin subcommand", found)
	}
	// Every subcommand name passes, and a word of another length does not.
	for sub, admin := range admincmd.Subcommands {
		if got := mayRunAdmin([]string{"x", sub}); got != admin {
			t.Errorf("mayRunAdmin(x %s) = %v, want %v", sub, got, admin)
		}
	}
	if mayRunAdmin([]string{"go", "build", "-o", "bin/x", "./cmd/x"}) {
		t.Error("an ordinary go build could run an admin subcommand")
	}
}

// isAdminPath's quick refusal (no "v1", no "%") refuses nothing the full
// reading accepts.
func TestIsAdminPathQuickRefusal(t *testing.T) {
	for _, p := range []string{
		"/v1/approvals/1/approve", "//v1//approvals//1//deny", "/./v1/./policy/reload", "x/%76%31/approvals/2/approve",
		"http://h:1/v1%2Fpolicy%2Freload", "/%2576%31/policy/reload",
	} {
		slow := false
		for _, s := range []string{p, percentDecode(p)} {
			for strings.Contains(s, "//") || strings.Contains(s, "/./") {
				s = strings.ReplaceAll(strings.ReplaceAll(s, "//", "/"), "/./", "/")
			}
			slow = slow || strings.Contains(s, "/v1/approvals/") && (strings.Contains(s, "/approve") || strings.Contains(s, "/deny")) ||
				strings.Contains(s, "/v1/policy/reload")
		}
		if got := isAdminPath(p); got != slow {
			t.Errorf("isAdminPath(%q) = %v, the full reading says %v", p, got, slow)
		}
	}
	if !isAdminPath("x/%76%31/approvals/2/approve") {
		t.Error("a percent-encoded v1 is not read")
	}
}

// A word named again is not read again, but its addresses still count
// against spMaxAddrs: the same HOST:PORT repeated past the bound reaches
// the addresses limit as distinct ones do, and an admin path or address
// after many repetitions is still found.
func TestSelfProtectionRepeatedAddresses(t *testing.T) {
	f := newSPFixture(t)
	set, err := Compile(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	for cmd, rule := range map[string]string{
		"echo " + strings.Repeat("a:1 ", spMaxAddrs+1):                                              "self_protection.limit_addresses",
		"echo " + strings.Repeat("a:1 b:2 ", spMaxAddrs/2) + "c:3":                                  "self_protection.limit_addresses",
		"echo " + strings.Repeat("a:1 ", spMaxAddrs):                                                "",
		"echo " + strings.Repeat("a:1 ", spMaxAddrs-1) + "127.0.0.1:7700":                           spAPI,
		"echo " + strings.Repeat("x/y ", 5000) + "x/v1/policy/reload":                               spAPI,
		strings.Repeat("curl -s https://ci.example.com/api; ", 200) + "curl http://127.1:7700/v1/x": spAPI,
	} {
		if r := set.Evaluate(f.sh(cmd)); r.RuleID != rule {
			t.Errorf("%.40s... (%d bytes): rule %q, want %q", cmd, len(cmd), r.RuleID, rule)
		}
	}
}

// smallMap gives what a map gives, below and past its arrays.
func TestSmallMap(t *testing.T) {
	var s smallMap[string, int]
	want := map[string]int{}
	for i := range 3 * smallMapArray {
		k := fmt.Sprint("k", i%(2*smallMapArray+1))
		if v, ok := s.get(k); ok != (want[k] != 0) || ok && v != want[k] {
			t.Fatalf("get(%s) = %d, %v; want %d", k, v, ok, want[k])
		}
		if want[k] == 0 {
			s.put(k, i+1)
			want[k] = i + 1
		}
	}
	for k, v := range want {
		if got, ok := s.get(k); !ok || got != v {
			t.Errorf("get(%s) = %d, %v; want %d", k, got, ok, v)
		}
	}
	if _, ok := s.get("none"); ok {
		t.Error("a key never put is found")
	}
}
