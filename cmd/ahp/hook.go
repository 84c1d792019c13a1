package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/adapters/hooks"
	"github.com/ahp-go/ahp/admin"
	"github.com/ahp-go/ahp/transport"
)

type hookOptions struct {
	connect string
	timeout time.Duration
	dial    transport.DialOptions
}

func init() { register(newHookCmd) }

func newHookCmd() *cobra.Command {
	o := &hookOptions{}
	cmd := &cobra.Command{
		Use:   "hook claude-code|codex|gemini --connect ADDRESS",
		Short: "Answer a coding agent's hook from a harness (register it in the agent's settings)",
		Long: `Answer one hook call of Claude Code, Codex CLI or Gemini CLI.

The tool writes the hook input (JSON) on stdin; ahp hook sends the matching
AHP event to the harness and writes the tool's own answer on stdout.
Tool calls become pre_action, prompts pre_prompt, finished tool calls
post_action, session start and end session_start / session_end.

It fails closed: a harness that cannot be reached, that does not answer
within --timeout, or whose answer cannot be expressed in the tool's format
makes it exit 2 with the reason on stderr, which all three tools treat as a
block. Keep --timeout below the timeout in the tool's settings (ahp hook
install does). An escalation is answered by the tool's own prompt where it
really asks a human, otherwise it waits in the harness's approval queue
(ahp approvals) until --timeout, and is denied if nobody approves.

Credentials: as for ahp send ($AHP_API_KEY, $AHP_BEARER_TOKEN, ...).
See docs/adapters.md.`,
		Example: `  ahp hook install claude-code --connect unix:/run/ahp/ahp.sock --write
  echo '{"hook_event_name":"PreToolUse",...}' | ahp hook claude-code --connect unix:/run/ahp/ahp.sock`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHook(cmd, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.connect, "connect", defaultConnect(), "harness address (or $AHP_CONNECT; default: ahp serve's default socket)")
	f.DurationVar(&o.timeout, "timeout", 50*time.Second, "longest time to wait for the harness, escalations included (keep it below the tool's hook timeout)")
	addDialFlags(f, &o.dial)
	cmd.AddCommand(newHookInstallCmd())
	return cmd
}

func runHook(cmd *cobra.Command, o *hookOptions, toolName string) error {
	tool, err := hooks.ParseTool(toolName)
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	stderr := cmd.ErrOrStderr()
	deny := func(reason string) error {
		fmt.Fprintln(stderr, reason)
		return exitWith(exitBlock, "")
	}
	if o.connect == "" {
		return deny("ahp: no harness address (--connect or $AHP_CONNECT), failing closed")
	}
	if err := finishDialFlags(&o.dial); err != nil {
		return deny("ahp: " + err.Error() + ", failing closed")
	}
	raw, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), hooks.MaxInputBytes+1))
	if err != nil {
		return deny("ahp: cannot read the hook input, failing closed: " + err.Error())
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	h := &hooks.DialHarness{Addr: o.connect, Dial: o.dial, Timeout: o.timeout, Version: buildVersion()}
	defer h.Close()
	home, user := hooks.AgentEnv()
	res := hooks.Handle(ctx, tool, raw, h, hooks.Options{Home: home, User: user})
	if tool == hooks.ClaudeCode {
		exportSession(raw, stderr)
	}
	if res.Exit == exitBlock {
		return deny(res.Reason)
	}
	if res.Reason != "" && res.Outcome == "none" {
		fmt.Fprintln(stderr, res.Reason) // a notification that was lost
	}
	_, err = cmd.OutOrStdout().Write(append(res.Stdout, '\n'))
	return err
}

// exportSession puts the session's id in the environment of the Bash
// commands of a Claude Code session: SessionStart hooks get
// $CLAUDE_ENV_FILE, whose export lines Claude Code applies.
func exportSession(raw []byte, stderr io.Writer) {
	envFile := os.Getenv("CLAUDE_ENV_FILE")
	if envFile == "" {
		return
	}
	in, err := hooks.ParseInput(raw)
	if err != nil || hooks.KindOf(hooks.ClaudeCode, in.HookEventName) != hooks.KindSessionStart {
		return
	}
	if err := hooks.WriteSessionEnv(envFile, admin.SessionEnv, hooks.SessionID(hooks.ClaudeCode, in)); err != nil {
		fmt.Fprintln(stderr, "ahp: "+admin.SessionEnv+" not exported:", err)
	}
}
