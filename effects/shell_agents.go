package effects

import (
	"path"
	"slices"
	"strings"
)

// Nested coding agents. A supervised agent may start another coding agent
// (Claude Code, Codex, Gemini CLI: the agents ahp hook install knows). The
// child is supervised only if it loads the hook settings that route it
// through the harness; started with another home or configuration
// directory, with settings that may turn hooks off, or with a flag that
// skips them, it runs unsupervised. The reader records such a start as
// code that runs unread: an Unknown into "agent" (Program is the agent),
// whose Reason names what moves or drops the hooks. Starting an agent that
// keeps its settings (claude -p "fix the test", codex exec "…") is a plain
// Run. The tables below hold what each agent reads; docs/effects.md lists
// them.

// agentSpec is what points one coding agent away from its installed hooks.
type agentSpec struct {
	// dirs are the environment variables that move its configuration,
	// with the default directory under the home ("" for the home itself).
	dirs map[string]string
	// vars are environment variables that, set to anything but an empty
	// value, drop its hooks or load settings that may.
	vars []string
	// flags reads its command line: the reason when an option drops its
	// hooks, "" when none does.
	flags func(args []sword) string
}

// codingAgents are the agents read here, by program name.
var codingAgents = map[string]agentSpec{
	"claude": {
		dirs:  map[string]string{"HOME": "", "CLAUDE_CONFIG_DIR": ".claude"},
		vars:  []string{"CLAUDE_CODE_SIMPLE"},
		flags: claudeHookFlags,
	},
	"codex": {
		dirs:  map[string]string{"HOME": "", "CODEX_HOME": ".codex"},
		flags: codexHookFlags,
	},
	"gemini": {
		dirs: map[string]string{"HOME": "", "GEMINI_CLI_HOME": ""},
		vars: []string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH", "GEMINI_CLI_SYSTEM_DEFAULTS_PATH"},
	},
}

// shRunAsVar is the name under which sudo, su and doas record the user a
// command runs as when it is not the agent's own (a name no script can
// write, kept with the exported variables so that sh -c under sudo sees
// it): a coding agent run so reads that user's settings.
const shRunAsVar = "\x00runas"

// agentPackages are the npm packages of the coding agents, run by npx,
// bunx, pnpm dlx or npm exec.
var agentPackages = map[string]string{
	"@anthropic-ai/claude-code": "claude",
	"@openai/codex":             "codex",
	"@google/gemini-cli":        "gemini",
}

// agentOfPackage returns the agent an npm package spec runs
// (@openai/codex@0.171.0 is codex), or "".
func agentOfPackage(spec string) string {
	if i := strings.LastIndexByte(spec, '@'); i > 0 {
		spec = spec[:i]
	}
	return agentPackages[spec]
}

// agentEnvPrefix is what a Python call that starts a coding agent with an
// environment of its own (subprocess.run([...], env=E)) gives the shell
// line it is read as: HOME not known, unless E is os.environ spread once
// with none of the agent's variables named ({**os.environ, "KEY": k}),
// which keeps its home. The reader does not model dictionaries; any
// other environment may move or drop HOME.
func agentEnvPrefix(prog string, a *pyArgs) string {
	spec, ok := codingAgents[prog]
	if _, has := a.kw["env"]; !ok || !has {
		return ""
	}
	t := a.text
	keeps := strings.Contains(t, "**os.environ") && strings.Count(t, "**") == 1
	for name := range spec.dirs {
		keeps = keeps && !strings.Contains(t, name)
	}
	for _, name := range spec.vars {
		keeps = keeps && !strings.Contains(t, name)
	}
	if keeps {
		return ""
	}
	return `HOME="${AHP_UNKNOWN}" `
}

// hAgent reads the start of a coding agent: an Unknown into "agent" when
// its hooks are moved or dropped (agentUnhooked), then what an unmodelled
// program does.
func hAgent(c *shCall) *shStream {
	if why := c.agentUnhooked(c.prog); why != "" {
		c.r.s.opaque("agent", c.prog, "%s runs without the hooks installed for it (%s): what it does is not supervised", c.prog, why)
	}
	if prog := c.ws[0]; prog.known && strings.Contains(prog.val, "/") {
		c.r.scriptByPath(c, c.r.path(prog.val, false))
	}
	return c.filter()
}

// agentUnhooked says why the agent prog, started by c, may run without
// its installed hooks: its home or configuration directory set elsewhere
// (on its command line, by env, or earlier in the script), env -i or -u
// of one, a variable that drops hooks, or a flag (agentSpec.flags); "" when
// none applies.
func (c *shCall) agentUnhooked(prog string) string {
	spec, ok := codingAgents[prog]
	if !ok {
		return ""
	}
	home := c.r.s.ctx.Home
	for _, name := range agentDirOrder(spec) {
		val, set := c.agentVar(name)
		if !set || val.known && val.val == "" && name != "HOME" {
			continue // unset or empty: the agent's default
		}
		want := home
		if sub := spec.dirs[name]; sub != "" {
			want = path.Join(home, sub)
		}
		if !val.known || home == "" || path.Clean(val.val) != path.Clean(want) {
			return name + "=" + val.arg
		}
	}
	if u, set := c.agentVar(shRunAsVar); set {
		return "run as " + u.arg + ", with that user's home"
	}
	for _, name := range spec.vars {
		if val, set := c.agentVar(name); set && (!val.known || val.val != "") {
			return name + "=" + val.arg
		}
	}
	if spec.flags != nil {
		return spec.flags(c.args())
	}
	return ""
}

// agentDirOrder returns spec's directory variables, HOME first and the
// rest sorted, so that the reason given does not depend on map order.
func agentDirOrder(spec agentSpec) []string {
	out := make([]string, 0, len(spec.dirs))
	for name := range spec.dirs {
		if name != "HOME" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return append([]string{"HOME"}, out...)
}

// agentVar returns the value an environment variable has for the program
// c runs: the last assignment before it on its command line or given to
// env, else one the script made earlier (exported or not: HOME and an
// agent's variables may be exported by the parent already, and bash then
// exports the new value).
func (c *shCall) agentVar(name string) (sword, bool) {
	for i := len(c.env) - 1; i >= 0; i-- {
		if c.env[i].name == name {
			return c.env[i].val, true
		}
	}
	if v, ok := c.r.vars[name]; ok {
		return sword{arg: shShown(v), val: v.val, known: v.known}, true
	}
	return sword{}, false
}

// shShown is a variable's value as a reason shows it.
func shShown(v shVar) string {
	if v.known {
		return v.val
	}
	return "(not known)"
}

// agentOpt splits an option word into its name and value ("--settings=x"
// is "--settings", "x", true). A word not known statically is read by the
// text written before its first expansion ("--settings=$F").
func agentOpt(w sword) (name, val string, hasVal bool) {
	s := w.val
	if !w.known {
		s = strings.NewReplacer(`"`, "", "'", "").Replace(w.arg)
	}
	return strings.Cut(s, "=")
}

// claudeHookFlags reads Claude Code's options that drop its hooks: --bare
// (no hooks at all), --setting-sources without one of user, project and
// local (the layers ahp hook install writes to; the managed layer is always
// read), and --settings, whose file or JSON is a settings layer of its own
// that may set disableAllHooks. --dangerously-skip-permissions does not
// skip hooks (a hook's deny still stops the tool: docs/real-agents.md) and
// is not read here.
func claudeHookFlags(args []sword) string {
	for i := 0; i < len(args); i++ {
		name, val, hasVal := agentOpt(args[i])
		next := func() string {
			if hasVal {
				return val
			}
			if i+1 < len(args) {
				i++
				if !args[i].known {
					return ""
				}
				return args[i].val
			}
			return ""
		}
		switch name {
		case "--bare":
			return "--bare"
		case "--settings":
			v := next()
			if strings.HasPrefix(strings.TrimSpace(v), "{") && !strings.Contains(v, "disableAllHooks") && !strings.Contains(v, "allowManagedHooksOnly") {
				continue // inline settings that cannot turn hooks off
			}
			return "--settings " + v
		case "--setting-sources":
			v := next()
			have := map[string]bool{}
			for _, s := range strings.Split(v, ",") {
				have[strings.TrimSpace(s)] = true
			}
			if !have["user"] || !have["project"] || !have["local"] {
				return "--setting-sources " + v
			}
		case "--":
			return ""
		}
	}
	return ""
}

// codexHookFlags reads Codex's options that drop its hooks: a -c/--config
// override of the hooks or of the features (features.codex_hooks=false,
// hooks={}), and --disable of a hooks feature. --dangerously-bypass-
// hook-trust runs hooks that are not trusted (more hooks, not fewer) and
// --dangerously-bypass-approvals-and-sandbox leaves hooks on: neither is
// read here.
func codexHookFlags(args []sword) string {
	for i := 0; i < len(args); i++ {
		w := args[i]
		name, val, hasVal := agentOpt(w)
		if strings.HasPrefix(name, "-c") && len(name) > 2 && !strings.HasPrefix(name, "--") {
			// -ckey=value
			name, val, hasVal = "-c", strings.TrimPrefix(w.arg, "-c"), true
		}
		switch name {
		case "-c", "--config", "--disable":
			v := val
			if !hasVal && i+1 < len(args) {
				i++
				v = args[i].arg
			}
			key := strings.ToLower(v)
			if name == "--disable" && strings.Contains(key, "hook") {
				return name + " " + v
			}
			if name != "--disable" && (strings.Contains(key, "hook") || strings.HasPrefix(strings.TrimSpace(key), "features") || !args[i].known && strings.Contains(v, "$")) {
				return name + " " + v
			}
		case "--":
			return ""
		}
	}
	return ""
}
