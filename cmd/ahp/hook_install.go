package main

import (
	"fmt"
	"os"
	"path/filepath"
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
}

func newHookInstallCmd() *cobra.Command {
	o := &hookInstallOptions{}
	cmd := &cobra.Command{
		Use:   "install claude-code|codex|gemini [--project|--user] [--write]",
		Short: "Print, or merge into the tool's settings, the hooks that run ahp hook",
		Long: `Print the settings that make the tool run ahp hook at every handled event,
or with --write merge them into the settings file, keeping every existing
hook and setting. A second run changes nothing; a settings file that is not
valid JSON is left untouched.

Files: Claude Code .claude/settings.json, Codex .codex/hooks.json, Gemini CLI
.gemini/settings.json, in the project (--project, the default) or the home
directory (--user). The tool's hook timeout is written 10 s above --timeout
(seconds for Claude Code and Codex, milliseconds for Gemini CLI).

Codex runs a hook from these files only once it is trusted: review it with
/hooks in Codex, or install it in Codex's managed configuration.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHookInstall(cmd, o, args[0])
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.project, "project", false, "the project's settings file (default)")
	f.BoolVar(&o.user, "user", false, "the user's settings file in the home directory")
	f.BoolVar(&o.write, "write", false, "merge into the settings file (default: print the merged file)")
	f.StringVar(&o.connect, "connect", os.Getenv("AHP_CONNECT"), "harness address the hook connects to (or $AHP_CONNECT)")
	f.DurationVar(&o.timeout, "timeout", 110*time.Second, "ahp hook's --timeout (escalations wait this long for an approver)")
	f.StringVar(&o.dir, "dir", ".", "the project's root (with --project)")
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
	errw := cmd.ErrOrStderr()
	switch {
	case !o.write:
		fmt.Fprintf(errw, "ahp: %s would become (run again with --write to write it):\n", path)
		_, _ = cmd.OutOrStdout().Write(doc)
	case changed:
		fmt.Fprintf(errw, "ahp: wrote %s\n", path)
	default:
		fmt.Fprintf(errw, "ahp: %s already has these hooks; nothing changed\n", path)
	}
	if tool == hooks.Codex {
		fmt.Fprintln(errw, "ahp: Codex runs these hooks only once you trust them: open codex, run /hooks and trust them (or install them in Codex's managed configuration)")
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
