package service

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ahp-go/ahp/effects"
)

// hookSettingsFiles are the settings files, relative to a project (the
// harness's working directory) and to the home directory, in which Claude
// Code, Codex and Gemini CLI read their hooks; managedHookSettings are the
// machine-wide ones.
var (
	hookSettingsFiles = []string{
		".claude/settings.json", ".claude/settings.local.json",
		".codex/hooks.json",
		".gemini/settings.json",
	}
	managedHookSettings = []string{
		"/etc/claude-code/managed-settings.json",
		"/Library/Application Support/ClaudeCode/managed-settings.json",
		"/etc/codex/hooks.json",
		"/etc/gemini-cli/settings.json",
		"/Library/Application Support/GeminiCli/settings.json",
	}
)

// maxHookSettings bounds what is read of one settings file.
const maxHookSettings = 4 << 20

// interpreters run the script named after them: the script is what the
// hook runs, not the interpreter (which the policy does not protect: it
// is the system's).
var interpreters = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true,
	"python": true, "python3": true, "node": true, "deno": true, "bun": true, "ruby": true, "perl": true,
}

// hookAgents are the words after an ahp adapter executable in a hook
// command (ahp hook claude-code, ahp-hook codex).
var hookAgentWords = map[string]bool{"hook": true, "claude-code": true, "codex": true, "gemini": true}

// HookExecutables returns the executables that the hooks configured in
// the agents' settings files this harness can read run: the project's
// (under cwd), the user's (under home) and the machine's managed ones.
// For each hook command it takes the program (a bare name looked up in
// this process's PATH) or, for an interpreter (sh, bash, python, node,
// env...), the script after it. names are the base names of the programs
// that run as the ahp adapter (PROGRAM hook AGENT, PROGRAM AGENT), to be
// recognised as ahp when an agent runs them. What it cannot see: settings
// of another project or user, hooks added after the policy was compiled
// (reload picks them up), and a bare name the agent's PATH resolves
// differently from the harness's.
func HookExecutables(cwd, home string) (exes, names []string) {
	var files []string
	for _, base := range []string{cwd, home} {
		if base == "" {
			continue
		}
		for _, f := range hookSettingsFiles {
			files = append(files, filepath.Join(base, f))
		}
	}
	files = append(files, managedHookSettings...)
	seen := map[string]bool{}
	for _, f := range files {
		for _, cmd := range hookCommands(f) {
			exe, adapter := hookProgram(cmd, cwd, home)
			if exe == "" || seen[exe] {
				continue
			}
			seen[exe] = true
			exes = append(exes, exe)
			if adapter {
				names = append(names, filepath.Base(exe))
			}
		}
	}
	return exes, names
}

// hookCommands returns the command strings of the hooks in a settings
// file ({"hooks": {...{"command": "..."}...}}), none when it cannot be
// read.
func hookCommands(file string) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHookSettings))
	if err != nil {
		return nil
	}
	var doc map[string]any
	if json.Unmarshal(b, &doc) != nil {
		return nil
	}
	var out []string
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 16 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "command" && strings.TrimSpace(s) != "" {
					out = append(out, s)
				} else {
					walk(e, depth+1)
				}
			}
		case []any:
			for _, e := range x {
				walk(e, depth+1)
			}
		}
	}
	walk(doc["hooks"], 0)
	return out
}

// hookProgram returns the absolute path of what a hook command runs, and
// whether it runs as the ahp adapter. The command is read by package
// effects (a real shell parser: quotes, VAR=value, env/nohup/exec wrappers
// and sh -c scripts), with the project directory variables the agents set
// ($CLAUDE_PROJECT_DIR, $GEMINI_PROJECT_DIR, $CODEX_PROJECT_DIR) assigned
// the harness's working directory: the first program it runs is the
// hook's, or, for an interpreter (sh, bash, python3, node...), the script
// given to it.
func hookProgram(cmd, cwd, home string) (string, bool) {
	var pre strings.Builder
	if cwd != "" {
		for _, v := range []string{"CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CODEX_PROJECT_DIR"} {
			pre.WriteString(v + "=" + shQuote(cwd) + "\n")
		}
	}
	for _, e := range effects.Shell(pre.String()+cmd, effects.Context{Cwd: cwd, Home: home}) {
		if e.Kind != effects.Run || len(e.Argv) == 0 {
			continue
		}
		words := e.Argv
		base := filepath.Base(words[0])
		if wrappers[base] || shellSetup[base] {
			continue // the program it runs, or the hook's, is a later run effect
		}
		i := 0
		if interpreters[base] {
			i++
			for i < len(words) && strings.HasPrefix(words[i], "-") {
				if words[i] == "-c" || words[i] == "-e" && !shellInterpreters[base] {
					i = len(words) // code given inline: its programs are the next run effects
					break
				}
				i++ // the interpreter's options (sh -e, python3 -u)
			}
			if i >= len(words) {
				continue
			}
		}
		prog := expandHookPath(words[i], cwd, home)
		if i == 0 && e.Path != "" {
			prog = e.Path
		}
		adapter := i+1 < len(words) && hookAgentWords[words[i+1]]
		if !strings.Contains(prog, "/") {
			p, err := exec.LookPath(prog)
			if err != nil {
				return "", false
			}
			prog = p
		}
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(cwd, prog)
		}
		return filepath.Clean(prog), adapter
	}
	return "", false
}

// wrappers run the program named after them (package effects reports that
// program as a run effect of its own).
var wrappers = map[string]bool{
	"env": true, "exec": true, "nohup": true, "command": true, "builtin": true, "sudo": true,
	"nice": true, "timeout": true, "stdbuf": true, "time": true,
}

// shellSetup are builtins a hook command may run before its program
// (cd "$CLAUDE_PROJECT_DIR" && ./hook.sh).
var shellSetup = map[string]bool{"cd": true, "pushd": true, "export": true, "set": true, "umask": true, "true": true, ":": true}

// shellInterpreters are the interpreters for which -e is an option, not code.
var shellInterpreters = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true}

// shQuote writes s as one single-quoted shell word.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// expandHookPath expands what the agents expand in a hook command's
// program: ~, $HOME and the project directory variables.
func expandHookPath(p, cwd, home string) string {
	for _, v := range []string{"$CLAUDE_PROJECT_DIR", "${CLAUDE_PROJECT_DIR}", "$GEMINI_PROJECT_DIR", "${GEMINI_PROJECT_DIR}", "$CODEX_PROJECT_DIR", "${CODEX_PROJECT_DIR}"} {
		p = strings.ReplaceAll(p, v, cwd)
	}
	for _, v := range []string{"${HOME}", "$HOME"} {
		p = strings.ReplaceAll(p, v, home)
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = home + p[1:]
	}
	return p
}

// harnessExecutables returns the harness's own executable exe (as started
// and with links resolved; none when ""), the ahp and ahp-hook found next
// to it and on PATH, and the executables the visible hook settings run,
// with the base names that run as the ahp adapter.
func harnessExecutables(exe, cwd, home string) (exes, names []string) {
	if exe != "" {
		exes = append(exes, exe)
		if r, err := filepath.EvalSymlinks(exe); err == nil && r != exe {
			exes = append(exes, r)
		}
		names = append(names, filepath.Base(exe))
		for _, sib := range []string{"ahp", "ahp-hook"} {
			p := filepath.Join(filepath.Dir(exe), sib)
			if _, err := os.Stat(p); err == nil {
				exes = append(exes, p)
			}
		}
	}
	for _, n := range []string{"ahp", "ahp-hook"} {
		if p, err := exec.LookPath(n); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				exes = append(exes, abs)
			}
		}
	}
	h, hn := HookExecutables(cwd, home)
	return append(exes, h...), append(names, hn...)
}
