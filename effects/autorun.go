package effects

import (
	"encoding/json"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Footholds: files that developer tools run by themselves. An editor runs
// a task on folder open and the programs its settings name, direnv runs
// .envrc on cd, npm runs a package's lifecycle scripts on install, Python
// runs .pth import lines and sitecustomize at start-up, an IDE runs its
// run configurations, a CI service runs a workflow with the repository's
// secrets. When an action writes one of these files, the commands it puts
// there are read now, one level deeper under the reader "autorun" (or
// "lifecycle" for package scripts, which run when someone installs), with
// the folder the tool opens as working directory: every rule judges them
// as if they ran. A write whose content the analysis does not know (a
// copy, a move, a link, an interpreter's write, a download) is an Unknown
// whose reason starts "autorun: ".

// autorunClass says which tool runs a file by itself.
type autorunClass uint8

const (
	arNone autorunClass = iota
	arDirenv
	arVSCodeTasks
	arVSCodeSettings
	arVSCodeWorkspace
	arDevcontainer
	arJetBrains
	arPackageJSON
	arPth
	arPyCustomize
	arCI
	arGitConfig
)

// autorunWhat names each class in an Unknown's reason.
var autorunWhat = [...]string{
	arDirenv:          "a direnv file, run when a shell enters its directory",
	arVSCodeTasks:     "an editor's tasks, run on folder open",
	arVSCodeSettings:  "an editor's settings, whose programs it runs",
	arVSCodeWorkspace: "an editor's workspace, whose tasks and programs it runs",
	arDevcontainer:    "a dev container definition, whose commands run on create and start",
	arJetBrains:       "an IDE's run configuration",
	arPackageJSON:     "a package manifest, whose lifecycle scripts run on install",
	arPth:             "a Python .pth file, whose import lines run at every start",
	arPyCustomize:     "a Python start-up module, run at every start",
	arCI:              "a CI workflow",
	arGitConfig:       "a git configuration, whose settings may run commands",
}

// autorunNames are the file names autorunClassOf knows, with a path
// each may have, for a glob the analysis could not expand.
var autorunNames = []string{".vscode/tasks.json", ".vscode/settings.json", ".devcontainer/devcontainer.json", "x/.devcontainer.json",
	".idea/workspace.xml", "x/package.json", "x/.envrc", "x/sitecustomize.py", "x/usercustomize.py", "x/.gitlab-ci.yml",
	"x/.gitconfig", ".git/config", "x/x.code-workspace", ".github/workflows/x.yml", ".run/x.xml"}

// autorunClassOf returns the class of path p (arNone for most paths; a
// few string tests, as it runs for every write). A glob the analysis
// could not expand (echo … > .vscode/task?.json) has the class of a file
// it may name.
func autorunClassOf(p string) autorunClass {
	if c := autorunClassOfName(p); c != arNone || !strings.ContainsAny(p, "*?[") {
		return c
	}
	dir, base := path.Split(p)
	parent := path.Base(strings.TrimSuffix(dir, "/"))
	if len(strings.Trim(base, "*?")) < 3 || strings.HasPrefix(base, "*") || strings.HasPrefix(base, "?") {
		return arNone // *, *.py, ?*.json: any file of a kind, not one of these
	}
	for _, n := range autorunNames {
		np, nb := path.Split(n)
		if strings.HasPrefix(nb, ".") && !strings.HasPrefix(base, ".") {
			continue // a glob's leading wildcard does not match a dot
		}
		if ok, _ := path.Match(base, nb); !ok && !strings.Contains(nb, "x") {
			continue
		} else if !ok {
			// x.yml, x.xml, x.code-workspace: any name with that end
			// x.yml in .github/workflows: any name there; x.code-workspace
			// anywhere: a name with that end
			if ok, _ := path.Match(base, strings.Replace(nb, "x", "a", 1)); !ok && (np == "x/" || parent != path.Base(np)) {
				continue
			}
		}
		if np = strings.TrimSuffix(np, "/"); np != "x" {
			if ok, _ := path.Match(parent, path.Base(np)); !ok {
				continue
			}
		}
		return autorunClassOfName(path.Join(strings.TrimSuffix(dir, "/"), "..", n))
	}
	return arNone
}

func autorunClassOfName(p string) autorunClass {
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	parent := path.Base(dir)
	switch base {
	case ".envrc":
		return arDirenv
	case "tasks.json":
		if parent == ".vscode" {
			return arVSCodeTasks
		}
	case "settings.json":
		if parent == ".vscode" {
			return arVSCodeSettings
		}
	case ".devcontainer.json":
		return arDevcontainer
	case "devcontainer.json":
		if parent == ".devcontainer" || path.Base(path.Dir(dir)) == ".devcontainer" {
			return arDevcontainer
		}
	case "workspace.xml":
		if parent == ".idea" {
			return arJetBrains
		}
	case "package.json":
		if !strings.Contains(p, "/node_modules/") {
			return arPackageJSON
		}
	case "sitecustomize.py", "usercustomize.py":
		return arPyCustomize
	case ".gitlab-ci.yml", ".gitlab-ci.yaml":
		return arCI
	case ".gitconfig":
		return arGitConfig
	case "config":
		if parent == ".git" || parent == "git" && path.Base(path.Dir(dir)) == ".config" {
			return arGitConfig
		}
	}
	switch {
	case strings.HasSuffix(base, ".code-workspace"):
		return arVSCodeWorkspace
	case strings.HasSuffix(base, ".pth") && (strings.Contains(p, "/site-packages/") || strings.Contains(p, "/dist-packages/")):
		return arPth
	case strings.HasSuffix(base, ".xml") && (parent == ".run" || parent == "runConfigurations" && path.Base(path.Dir(dir)) == ".idea"):
		return arJetBrains
	case (strings.HasSuffix(base, ".yml") || strings.HasSuffix(base, ".yaml")) && parent == "workflows" && path.Base(path.Dir(dir)) == ".github":
		return arCI
	}
	return arNone
}

// autorunDir is the folder the tool that runs p opens (the project of a
// .vscode, .devcontainer or .idea directory, else p's own directory).
func autorunDir(p string) string {
	d := path.Dir(p)
	switch path.Base(d) {
	case ".vscode", ".devcontainer", ".idea", ".run":
		return path.Dir(d)
	}
	if path.Base(path.Dir(d)) == ".devcontainer" || path.Base(d) == "runConfigurations" {
		return path.Dir(path.Dir(d))
	}
	return d
}

// autorunWrite reads what an action writes to p when p is a file a
// developer tool runs by itself: text when known is true (the whole file,
// or with fragment the part an edit puts in), else an Unknown. It returns
// false when p is not such a file.
func (s *state) autorunWrite(p, text string, known, fragment bool) bool {
	class := autorunClassOf(p)
	if class == arNone {
		return false
	}
	if s.autorunSeen == nil {
		s.autorunSeen = map[string]bool{}
	}
	s.autorunSeen[p] = true
	if !known || strings.ContainsAny(p, "*?[") {
		s.autorunUnknown(p, class, "what the action writes to it is not known")
		return true
	}
	if len(text) > MaxScriptBytes {
		s.autorunUnknown(p, class, "its content is longer than the analysis reads")
		return true
	}
	dir := autorunDir(p)
	switch class {
	case arDirenv:
		s.autorunShell("autorun", dir, text)
	case arPyCustomize:
		s.nested("autorun", func() { s.code("python", text) })
	case arPth:
		// A line that starts with import runs at every start of Python,
		// and the modules it imports run unread: held, with what the line
		// itself does read. Lines that only add a directory are data.
		imports := false
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "import\t") {
				imports = true
				s.nested("autorun", func() { s.code("python", line) })
			}
		}
		if imports {
			s.autorunUnknown(p, class, "an import line in it runs code at every start of Python")
		}
	case arGitConfig:
		s.gitConfigText(text)
	case arCI:
		if ciSecrets.MatchString(text) {
			s.autorunUnknown(p, class, "it reads the repository's secrets or runs on pull_request_target")
		}
	case arJetBrains:
		s.autorunUnknown(p, class, "its commands run when someone starts it")
		for _, m := range jetbrainsScript.FindAllStringSubmatch(text, -1) {
			s.autorunShell("autorun", dir, xmlUnescape(m[1]))
		}
	default:
		s.autorunJSON(p, class, dir, text, fragment)
	}
	return true
}

// autorunUnknown records a foothold file written with content the
// analysis does not read (persistence holds it).
func (s *state) autorunUnknown(p string, class autorunClass, why string) {
	s.add(Effect{Kind: Unknown, Path: p, Detail: &Detail{Reason: "autorun: " + p + " is " + autorunWhat[class] + ", and " + why}})
}

// autorunShell reads a command a tool runs by itself, under reader via
// and in the folder dir.
func (s *state) autorunShell(via, dir, cmd string) {
	if strings.TrimSpace(cmd) == "" {
		return
	}
	s.nested(via, func() {
		cwd := s.ctx.Cwd
		if strings.HasPrefix(dir, "/") {
			s.ctx.Cwd = dir
		}
		s.shellIn(cmd, nil)
		s.ctx.Cwd = cwd
	})
}

// autorunProgram records a program an editor setting names (an
// interpreter, a language server, a terminal's shell) as run, with its
// arguments; a -c argument is read as the shell's command.
func (s *state) autorunProgram(dir, prog string, args []string) {
	prog = strings.ReplaceAll(strings.ReplaceAll(prog, "${workspaceFolder}", dir), "${workspaceRoot}", dir)
	if strings.TrimSpace(prog) == "" {
		return
	}
	s.nested("autorun", func() {
		e := Effect{Kind: Run, Program: path.Base(prog), Argv: append([]string{prog}, args...)}
		if strings.Contains(prog, "/") {
			if strings.HasPrefix(prog, "/") || strings.HasPrefix(prog, "~") {
				e.Path = s.resolve(prog)
			} else {
				e.Path = path.Join(dir, prog)
			}
		}
		s.add(e)
		for i, a := range args {
			if (a == "-c" || a == "/c" || a == "-Command") && i+1 < len(args) {
				s.autorunShell("shell", dir, args[i+1])
			}
		}
	})
}

// ciSecrets finds a workflow that reads the repository's secrets or runs
// with them on other people's pull requests.
var ciSecrets = regexp.MustCompile(`\bsecrets\s*(?:\.|\[)|toJSON\(\s*secrets\s*\)|(?m)^\s*secrets\s*:|\bpull_request_target\b|\bCI_JOB_TOKEN\b`)

// jetbrainsScript finds a shell script run configuration's text.
var jetbrainsScript = regexp.MustCompile(`name="SCRIPT_TEXT"\s+value="([^"]*)"`)

func xmlUnescape(s string) string {
	return strings.NewReplacer("&quot;", `"`, "&apos;", "'", "&lt;", "<", "&gt;", ">", "&#10;", "\n", "&amp;", "&").Replace(s)
}

// npmLifecycle are the package.json scripts npm, pnpm and yarn run by
// themselves on install, pack or publish.
var npmLifecycle = []string{"preinstall", "install", "postinstall", "preprepare", "prepare", "postprepare",
	"prepublish", "prepublishOnly", "prepack", "postpack", "dependencies", "preuninstall", "uninstall", "postuninstall"}

// devcontainerCommands are the dev container keys whose value runs
// (initializeCommand on the host itself).
var devcontainerCommands = []string{"initializeCommand", "onCreateCommand", "updateContentCommand", "postCreateCommand",
	"postStartCommand", "postAttachCommand"}

// dangerousEnv are environment variables a terminal's env setting may set
// that make its shell or programs run code.
var dangerousEnv = map[string]bool{"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "BASH_ENV": true, "ENV": true,
	"PROMPT_COMMAND": true, "ZDOTDIR": true, "NODE_OPTIONS": true, "PYTHONSTARTUP": true, "PYTHONPATH": true, "PERL5OPT": true,
	"RUBYOPT": true, "GIT_SSH_COMMAND": true, "GIT_EXTERNAL_DIFF": true, "DYLD_INSERT_LIBRARIES": true, "PAGER": true, "EDITOR": true}

// autorunJSON reads the JSON (with comments and trailing commas) an
// editor, a dev container or a package manager reads. A fragment (an
// edit's new text) that is not JSON by itself is read for "key": "value"
// pairs.
func (s *state) autorunJSON(p string, class autorunClass, dir, text string, fragment bool) {
	var doc map[string]any
	if err := json.Unmarshal([]byte(jsoncClean(text)), &doc); err != nil {
		if !fragment {
			s.autorunUnknown(p, class, "it is not JSON the analysis reads")
			return
		}
		s.autorunPairs(p, class, dir, text)
		return
	}
	switch class {
	case arVSCodeTasks:
		s.vscodeTasks(dir, doc)
	case arVSCodeSettings:
		s.vscodeSettings(p, class, dir, "", doc)
	case arVSCodeWorkspace:
		if t, ok := doc["tasks"].(map[string]any); ok {
			s.vscodeTasks(dir, t)
		}
		if st, ok := doc["settings"].(map[string]any); ok {
			s.vscodeSettings(p, class, dir, "", st)
		}
	case arDevcontainer:
		for _, k := range devcontainerCommands {
			if v, ok := doc[k]; ok {
				s.devcontainerCommand(dir, v)
			}
		}
	case arPackageJSON:
		scripts, _ := doc["scripts"].(map[string]any)
		for _, k := range npmLifecycle {
			if cmd, ok := scripts[k].(string); ok {
				s.autorunShell("lifecycle", dir, cmd)
			}
		}
	}
}

// autorunPairs reads an edit's text that is not a JSON document by itself
// for the keys that run commands; an edit that mentions folderOpen, a
// terminal profile or an environment cannot be placed, and is not known.
func (s *state) autorunPairs(p string, class autorunClass, dir, text string) {
	for _, m := range jsonPair.FindAllStringSubmatch(text, -1) {
		var v string
		if json.Unmarshal([]byte(`"`+m[2]+`"`), &v) != nil {
			continue
		}
		key := m[1]
		switch class {
		case arPackageJSON:
			for _, k := range npmLifecycle {
				if key == k {
					s.autorunShell("lifecycle", dir, v)
				}
			}
		case arDevcontainer:
			for _, k := range devcontainerCommands {
				if key == k {
					s.autorunShell("autorun", dir, v)
				}
			}
		case arVSCodeSettings, arVSCodeWorkspace:
			if settingRunsProgram(strings.ToLower(key)) {
				s.autorunProgram(dir, v, nil)
			}
		}
	}
	if strings.Contains(text, "folderOpen") || strings.Contains(text, "terminal.integrated") ||
		(class == arDevcontainer || class == arPackageJSON) && jsonListAfterKey.MatchString(text) {
		s.autorunUnknown(p, class, "an edit of it the analysis cannot place")
	}
}

// jsonPair finds "key": "string" in JSON text.
var jsonPair = regexp.MustCompile(`"([^"\\]+)"\s*:\s*"((?:[^"\\]|\\.)*)"`)

// jsonListAfterKey finds a key whose value is a list or an object, which
// autorunPairs does not read.
var jsonListAfterKey = regexp.MustCompile(`"(?:[a-zA-Z]*Command|preinstall|install|postinstall|prepare|prepack|postpack|prepublish)"\s*:\s*[\[{]`)

// vscodeTasks reads the tasks that run on folder open.
func (s *state) vscodeTasks(dir string, doc map[string]any) {
	tasks, _ := doc["tasks"].([]any)
	for _, t := range tasks {
		task, ok := t.(map[string]any)
		if !ok {
			continue
		}
		ro, _ := task["runOptions"].(map[string]any)
		if on, _ := ro["runOn"].(string); on != "folderOpen" {
			continue
		}
		for _, v := range []map[string]any{task, asMap(task["linux"]), asMap(task["osx"]), asMap(task["windows"])} {
			cmd, _ := v["command"].(string)
			if cmd == "" {
				continue
			}
			line := cmd
			args, _ := v["args"].([]any)
			for _, a := range args {
				switch a := a.(type) {
				case string:
					line += " " + a // the shell task's arguments are joined as the editor does
				case map[string]any:
					if val, ok := a["value"].(string); ok {
						line += " " + val
					}
				}
			}
			s.autorunShell("autorun", dir, line)
		}
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// settingRunsProgram reports whether an editor setting (lower-case key)
// names a program the editor or an extension runs.
func settingRunsProgram(key string) bool {
	for _, suf := range []string{"executablepath", "interpreterpath", ".path", ".executable", ".serverpath", ".nodepath",
		".pythonpath", ".tsdk", "commandline", ".shell.linux", ".shell.osx", ".shell.windows", ".command", ".runtime",
		"runtimeexecutable", ".binary", "binarypath", "binpath", ".interpreter"} {
		if strings.HasSuffix(key, suf) {
			return true
		}
	}
	return false
}

// vscodeSettings reads the settings that run programs: terminal profiles
// (path and args), the shell and its arguments, the environment given to
// terminals, and every setting whose value names a program.
func (s *state) vscodeSettings(p string, class autorunClass, dir, prefix string, doc map[string]any) {
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		key := strings.ToLower(prefix + k)
		switch v := doc[k].(type) {
		case string:
			if settingRunsProgram(key) {
				s.autorunProgram(dir, v, nil)
			}
			if strings.HasPrefix(key, "terminal.integrated.env.") && (dangerousEnv[k] || dangerousEnv[strings.ToUpper(k)]) {
				s.autorunUnknown(p, class, "it sets "+k+" in the editor's terminals")
			}
		case []any:
			if strings.HasPrefix(key, "terminal.integrated.shellargs.") {
				line := ""
				for _, a := range v {
					if a, ok := a.(string); ok {
						line += " " + shQuote(a)
					}
				}
				s.autorunShell("autorun", dir, "sh"+line)
			}
		case map[string]any:
			if strings.HasPrefix(key, "terminal.integrated.profiles.") || strings.HasPrefix(key, "terminal.integrated.automationprofile.") {
				if prog, ok := v["path"].(string); ok {
					var args []string
					if list, ok := v["args"].([]any); ok {
						for _, a := range list {
							if a, ok := a.(string); ok {
								args = append(args, a)
							}
						}
					}
					s.autorunProgram(dir, prog, args)
					continue
				} else if list, ok := v["path"].([]any); ok {
					for _, x := range list {
						if x, ok := x.(string); ok {
							s.autorunProgram(dir, x, nil)
						}
					}
					continue
				}
			}
			s.vscodeSettings(p, class, dir, prefix+k+".", v)
		}
	}
}

// devcontainerCommand reads a dev container command: a string (run by a
// shell), a list (a program and its arguments) or an object of either
// (run in parallel).
func (s *state) devcontainerCommand(dir string, v any) {
	switch v := v.(type) {
	case string:
		s.autorunShell("autorun", dir, v)
	case []any:
		line := ""
		for _, a := range v {
			if a, ok := a.(string); ok {
				line += " " + shQuote(a)
			}
		}
		s.autorunShell("autorun", dir, line)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s.devcontainerCommand(dir, v[k])
		}
	}
}

// shQuote quotes a word for sh.
func shQuote(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// jsoncClean removes the comments and trailing commas JSON with comments
// (VS Code's settings and tasks, devcontainer.json) allows.
func jsoncClean(text string) string {
	if !strings.Contains(text, "//") && !strings.Contains(text, "/*") && !strings.Contains(text, ",") {
		return text
	}
	var b strings.Builder
	inStr := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if inStr {
			b.WriteByte(c)
			if c == '\\' && i+1 < len(text) {
				i++
				b.WriteByte(text[i])
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			b.WriteByte(c)
		case c == '/' && i+1 < len(text) && text[i+1] == '/':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				i = len(text)
			} else {
				i += end + 3
			}
		case c == ',':
			j := i + 1
			for j < len(text) && strings.IndexByte(" \t\r\n", text[j]) >= 0 {
				j++
			}
			if j < len(text) && (text[j] == '}' || text[j] == ']') {
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// autorunUnread is run once an action is read: every foothold file the
// action writes, moves, links or downloads through a program whose
// content no reader reported (cp, mv, ln, install, sed -i, an
// interpreter's write, a download) is read from the source the action
// copies when that is known (literal text the action wrote, or a file the
// harness can see), else it is an Unknown. Writes by redirection and tee
// (read where they happen) and by git (the repository's own files) are
// not.
func (s *state) autorunUnread() {
	n := len(s.out)
	for i := 0; i < n; i++ {
		e := s.out[i]
		var p, src string
		switch e.Kind {
		case Write, Download:
			if e.Program == "" || e.Program == "tee" || e.Program == "git" || strings.HasPrefix(e.Via, "tool") && !strings.Contains(e.Via, ">") {
				continue
			}
			p = e.Path
		case Create:
			if e.Dest == "" {
				continue // mkdir, touch: nothing runs from an empty file
			}
			p, src = e.Path, e.Dest
		case Move:
			p, src = e.Dest, e.Path
		default:
			continue
		}
		if p == "" || autorunClassOf(p) == arNone {
			continue
		}
		if e.Kind == Write {
			// cp SRC DST: the read of the same program just before
			for j := i - 1; j >= 0 && j >= i-3; j-- {
				if r := s.out[j]; r.Kind == Read && r.Program == e.Program && r.Via == e.Via {
					src = r.Path
					break
				}
			}
		}
		text, ok := "", false
		if src != "" && src != p && e.Kind != Download {
			text, ok = s.texts[src]
			if !ok && s.ctx.FS != nil && strings.HasPrefix(src, "/") && !s.writtenBefore(src, i) {
				if data, trunc, err := s.ctx.FS.ReadFile(src, MaxScriptBytes); err == nil && !trunc {
					text, ok = string(data), true
				}
			}
		}
		if !ok && autorunClassOf(p) == arPackageJSON && e.Kind != Download && (src == "" || src == p || s.writtenBefore(src, i)) && !s.mentionsLifecycle() {
			// jq '.version = "2"' package.json > t && mv t package.json,
			// sed -i 's/1.0/1.1/' package.json: an edit made of what the
			// action shows, which names no script npm runs by itself.
			continue
		}
		s.autorunWrite(p, text, ok, false)
	}
}

// writtenBefore reports whether an effect before index i writes p.
func (s *state) writtenBefore(p string, i int) bool {
	for j := 0; j < i; j++ {
		if e := s.out[j]; e.Path == p && (e.Kind == Write || e.Kind == Download) || e.Kind == Move && e.Dest == p {
			return true
		}
	}
	return false
}

// lifecycleWords are the words with which code can put a script npm runs
// by itself into package.json.
var lifecycleWords = regexp.MustCompile(`(?i)install|prepare|prepack|postpack|prepublish|dependencies|scripts`)

// mentionsLifecycle reports whether a command line of the action names a
// package.json script npm runs by itself.
func (s *state) mentionsLifecycle() bool {
	for _, e := range s.out {
		if e.Kind != Run {
			continue
		}
		for _, a := range e.Argv[min(1, len(e.Argv)):] {
			if lifecycleWords.MatchString(a) {
				return true
			}
		}
	}
	return false
}

// gitConfigSet reads git config KEY VALUE (any scope, --file included;
// git config set KEY VALUE, --add, --replace-all) of a setting whose
// value is a command git runs later (core.fsmonitor on every status,
// core.sshCommand, filter.*.clean, diff.*.textconv, credential.helper,
// alias.x = !cmd): the command is read now under the reader "autorun",
// and a value not known is an Unknown whose reason starts "autorun: ".
func (c *shCall) gitConfigSet(args []sword) {
	var pos []sword
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.known {
			pos = append(pos, a)
			continue
		}
		switch a.val {
		case "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--unset", "--unset-all", "-l", "--list", "-e", "--edit",
			"--remove-section", "--rename-section", "--show-origin", "--show-scope", "--name-only":
			return
		case "-f", "--file", "--blob", "--type", "--default", "--comment", "--value":
			i++
			continue
		case "set":
			if len(pos) == 0 {
				continue
			}
		case "get", "list", "unset", "edit", "rename-section", "remove-section":
			if len(pos) == 0 {
				return
			}
		}
		if strings.HasPrefix(a.val, "-") {
			continue
		}
		pos = append(pos, a)
	}
	if len(pos) < 2 || !pos[0].known {
		return
	}
	key, val := strings.ToLower(pos[0].val), pos[1]
	if !gitCommandKey(key) && !gitIncludeKey(key) {
		return
	}
	if !val.known {
		c.r.s.add(Effect{Kind: Unknown, Program: "git", Detail: &Detail{Reason: "autorun: git config " + key + " set to a command not known statically: " + val.arg}})
		return
	}
	if gitIncludeKey(key) {
		// The included file is read when git runs, whatever it holds then.
		c.r.s.add(Effect{Kind: Unknown, Program: "git", Detail: &Detail{Reason: "autorun: git config " + key + " names a file whose settings git reads later: " + val.val}})
		return
	}
	if key == "credential.helper" && credentialCommand(val.val) {
		c.r.s.add(Effect{Kind: Unknown, Program: "git", Detail: &Detail{Reason: "autorun: git config credential.helper set to a command, which git gives every credential it uses: " + val.val}})
	}
	c.r.s.nested("autorun", func() { c.gitSetting(key, val.val, 0) })
}

// gitConfigText reads a git configuration file an action writes: the
// settings that run commands are read as gitSetting reads them.
func (s *state) gitConfigText(text string) {
	section := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			section = gitSection(line)
			continue
		}
		key, val, _ := strings.Cut(line, "=")
		key = section + "." + strings.ToLower(strings.TrimSpace(key))
		if !gitCommandKey(key) {
			continue
		}
		cmd := gitValue(val)
		if strings.HasPrefix(key, "alias.") || key == "credential.helper" {
			var ok bool
			if cmd, ok = strings.CutPrefix(cmd, "!"); !ok && !(key == "credential.helper" && strings.HasPrefix(cmd, "/")) {
				continue
			}
		}
		if key == "credential.helper" && credentialCommand(gitValue(val)) {
			s.add(Effect{Kind: Unknown, Detail: &Detail{Reason: "autorun: a git configuration sets credential.helper to a command, which git gives every credential it uses: " + cmd}})
		}
		s.autorunShell("autorun", "", cmd)
	}
}

// credentialCommand reports whether a credential.helper value is a
// command of the action's choosing (!cmd, a path) rather than one of
// git's helpers by name (store, cache, osxkeychain, manager).
func credentialCommand(v string) bool {
	v = strings.TrimSpace(v)
	return strings.HasPrefix(v, "!") || strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~")
}
