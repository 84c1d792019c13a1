package effects

import (
	"encoding/json"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// The tool reader maps a tool call to effects: shell and code tools are
// read by the shell and interpreter readers, file and web tools of Claude
// Code, Codex, Gemini CLI and the MCP filesystem server map to Read,
// Write, Create, Delete, Move and Connect, and any other tool's path and
// URL arguments are read conservatively.

// argHolders are the payload members under which agents put a tool's
// arguments.
var argHolders = []string{"arguments", "tool_input", "input", "args", "params"}

// toolCall is one tool call being read.
type toolCall struct {
	s    *state
	name string // as given
	base string // lower case, MCP prefix dropped
	args []map[string]any
}

func (s *state) payload(p map[string]any) {
	if p == nil {
		return
	}
	if s.ctx.Cwd == "" {
		for _, v := range s.fields(p, "cwd") {
			if c, ok := v.(string); ok && strings.HasPrefix(c, "/") {
				s.ctx.Cwd = path.Clean(c)
				break
			}
		}
	}
	t := &toolCall{s: s}
	var names []string
	for _, k := range []string{"tool_name", "tool", "name"} {
		if n := s.stringFields(p, k); len(n) > 0 {
			t.name, names = n[0], n
			if len(n) > 1 {
				s.unknown(false, "tool: several tool names %q", n)
			}
			break
		}
	}
	for _, h := range argHolders {
		for _, v := range s.fields(p, h) {
			switch a := v.(type) {
			case map[string]any:
				t.args = append(t.args, a)
			case string:
				if h != "arguments" && h != "args" && h != "params" {
					// "input" holds a patch for Codex's apply_patch.
					t.args = append(t.args, map[string]any{"input": a})
					continue
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(a), &m); err != nil || m == nil {
					s.unknown(false, "tool: %s is a string that is not a JSON object", h)
					continue
				}
				t.args = append(t.args, m)
			}
		}
	}
	// An MCP tools/call request: {"params": {"name": ..., "arguments": ...}}.
	if t.name == "" && len(t.args) == 1 {
		if n := s.stringFields(t.args[0], "name"); len(n) == 1 {
			if v := s.fields(t.args[0], "arguments"); len(v) == 1 {
				s.payload(map[string]any{"tool_name": n[0], "arguments": v[0]})
				return
			}
		}
	}
	if len(t.args) == 0 {
		// The payload itself may carry the arguments ({"command": "..."}).
		t.args = []map[string]any{p}
	}
	t.base = toolBase(t.name)
	s.nested("tool", t.read)
	// Tools differ in which of several names they take ("tool_name" and
	// "Tool_Name"): the arguments are read as every one of them's.
	for _, n := range names[min(1, len(names)):] {
		other := *t
		other.name, other.base = n, toolBase(n)
		s.nested("tool", other.read)
	}
}

// toolBase lower-cases a tool name and drops an MCP server prefix
// (mcp__filesystem__write_file is write_file) and a namespace
// ("functions.shell" is shell).
func toolBase(n string) string {
	if i := strings.LastIndex(n, "__"); i >= 0 {
		n = n[i+2:]
	}
	if i := strings.LastIndexAny(n, "./"); i >= 0 && i < len(n)-1 {
		n = n[i+1:]
	}
	return strings.ToLower(strings.TrimSpace(n))
}

// fields returns the distinct values of the members of m named name: the
// member of exactly that name and those equal to it when letter case is
// ignored (as Go's encoding/json reads them). Two members with different
// values are an Unknown: tools differ in which one they read, so both are
// read.
func (s *state) fields(m map[string]any, name string) []any {
	var out []any
	if v, ok := m[name]; ok {
		out = append(out, v)
	}
	if lowerASCII(name) && s.lowerKeys(m) {
		// Two ASCII words with no capital letter are equal ignoring
		// case only when they are equal.
		return out
	}
	for k, v := range m {
		if k == name || !strings.EqualFold(k, name) {
			continue
		}
		dup := false
		for _, o := range out {
			if reflect.DeepEqual(o, v) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, v)
		}
	}
	if len(out) > 1 {
		s.unknown(false, "tool: %d members named %q when letter case is ignored, with different values", len(out), name)
	}
	return out
}

// lowerKeys reports whether every key of m is ASCII without a capital
// letter, remembering the answer for the maps of this analysis.
func (s *state) lowerKeys(m map[string]any) bool {
	p := reflect.ValueOf(m).UnsafePointer()
	for _, e := range s.lowerMaps {
		if e.m == p {
			return e.lower
		}
	}
	lower := true
	for k := range m {
		if !lowerASCII(k) {
			lower = false
			break
		}
	}
	if len(s.lowerMaps) < 16 {
		s.lowerMaps = append(s.lowerMaps, lowerMap{p, lower})
	}
	return lower
}

// lowerASCII reports whether s is ASCII without a capital letter.
func lowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// stringFields returns the string values of the members named name.
func (s *state) stringFields(m map[string]any, name string) []string {
	var out []string
	for _, v := range s.fields(m, name) {
		if str, ok := v.(string); ok && str != "" {
			out = append(out, str)
		}
	}
	return out
}

// str returns the string arguments named by any of names.
func (t *toolCall) str(names ...string) []string {
	var out []string
	for _, a := range t.args {
		for _, n := range names {
			out = append(out, t.s.stringFields(a, n)...)
		}
	}
	return out
}

// strs returns string and string-list arguments named by any of names.
func (t *toolCall) strs(names ...string) []string {
	var out []string
	for _, a := range t.args {
		for _, n := range names {
			for _, v := range t.s.fields(a, n) {
				switch x := v.(type) {
				case string:
					if x != "" {
						out = append(out, x)
					}
				case []any:
					for _, e := range x {
						if str, ok := e.(string); ok && str != "" {
							out = append(out, str)
						}
					}
				}
			}
		}
	}
	return out
}

func (t *toolCall) add(e Effect) {
	if e.Program == "" {
		e.Program = t.name
	}
	t.s.add(e)
}

// file records an effect on each path (relative ones against the agent's
// directory).
func (t *toolCall) file(k Kind, recursive bool, paths ...string) {
	for _, p := range paths {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		p = strings.TrimPrefix(p, "file://")
		t.add(Effect{Kind: k, Path: t.s.resolve(p), Recursive: recursive})
	}
}

func (t *toolCall) connect(urls ...string) {
	for _, u := range urls {
		u = strings.TrimSpace(u)
		if u == "" {
			continue
		}
		if !strings.Contains(u, "://") {
			u = "https://" + u // WebFetch upgrades http to https; a bare host is fetched over https
		}
		h, p := urlHostPort(u)
		t.add(Effect{Kind: Connect, Detail: &Detail{URL: u, Host: h, Port: p}})
	}
}

// pathArgs are the argument names that hold a path in file tools.
var pathArgs = []string{"file_path", "path", "filepath", "absolute_path", "notebook_path", "filename",
	"file", "target_file", "target", "dir_path", "directory", "dir", "paths", "files", "old_path", "new_path",
	"source", "src", "destination", "dest", "working_directory", "workdir"}

// shellTools are tools that run a shell command (lower case).
var shellTools = map[string]bool{"bash": true, "shell": true, "run_shell_command": true, "exec_command": true,
	"local_shell": true, "terminal": true, "run_terminal_cmd": true, "execute_command": true, "run_command": true,
	"shell_command": true, "exec": true, "command": true, "container.exec": true, "sh": true, "zsh": true,
	"powershell": false, "execute_bash": true, "bash_tool": true, "run_bash": true}

// codeTools are tools that run code (lower case); the value is the
// language when the tool names it.
var codeTools = map[string]string{"execute_code": "", "python": "python", "run_python": "python",
	"code_interpreter": "python", "ipython": "python", "execute_python": "python", "run_code": "",
	"jupyter": "python", "notebook_run": "python", "node": "node", "run_javascript": "node",
	"javascript": "node", "execute_javascript": "node"}

var urlInText = regexp.MustCompile(`(?i)\bhttps?://[^\s"'<>()\x60]+`)

func (t *toolCall) read() {
	b := t.base
	switch {
	case b == "apply_patch":
		t.patches(true)
		return
	case shellTools[b]:
		t.shell()
		return
	case codeTools[b] != "" || b == "execute_code" || b == "run_code":
		t.code(codeTools[b])
		return
	}
	switch b {
	// Claude Code.
	case "write", "write_file", "create_file", "edit", "multiedit", "replace", "str_replace_editor",
		"str_replace_based_edit_tool", "edit_file", "notebookedit", "save_file", "append_file":
		if b == "edit_file" && t.dryRun() {
			t.file(Read, false, t.strs(pathArgs...)...)
			return
		}
		if (b == "str_replace_based_edit_tool" || b == "str_replace_editor") &&
			slices.Equal(t.str("command"), []string{"view"}) {
			t.file(Read, false, t.strs(pathArgs...)...)
			return
		}
		t.file(Write, false, t.strs(pathArgs...)...)
		t.scriptContent()
		t.autorunContent()
	case "read", "read_file", "read_text_file", "read_media_file", "view", "notebookread", "cat", "open_file":
		t.file(Read, false, t.strs(pathArgs...)...)
	case "read_multiple_files", "read_many_files":
		t.readMany()
	case "glob", "list_directory", "list_directory_with_sizes", "ls", "list_dir", "get_file_info", "find_files":
		t.dirRead(false)
	case "grep", "search_file_content", "search_files", "directory_tree", "codebase_search", "grep_search":
		t.dirRead(true)
	case "create_directory", "mkdir":
		t.file(Create, false, t.strs(pathArgs...)...)
	case "move_file", "rename_file", "move":
		src := t.str("source", "src", "from", "old_path", "path")
		dst := t.str("destination", "dest", "dst", "to", "new_path")
		if len(src) == 0 || len(dst) == 0 {
			t.s.unknown(false, "tool %s: no source or destination", snippet(t.name))
			return
		}
		for _, sp := range src {
			for _, dp := range dst {
				t.add(Effect{Kind: Move, Path: t.s.resolve(sp), Dest: t.s.resolve(dp)})
			}
		}
	case "delete_file", "remove_file", "delete":
		t.file(Delete, false, t.strs(pathArgs...)...)
	case "webfetch", "web_fetch", "fetch", "fetch_url", "browse", "open_url":
		urls := t.strs("url", "urls", "uri")
		for _, p := range t.str("prompt") {
			urls = append(urls, urlInText.FindAllString(p, 16)...)
		}
		if len(urls) == 0 {
			t.s.unknown(false, "tool %s: no URL read", snippet(t.name))
		}
		t.connect(urls...)
	case "websearch", "web_search", "google_web_search", "search_web":
		// The query goes to the tool's search provider.
		t.add(Effect{Kind: Send, Detail: &Detail{Source: "data"}})
	default:
		t.generic()
		t.patches(false)
	}
}

func (t *toolCall) dryRun() bool {
	for _, a := range t.args {
		for _, v := range t.s.fields(a, "dryRun") {
			if v == true {
				return true
			}
		}
	}
	return false
}

// readMany reads the paths (and patterns) of read_multiple_files and
// read_many_files.
func (t *toolCall) readMany() {
	for _, p := range t.strs("paths", "include", "path") {
		t.file(Read, strings.Contains(p, "**"), p)
	}
}

// dirRead reads the directory a listing or search tool looks in (the
// agent's directory when none is given), with its pattern.
func (t *toolCall) dirRead(recursive bool) {
	dirs := t.strs("path", "paths", "dir_path", "dir", "directory", "absolute_path", "target_directory", "root")
	pats := t.str("pattern", "glob", "include")
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	for _, d := range dirs {
		rec := recursive
		for _, p := range pats {
			if strings.Contains(p, "**") || strings.Contains(p, "/") {
				rec = true
			}
		}
		t.file(Read, rec, d)
	}
	if t.base == "glob" {
		for _, p := range pats {
			if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.Contains(p, "..") {
				t.file(Read, strings.Contains(p, "**"), p)
			}
		}
	}
}

// shell reads a shell tool's command (a string, an argv list, or a list of
// scripts), in the directory the tool names if it names one.
func (t *toolCall) shell() {
	t.workdir()
	found := false
	for _, a := range t.args {
		for _, k := range []string{"command", "cmd", "script", "commands", "code", "input"} {
			for _, v := range t.s.fields(a, k) {
				switch x := v.(type) {
				case string:
					if x != "" {
						found = true
						t.shellLine(x)
					}
				case []any:
					words := make([]string, 0, len(x))
					for _, e := range x {
						w, ok := e.(string)
						if !ok {
							t.s.unknown(false, "tool %s: a %s element that is not a string", snippet(t.name), k)
							continue
						}
						words = append(words, w)
					}
					if len(words) == 0 {
						continue
					}
					found = true
					switch {
					case k == "commands":
						t.shellLine(strings.Join(words, "\n"))
					case words[0] == "apply_patch" || words[0] == "applypatch":
						for _, w := range words[1:] {
							t.patchText(w)
						}
					case len(words) == 3 && shellWords[path.Base(words[0])] && strings.HasPrefix(words[1], "-") &&
						strings.HasSuffix(words[1], "c") && strings.Contains(words[2], "*** Begin Patch"):
						// ["bash", "-lc", "apply_patch <<'EOF' ..."] (Codex): the
						// script, whose patch is data.
						t.shellLine(words[2])
					default:
						t.shellLine(JoinArgv(words))
					}
				}
			}
		}
	}
	if !found {
		t.s.unknown(false, "tool %s: no command read", snippet(t.name))
	}
}

// shellLine reads a command line; a patch in it (apply_patch with a
// here-document) is data: only what precedes it is shell.
func (t *toolCall) shellLine(line string) {
	if i := strings.Index(line, "*** Begin Patch"); i >= 0 {
		t.patchText(line[i:])
		line = line[:i]
		if strings.TrimSpace(line) == "" {
			return
		}
	}
	shellReader(t.s, line)
}

// shellWords are shells that run a script given with -c.
var shellWords = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true}

// workdir takes the directory a shell tool runs in (Codex "workdir",
// Gemini CLI "directory", "cwd") against the agent's directory.
func (t *toolCall) workdir() {
	dirs := t.str("workdir", "cwd", "directory", "working_directory", "dir")
	if len(dirs) == 0 {
		return
	}
	if r := t.s.resolve(dirs[0]); strings.HasPrefix(r, "/") {
		t.s.ctx.Cwd = r
	} else {
		t.s.unknown(false, "tool %s: runs in %q, a directory not known", snippet(t.name), snippet(dirs[0]))
		t.s.ctx.Cwd = lostCwd
	}
}

// code reads a code tool's code in its language.
func (t *toolCall) code(lang string) {
	t.workdir()
	if l := t.str("language", "lang", "kernel", "runtime"); len(l) > 0 {
		lang = l[0]
	}
	codes := t.str("code", "source", "script", "cell", "input")
	if len(codes) == 0 {
		t.s.unknown(false, "tool %s: no code read", snippet(t.name))
		return
	}
	if lang == "" {
		t.s.unknown(false, "tool %s: code in a language not named", snippet(t.name))
		lang = "python" // the usual default of code tools: read it as Python too
	}
	for _, c := range codes {
		t.s.code(lang, c)
	}
}

// generic reads a tool the reader does not know by its arguments: a
// command or code is read, paths are read or written (as the tool's name
// suggests), URLs are connected to.
func (t *toolCall) generic() {
	if len(t.strs("command", "cmd")) > 0 {
		t.shell()
		return
	}
	if codes := t.str("code"); len(codes) > 0 && len(t.str("language", "lang")) > 0 {
		t.code("")
		return
	}
	k := Read
	for _, w := range []string{"write", "edit", "create", "save", "append", "patch", "replace", "update",
		"put", "upload", "insert", "modify", "overwrite"} {
		if strings.Contains(t.base, w) {
			k = Write
		}
	}
	for _, w := range []string{"delete", "remove", "unlink", "rmdir"} {
		if strings.Contains(t.base, w) {
			k = Delete
		}
	}
	t.file(k, false, t.strs(pathArgs...)...)
	t.connect(t.strs("url", "urls", "uri", "endpoint", "base_url")...)
}

// patches reads every string argument that holds a patch (Codex's
// apply_patch, with the patch in "input", "patch" or any other member).
func (t *toolCall) patches(required bool) {
	found := false
	for _, a := range t.args {
		keys := make([]string, 0, len(a))
		for k := range a {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			switch v := a[k].(type) {
			case string:
				if strings.Contains(v, "*** Begin Patch") || required && strings.Contains(v, "*** ") {
					found = true
					t.patchText(v)
				}
			case []any:
				for _, e := range v {
					if str, ok := e.(string); ok && strings.Contains(str, "*** Begin Patch") {
						found = true
						t.patchText(str)
					}
				}
			}
		}
	}
	if required && !found {
		t.s.unknown(false, "tool %s: no patch read", snippet(t.name))
	}
}

// patchText records the files a patch in Codex's format adds, updates,
// moves and deletes.
func (t *toolCall) patchText(patch string) {
	last := ""
	for line := range strings.SplitSeq(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, "*** Add File: "):
			last = ""
			t.file(Write, false, strings.TrimPrefix(line, "*** Add File: "))
		case strings.HasPrefix(line, "*** Update File: "):
			last = strings.TrimSpace(strings.TrimPrefix(line, "*** Update File: "))
			t.file(Write, false, last)
		case strings.HasPrefix(line, "*** Delete File: "):
			last = ""
			t.file(Delete, false, strings.TrimPrefix(line, "*** Delete File: "))
		case strings.HasPrefix(line, "*** Move to: "):
			dst := strings.TrimSpace(strings.TrimPrefix(line, "*** Move to: "))
			if last == "" {
				t.s.unknown(false, "tool %s: a patch moves a file it does not update", snippet(t.name))
				t.file(Write, false, dst)
				continue
			}
			t.add(Effect{Kind: Move, Path: t.s.resolve(last), Dest: t.s.resolve(dst)})
			t.file(Write, false, dst)
		}
	}
}

// autorunContent reads what a file tool writes into a file a developer
// tool runs by itself (autorun.go): the whole file for a write, the file
// on disk with the edit made when the harness can see it, else the text
// the edit puts in.
func (t *toolCall) autorunContent() {
	for _, p := range t.strs(pathArgs...) {
		p = t.s.resolve(strings.TrimPrefix(strings.TrimSpace(p), "file://"))
		if autorunClassOf(p) == arNone {
			continue
		}
		if full := t.str("content", "file_text", "text"); len(full) > 0 {
			for _, c := range full {
				t.s.autorunWrite(p, c, true, false)
			}
			continue
		}
		news, olds := t.str("new_string", "new_str", "insert_text"), t.str("old_string", "old_str")
		if text, ok := t.editedFile(p, olds, news); ok {
			t.s.autorunWrite(p, text, true, false)
			continue
		}
		if len(news) == 0 {
			t.s.autorunWrite(p, "", false, false)
			continue
		}
		for _, c := range news {
			t.s.autorunWrite(p, c, true, true)
		}
	}
}

// editedFile is the file at p as an edit leaves it (each old text
// replaced by its new one), when the harness can see the file and finds
// every old text in it.
func (t *toolCall) editedFile(p string, olds, news []string) (string, bool) {
	fs := t.s.ctx.FS
	if fs == nil || len(olds) == 0 || len(olds) != len(news) || !strings.HasPrefix(p, "/") {
		return "", false
	}
	data, trunc, err := fs.ReadFile(p, MaxScriptBytes)
	if err != nil || trunc {
		return "", false
	}
	text := string(data)
	for i, o := range olds {
		if o == "" || !strings.Contains(text, o) {
			return "", false
		}
		text = strings.Replace(text, o, news[i], 1)
	}
	return text, true
}

// scriptLangs are the languages of script files by extension.
var scriptLangs = map[string]string{".sh": "sh", ".bash": "sh", ".zsh": "sh", ".ksh": "sh", ".py": "python",
	".pl": "perl", ".rb": "ruby", ".php": "php", ".js": "node", ".mjs": "node", ".cjs": "node",
	".go": "go", ".lua": "lua", ".ps1": "powershell", ".tcl": "tcl"}

// scriptContent reads the content a file tool writes into a script (by its
// extension or its #! line) and keeps one shape of what that script would
// do when run: an interpreter fed from a network socket, a reverse or bind
// shell (a Download with Into and no URL). Writing such a file is the
// first half of an attack; nothing else the script would do is reported
// for a write, since writing a script is not running it.
func (t *toolCall) scriptContent() {
	paths := t.strs(pathArgs...)
	for _, c := range t.str("content", "new_string", "file_text", "text", "new_str") {
		lang := ""
		for _, p := range paths {
			if l, ok := scriptLangs[strings.ToLower(path.Ext(p))]; ok {
				lang = l
			}
		}
		if strings.HasPrefix(c, "#!") {
			first, _, _ := strings.Cut(c, "\n")
			switch {
			case strings.Contains(first, "python"):
				lang = "python"
			case strings.Contains(first, "perl"):
				lang = "perl"
			case strings.Contains(first, "ruby"):
				lang = "ruby"
			case strings.Contains(first, "node"):
				lang = "node"
			case strings.Contains(first, "sh"):
				lang = "sh"
			}
		}
		if lang == "" || len(c) > MaxInput {
			continue
		}
		sub := newState(t.s.ctx)
		sub.ctx.FS = nil
		sub.via = t.s.via + ">content"
		sub.code(lang, c)
		for _, e := range sub.finish() {
			if e.Kind == Download && e.Into() != "" && e.URL() == "" {
				t.s.add(e)
			}
		}
	}
}
