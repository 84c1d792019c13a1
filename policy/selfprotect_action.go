package policy

import (
	"path"
	"path/filepath"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// Bounds on the work the self_protection functions do for one event. An
// event that reaches one is not read part way and then judged on what was
// read: the pack's limit rules block it, naming the limit (see
// limitReached and docs/security.md, "Limits of the self-protection
// analysis"). The pack's YAML repeats these numbers in its reasons;
// TestSelfProtectionLimitReasons keeps the two in step.
const (
	spMaxLine      = 1 << 20 // bytes of shell command read
	spMaxCommands  = 4096    // simple commands looked at, nested shells included
	spMaxWords     = 65536   // words of those commands
	spMaxShellNest = 8       // bash -c 'bash -c "..."' and eval levels followed
	spMaxRealPaths = 1024    // paths resolved through the file system
	spMaxPathDepth = 64      // names in one path resolved through the file system
	spMaxPatterns  = 64      // pkill/killall/pgrep patterns judged
	spMaxAddrs     = 4096    // host:port candidates compared with the admin API
)

// The limits an event can reach, as self_protection_limit names them.
const (
	limitLength    = "length"
	limitCommands  = "commands"
	limitWords     = "words"
	limitNesting   = "nesting"
	limitPaths     = "paths"
	limitPatterns  = "patterns"
	limitAddresses = "addresses"
)

// spCheck names one of the pack's checks; spAction remembers each result.
type spCheck int

const (
	spCheckFiles spCheck = iota
	spCheckHooks
	spCheckAdmin
	spCheckAPI
	spCheckStop
	spChecks
)

// spAction is one event as the self_protection rules read it.
type spAction struct {
	g     *guard
	tool  string   // lower-case tool name, MCP prefix removed
	cwd   string   // where relative paths start ("" when unknown)
	cmds  []spCmd  // simple commands of the shell command
	files []spPath // paths of file tools and patches
	urls  []string // URL-like arguments
	line  string   // the whole shell command
	real  int      // paths resolved so far
	cache []spPath // shell paths, computed on first use
	done  bool     // cache filled
	all   []spPath // every path, computed on first use
	words int      // words of the commands read so far
	limit string   // the first limit reached ("" none)
	// results of the checks: 0 not run, 1 false, 2 true
	results [spChecks]int8
}

// reach records that the analysis reached a limit (the first one counts).
func (a *spAction) reach(limit string) {
	if a.limit == "" {
		a.limit = limit
	}
}

// check runs one of the pack's checks once per event.
func (a *spAction) check(c spCheck) bool {
	if r := a.results[c]; r != 0 {
		return r == 2
	}
	var hit bool
	switch c {
	case spCheckFiles:
		hit = a.touchesHarnessFiles()
	case spCheckHooks:
		hit = a.changesAgentHooks()
	case spCheckAdmin:
		hit = a.runsHarnessAdmin()
	case spCheckAPI:
		hit = a.callsAdminAPI()
	case spCheckStop:
		hit = a.stopsHarness()
	}
	a.results[c] = 1
	if hit {
		a.results[c] = 2
	}
	return hit
}

// limitReached runs every check (each may reach a limit of its own) and
// returns the first limit reached, "" when the whole event was read.
func (a *spAction) limitReached() string {
	for c := range spChecks {
		a.check(c)
	}
	return a.limit
}

// spCmd is one simple command and the directory it runs in.
type spCmd struct {
	words []shellWord
	start int // index of the command word (len(words) when none)
	cwd   string
}

// name returns the base name of the command word.
func (c spCmd) name() string {
	if c.start >= len(c.words) {
		return ""
	}
	return baseName(c.words[c.start].text)
}

// args returns the words after the command word.
func (c spCmd) args() []shellWord {
	if c.start >= len(c.words) {
		return nil
	}
	return c.words[c.start+1:]
}

// spPath is a path an action names, made absolute.
type spPath struct {
	abs string
	// resolve: look for symbolic links in it (a file tool's path, a
	// redirection target, or a shell word with a slash in it).
	resolve bool
	real    string // abs with symbolic links resolved; "" until looked up
	write   bool   // the action may change it
	destroy bool   // the action may delete, move or re-own it and what it holds
	glob    bool
	exec    bool // the command word: running it is not touching it
	// raw is the path joined to its directory but not cleaned, when it
	// has a ".." in it: the kernel takes ".." after a symbolic link from
	// the link's target, where cleaning takes it lexically.
	raw string
}

// rawJoin joins p to dir without cleaning, when p has a ".." name (else
// "": abs says all).
func rawJoin(p, dir string) string {
	if !hasDotDot(p) {
		return ""
	}
	if !strings.HasPrefix(p, "/") {
		if dir == "" {
			return ""
		}
		p = dir + "/" + p
	}
	return p
}

// cwdKeys hold the working directory of a tool call.
var cwdKeys = keys("cwd", "workdir", "working_directory", "directory")

// readAction reads the payload once per evaluation: the five functions of
// the pack share what it found (kept in the payload object, which lives as
// long as the evaluation).
func readAction(payload ref.Val, g *guard) *spAction {
	o, _ := payload.(*jsonObject)
	if o != nil && o.sp != nil && o.sp.g == g {
		return o.sp
	}
	a := newAction(payload, g)
	if o != nil {
		o.sp = a
	}
	return a
}

func newAction(payload ref.Val, g *guard) *spAction {
	a := &spAction{g: g, cwd: g.cwd}
	hs, n := holders(payload)
	if n > 0 {
		if t, ok := hs[0].Find(types.String("tool_name")); ok {
			if s, ok := t.(types.String); ok {
				a.tool = toolBase(string(s))
			}
		}
	}
	// The top-level cwd (hooks) first, then a tool's own directory, which
	// may be relative to it (Gemini CLI's directory argument).
	for i, m := range hs[:n] {
		for _, k := range cwdKeys {
			if v, ok := m.Find(k); ok {
				if s, ok := v.(types.String); ok && s != "" {
					a.cwd = absAgainst(a.expand(string(s)), a.cwd)
				}
			}
		}
		if i == 0 && n > 1 {
			continue // top-level keys describe the call, not its paths
		}
		for _, k := range fileKeys {
			if v, ok := m.Find(k); ok {
				for _, s := range stringsOf(v) {
					a.addFile(s, !readTools[a.tool])
				}
			}
		}
		for _, k := range urlKeys {
			if v, ok := m.Find(k); ok {
				a.urls = append(a.urls, stringsOf(v)...)
			}
		}
		a.patches(m)
	}
	a.line = shellCommand(payload)
	shell := a.line
	if len(shell) > spMaxLine {
		a.reach(limitLength)
		return a
	}
	if i := strings.Index(shell, "*** Begin Patch"); i >= 0 {
		// apply_patch with the patch as an argument or a here-document:
		// the patch is data, only what precedes it is shell.
		a.patchText(shell[i:])
		shell = shell[:i]
	}
	a.walk(shell, a.cwd, 0)
	return a
}

// fileKeys are the argument names of file tools that hold paths.
var fileKeys = append(keys("absolute_path"), pathKeys...)

// readTools are file tools that only read (by base name, lower case).
var readTools = map[string]bool{
	"read": true, "read_file": true, "read_text_file": true, "read_media_file": true,
	"read_multiple_files": true, "read_many_files": true, "list_directory": true, "list_dir": true,
	"ls": true, "glob": true, "grep": true, "search_files": true, "search_file_content": true,
	"get_file_info": true, "directory_tree": true, "view": true, "notebookread": true,
}

// toolBase lower-cases a tool name and drops an MCP prefix
// (mcp__filesystem__write_file is write_file).
func toolBase(t string) string {
	if i := strings.LastIndex(t, "__"); i >= 0 {
		t = t[i+2:]
	}
	return strings.ToLower(t)
}

func (a *spAction) expand(p string) string { return expandHomeWith(p, a.g.home) }

func (a *spAction) addFile(p string, write bool) {
	p = strings.TrimSpace(p)
	if p == "" || strings.Contains(p, "://") {
		return
	}
	abs := absAgainst(a.expand(p), a.cwd)
	if !filepath.IsAbs(abs) {
		return
	}
	a.files = append(a.files, spPath{abs: abs, resolve: true, write: write, destroy: write && destroyingTool(a.tool), glob: strings.ContainsAny(abs, "*?["),
		raw: rawJoin(a.expand(p), a.cwd)})
}

// patches reads apply_patch arguments (Codex): any string argument that
// holds a patch.
func (a *spAction) patches(m traits.Mapper) {
	it := m.Iterator()
	for it.HasNext() == types.True {
		v, _ := m.Find(it.Next())
		if s, ok := v.(types.String); ok && strings.Contains(string(s), "*** Begin Patch") {
			a.patchText(string(s))
		}
	}
}

// patchHeaders start the lines of a patch that name files.
var patchHeaders = []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}

func (a *spAction) patchText(s string) {
	for line := range strings.SplitSeq(s, "\n") {
		for _, h := range patchHeaders {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), h); ok {
				a.addFile(rest, true)
			}
		}
	}
}

// shells are the command words that run a script given with -c.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "ash": true, "fish": true, "busybox": true}

// walk splits a command line into simple commands, following cd for the
// working directory and descending into sh -c and eval scripts.
func (a *spAction) walk(line, cwd string, depth int) {
	if strings.TrimSpace(line) == "" {
		return
	}
	if depth > spMaxShellNest {
		a.reach(limitNesting)
		return
	}
	for _, words := range splitCommands(line) {
		if len(a.cmds) >= spMaxCommands {
			a.reach(limitCommands)
			return
		}
		if a.words += len(words); a.words > spMaxWords {
			a.reach(limitWords)
			return
		}
		c := spCmd{words: words, start: commandStart(words), cwd: cwd}
		a.cmds = append(a.cmds, c)
		args := c.args()
		switch name := c.name(); {
		case name == "cd" || name == "pushd":
			if len(args) > 0 && !strings.HasPrefix(args[0].text, "-") {
				cwd = absAgainst(a.expand(args[0].text), cwd)
			} else if len(args) == 0 && a.g.home != "" {
				cwd = a.g.home
			}
		case shells[name]:
			for i, w := range args {
				if strings.HasPrefix(w.text, "-") && !strings.HasPrefix(w.text, "--") && strings.ContainsRune(w.text, 'c') && i+1 < len(args) {
					a.walk(args[i+1].text, cwd, depth+1)
					break
				}
			}
		case name == "eval":
			var parts []string
			for _, w := range args {
				parts = append(parts, w.text)
			}
			a.walk(strings.Join(parts, " "), cwd, depth+1)
		}
	}
}

// destructive are commands that delete, move or re-own what they are
// given, so naming a directory above a protected file counts.
var destructive = map[string]bool{
	"rm": true, "rmdir": true, "mv": true, "unlink": true, "shred": true, "srm": true,
	"trash": true, "trash-put": true, "chmod": true, "chown": true, "chgrp": true,
}

// destroys reports whether a simple command deletes, moves or re-owns
// what it names (find only with -delete or -exec, rsync only with
// --delete or --remove-source-files).
func (c spCmd) destroys() bool {
	name := c.name()
	if destructive[name] {
		return true
	}
	for _, w := range c.args() {
		switch {
		case name == "find" && (w.text == "-delete" || w.text == "-exec" || w.text == "-execdir" || w.text == "-ok"),
			name == "rsync" && (strings.HasPrefix(w.text, "--delete") || w.text == "--remove-source-files"):
			return true
		}
	}
	return false
}

// destroyingTool reports whether a file tool deletes or moves its paths.
func destroyingTool(tool string) bool {
	for _, w := range []string{"delete", "remove", "move", "rename"} {
		if strings.Contains(tool, w) {
			return true
		}
	}
	return false
}

// readCommands only read the files they are given (unless written to by a
// redirection, or edited in place with -i).
var readCommands = map[string]bool{
	"cat": true, "less": true, "more": true, "head": true, "tail": true, "grep": true,
	"egrep": true, "fgrep": true, "rg": true, "ag": true, "jq": true, "diff": true,
	"cmp": true, "wc": true, "stat": true, "ls": true, "file": true, "bat": true,
	"nl": true, "od": true, "xxd": true, "hexdump": true, "md5sum": true, "sha1sum": true,
	"sha256sum": true, "test": true, "[": true, "readlink": true, "realpath": true,
	"sed": true, "awk": true, "yq": true, "cd": true, "pushd": true,
}

// shellPaths returns the paths the shell commands name, made absolute,
// with whether the command may change them.
func (a *spAction) shellPaths() []spPath {
	if a.done {
		return a.cache
	}
	a.done = true
	for _, c := range a.cmds {
		name := c.name()
		inPlace := false
		for _, w := range c.args() {
			if w.text == "-i" || strings.HasPrefix(w.text, "-i") && (name == "sed" || name == "perl" || name == "yq") || strings.HasPrefix(w.text, "--in-place") {
				inPlace = true
			}
		}
		reads := readCommands[name] && !inPlace
		destroys := c.destroys()
		for i, w := range c.words {
			if i < c.start && !w.redirect {
				continue // wrappers and assignments before the command
			}
			if i == c.start && !w.redirect && !strings.Contains(w.text, "/") {
				continue // a command found on $PATH
			}
			for _, p := range wordPaths(w.text) {
				abs := absAgainst(a.expand(p), c.cwd)
				if !filepath.IsAbs(abs) {
					continue
				}
				a.cache = append(a.cache, spPath{abs: abs, resolve: w.redirect || strings.Contains(p, "/"),
					write: w.redirect || !reads, destroy: destroys,
					glob: strings.ContainsAny(p, "*?["), exec: i == c.start && !w.redirect,
					raw: rawJoin(a.expand(p), c.cwd)})
			}
		}
	}
	return a.cache
}

// wordPaths returns the path candidates in a shell word: the word, and
// the value of an option or assignment (--file=x, of=x, VAR=x).
func wordPaths(w string) []string {
	if w == "" || strings.Contains(w, "://") {
		return nil
	}
	var out []string
	if !strings.HasPrefix(w, "-") {
		out = append(out, w)
	}
	if eq := strings.IndexByte(w, '='); eq >= 0 && eq+1 < len(w) {
		out = append(out, w[eq+1:])
	}
	return out
}

// allPaths returns every path the action names, each with its real
// path when it has symbolic links in it. More than spMaxRealPaths
// lookups, or a path deeper than spMaxPathDepth, reaches the paths limit.
func (a *spAction) allPaths() []spPath {
	if a.all != nil {
		return a.all
	}
	sp := a.shellPaths()
	a.all = make([]spPath, 0, len(sp)+len(a.files))
	a.all = append(append(a.all, a.files...), sp...)
	for i := range a.all {
		p := &a.all[i]
		p.real = p.abs
		if !p.resolve || p.glob {
			continue
		}
		if a.real >= spMaxRealPaths || strings.Count(p.abs, "/") > spMaxPathDepth {
			a.reach(limitPaths)
			continue
		}
		a.real++
		if p.raw != "" {
			p.real = realPath(p.raw)
		} else {
			p.real = realPath(p.abs)
		}
	}
	return a.all
}

// touchesHarnessFiles: the action names a protected path, a path inside
// one, or (deleting, moving or re-owning) a directory above one.
func (a *spAction) touchesHarnessFiles() bool {
	if len(a.g.paths) == 0 && len(a.g.exes) == 0 {
		return false
	}
	for _, p := range a.allPaths() {
		if a.hitsProtected(p) {
			return true
		}
		if p.real != p.abs {
			p.abs = p.real
			if a.hitsProtected(p) {
				return true
			}
		}
	}
	return false
}

func (a *spAction) hitsProtected(p spPath) bool {
	pc := components(p.abs)
	if len(pc) == 0 && !p.glob {
		return false // all of /: the destructive_shell pack's business
	}
	for _, prot := range a.g.paths {
		under, above := relate(pc, prot, p.glob)
		if under || (above && p.destroy) {
			return true
		}
	}
	for _, prot := range a.g.exes {
		under, above := relate(pc, prot, p.glob)
		if under && !p.exec || above && p.destroy {
			return true
		}
	}
	return false
}

// relate compares path components c with a protected path's: under is
// true when c is the protected path or inside it, above when c is a
// directory that holds it. With glob, the components of c are patterns.
func relate(c, prot []string, glob bool) (under, above bool) {
	k := min(len(c), len(prot))
	for i := range k {
		if glob {
			if ok, err := path.Match(c[i], prot[i]); err != nil || !ok {
				return false, false
			}
		} else if c[i] != prot[i] {
			return false, false
		}
	}
	return len(c) >= len(prot), len(c) < len(prot)
}

// changesAgentHooks: the action writes, moves or deletes a supported
// agent's hook settings (or their directory).
func (a *spAction) changesAgentHooks() bool {
	for _, p := range a.allPaths() {
		if !p.write {
			continue
		}
		if isHookSettings(p.abs, p.destroy) || p.real != p.abs && isHookSettings(p.real, p.destroy) {
			return true
		}
	}
	return false
}

// agentDirs are the per-user and per-project settings directories of the
// supported agents.
var agentDirs = map[string]bool{".claude": true, ".codex": true, ".gemini": true}

// isHookSettings reports whether p is where a supported agent reads its
// hooks: .claude/settings*.json, .codex/config.toml or hooks.json,
// .gemini/settings.json, the managed copies under /etc, and hook scripts
// kept in those directories. With destroys, the directories themselves
// count too.
func isHookSettings(p string, destroys bool) bool {
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	parent := path.Base(dir)
	if destroys && agentDirs[base] {
		return true
	}
	switch parent {
	case ".claude":
		if strings.HasPrefix(base, "settings") && strings.HasSuffix(base, ".json") {
			return true
		}
	case ".codex":
		if base == "config.toml" || base == "hooks.json" {
			return true
		}
	case ".gemini":
		if base == "settings.json" {
			return true
		}
	case "claude-code", "gemini-cli", "codex":
		if strings.HasPrefix(dir, "/etc/") || strings.HasPrefix(dir, "/Library/") {
			return true // managed settings of the machine
		}
	case "hooks":
		if agentDirs[path.Base(path.Dir(dir))] {
			return true
		}
	}
	for d := dir; d != "/" && d != "." && d != ""; d = path.Dir(d) {
		if path.Base(d) == "hooks" && agentDirs[path.Base(path.Dir(d))] {
			return true
		}
	}
	return false
}
