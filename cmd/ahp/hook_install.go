package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/adapters/hooks"
)

type hookInstallOptions struct {
	project, user bool
	write         bool
	connect       string
	timeout       time.Duration
	dir           string
	command       string
	trust         bool
	managed       bool
}

func newHookInstallCmd() *cobra.Command {
	o := &hookInstallOptions{}
	cmd := &cobra.Command{
		Use:   "install claude-code|codex|gemini [--project|--user|--managed] [--write] [--trust]",
		Short: "Print, or merge into the tool's settings, the hooks that run ahp hook",
		Long: `Print the settings that make the tool run ahp hook at every handled event,
or with --write merge them into the settings file, keeping every existing
hook and setting. A second run changes nothing; a settings file that is not
valid JSON is left untouched.

Files: Claude Code .claude/settings.json, Codex .codex/hooks.json, Gemini CLI
.gemini/settings.json, in the project (--project, the default) or the home
directory (--user). The tool's hook timeout is written 10 s above --timeout
(seconds for Claude Code and Codex, milliseconds for Gemini CLI).

Codex runs a hook from a user or project file only while the user's
config.toml trusts its exact definition, and skips every other one without
a word. So for Codex, --write needs one of:

  --managed   write /etc/codex/hooks.json, Codex's system layer, whose hooks
              run without trust and cannot be switched off from a user's
              configuration (needs root; the agent's user must not be able
              to write /etc/codex);
  --user --trust
              write $CODEX_HOME/hooks.json (~/.codex) and record that you
              trust these hooks: a trusted_hash, computed as Codex computes
              it, under [hooks.state] in $CODEX_HOME/config.toml.

Without either, nothing is written and the command fails. Project-level
Codex hooks (--project) are refused: Codex loads them only in a project it
trusts, which the installer does not decide for you.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHookInstall(cmd, o, args[0])
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.project, "project", false, "the project's settings file (default)")
	f.BoolVar(&o.user, "user", false, "the user's settings file in the home directory")
	f.BoolVar(&o.write, "write", false, "merge into the settings file (default: print the merged file)")
	f.StringVar(&o.connect, "connect", defaultConnect(), "harness address the hook connects to (or $AHP_CONNECT; default: ahp serve's default socket)")
	f.DurationVar(&o.timeout, "timeout", 110*time.Second, "ahp hook's --timeout (escalations wait this long for an approver)")
	f.StringVar(&o.dir, "dir", ".", "the project's root (with --project)")
	f.BoolVar(&o.trust, "trust", false, "Codex: record in $CODEX_HOME/config.toml that you trust the installed hooks (with --user)")
	f.BoolVar(&o.managed, "managed", false, "Codex: write the hooks into Codex's system layer, /etc/codex/hooks.json (no trust needed; root)")
	f.StringVar(&o.command, "command", "", "the hook command to write (default: this ahp executable with hook TOOL --connect ... --timeout ...)")
	return cmd
}

func runHookInstall(cmd *cobra.Command, o *hookInstallOptions, toolName string) error {
	tool, err := hooks.ParseTool(toolName)
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	if o.project && o.user {
		return exitWith(exitFail, "give --project or --user, not both")
	}
	command := o.command
	if command == "" {
		if o.connect == "" {
			return exitWith(exitFail, "--connect is required (or set AHP_CONNECT)")
		}
		command = defaultHookCommand(tool, o.connect, o.timeout)
	}
	if tool == hooks.Codex {
		return runCodexInstall(cmd, o, command)
	}
	if o.trust || o.managed {
		return exitWith(exitFail, "--trust and --managed are for Codex only")
	}
	scope, home := hooks.ScopeProject, ""
	if o.user {
		scope = hooks.ScopeUser
		if home, err = os.UserHomeDir(); err != nil {
			return exitWith(exitFail, err.Error())
		}
	}
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	path := hooks.SettingsPath(tool, scope, dir, home)
	doc, changed, err := hooks.Install(tool, path, command, o.timeout+10*time.Second, o.write)
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	reportWrite(cmd, path, doc, changed, o.write)
	return nil
}

func reportWrite(cmd *cobra.Command, path string, doc []byte, changed, write bool) {
	errw := cmd.ErrOrStderr()
	switch {
	case !write:
		fmt.Fprintf(errw, "ahp: %s would become (run again with --write to write it):\n", path)
		_, _ = cmd.OutOrStdout().Write(doc)
	case changed:
		fmt.Fprintf(errw, "ahp: wrote %s\n", path)
	default:
		fmt.Fprintf(errw, "ahp: %s already has these hooks; nothing changed\n", path)
	}
}

// codexTrustAdvice says how to install Codex hooks that Codex really runs.
const codexTrustAdvice = `choose one:
  ahp hook install codex --user --trust --write ...
      writes $CODEX_HOME/hooks.json (~/.codex) and records in its config.toml
      that you trust these hooks ([hooks.state] trusted_hash);
  sudo ahp hook install codex --managed --write ...
      writes /etc/codex/hooks.json, which Codex runs without trust and which
      a user's configuration cannot switch off (the stronger choice when the
      agent runs as your user: it can edit its own config.toml).`

// runCodexInstall installs the Codex hooks where Codex runs them: its
// managed system layer, or the user's layer with the trust recorded. It
// writes nothing that Codex would silently skip.
func runCodexInstall(cmd *cobra.Command, o *hookInstallOptions, command string) error {
	errw := cmd.ErrOrStderr()
	toolTimeout := o.timeout + 10*time.Second
	switch {
	case o.managed && (o.user || o.project):
		return exitWith(exitFail, "--managed writes Codex's system layer; give it without --user or --project")
	case o.managed && o.trust:
		return exitWith(exitFail, "--managed hooks need no trust; drop --trust")
	case o.managed:
		if runtime.GOOS == "windows" {
			return exitWith(exitFail, "--managed: Codex's managed hooks on Windows are not supported by this installer")
		}
		path := hooks.CodexManagedHooksFile
		doc, changed, err := hooks.Install(hooks.Codex, path, command, toolTimeout, o.write)
		if err != nil {
			if errors.Is(err, os.ErrPermission) {
				return exitWith(exitFail, err.Error()+" (--managed writes /etc/codex: run it as root, e.g. with sudo)")
			}
			return exitWith(exitFail, err.Error())
		}
		reportWrite(cmd, path, doc, changed, o.write)
		if o.write {
			fmt.Fprintf(errw, "ahp: Codex runs the hooks of %s without trust (its system layer); keep /etc/codex writable by root only\n", path)
		}
		return nil
	case !o.user:
		if o.write {
			return exitWith(exitFail, "Codex loads project hooks (.codex/hooks.json) only in a project it trusts, and runs each only once it is trusted; nothing written; "+codexTrustAdvice)
		}
	}
	home, err := os.UserHomeDir()
	if err != nil && os.Getenv("CODEX_HOME") == "" {
		return exitWith(exitFail, err.Error())
	}
	var path string
	if o.user {
		path = filepath.Join(hooks.CodexHome(home), "hooks.json")
	} else {
		dir, err := filepath.Abs(o.dir)
		if err != nil {
			return exitWith(exitFail, err.Error())
		}
		path = hooks.SettingsPath(hooks.Codex, hooks.ScopeProject, dir, home)
	}
	if o.write && !o.trust {
		return exitWith(exitFail, "Codex runs the hooks of "+path+" only once they are trusted, and skips untrusted hooks without a word: nothing written; "+codexTrustAdvice)
	}
	doc, changed, err := hooks.Install(hooks.Codex, path, command, toolTimeout, false)
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	if !o.trust {
		reportWrite(cmd, path, doc, changed, false)
		fmt.Fprintln(errw, "ahp: Codex would skip these hooks until they are trusted; "+codexTrustAdvice)
		return nil
	}
	trust, err := hooks.CodexTrustFor(path, doc, command)
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	if len(trust) != len(hooks.Events(hooks.Codex)) {
		return exitWith(exitFail, fmt.Sprintf("%s: found %d of the %d hooks to trust; nothing written", path, len(trust), len(hooks.Events(hooks.Codex))))
	}
	configPath := filepath.Join(filepath.Dir(path), "config.toml")
	existing, err := hooks.ReadSettings(configPath)
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	config, trustChanged, err := hooks.TrustCodexHooks(existing, trust)
	if err != nil {
		return exitWith(exitFail, fmt.Sprintf("%s: %v (nothing written)", configPath, err))
	}
	if !o.write {
		reportWrite(cmd, path, doc, changed, false)
		reportWrite(cmd, configPath, config, trustChanged, false)
		return nil
	}
	// The trust first: a hooks file Codex would skip is never left alone.
	if trustChanged {
		if err := hooks.WriteFileAtomic(configPath, config); err != nil {
			return exitWith(exitFail, err.Error())
		}
	}
	if changed {
		if err := hooks.WriteFileAtomic(path, doc); err != nil {
			return exitWith(exitFail, err.Error())
		}
	}
	reportWrite(cmd, path, doc, changed, true)
	if trustChanged {
		fmt.Fprintf(errw, "ahp: recorded in %s that you trust %d hooks (Codex runs them while their definition stays the same)\n", configPath, len(trust))
	} else {
		fmt.Fprintf(errw, "ahp: %s already trusts these hooks\n", configPath)
	}
	return nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// defaultHookCommand runs the small ahp-hook executable when it is
// installed next to this ahp (it starts several times faster, which every
// tool call pays), else ahp hook.
func defaultHookCommand(tool hooks.Tool, connect string, timeout time.Duration) string {
	exe, err := os.Executable()
	if err != nil {
		exe = "ahp"
	}
	args := fmt.Sprintf("%s --connect %s --timeout %s", tool, shellQuote(connect), timeout)
	if small := filepath.Join(filepath.Dir(exe), "ahp-hook"); err == nil {
		if st, serr := os.Stat(small); serr == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return shellQuote(small) + " " + args
		}
	}
	return shellQuote(exe) + " hook " + args
}
