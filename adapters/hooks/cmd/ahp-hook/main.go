// Command ahp-hook is ahp hook in a small executable: the same adapter
// (package adapters/hooks) linked with only the client side of AHP, so
// that a coding agent, which starts the hook once per tool call, does not
// pay the start-up of the whole ahp binary (policy engine, store, gRPC).
//
//	ahp-hook claude-code|codex|gemini --connect ADDRESS [--timeout 50s]
//
// Addresses: unix:PATH, http(s)://HOST:PORT, ws(s)://HOST:PORT.
// Credentials come from $AHP_API_KEY or $AHP_BEARER_TOKEN. Exit codes and
// answers are those of ahp hook (see docs/adapters.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ahp-go/ahp/adapters/hooks"
	"github.com/ahp-go/ahp/transport"
	_ "github.com/ahp-go/ahp/transport/httptransport" // http:// and https://
	_ "github.com/ahp-go/ahp/transport/wstransport"   // ws:// and wss://
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	deny := func(reason string) int {
		fmt.Fprintln(stderr, reason)
		return 2
	}
	if len(args) == 0 {
		return deny("ahp-hook: usage: ahp-hook claude-code|codex|gemini --connect ADDRESS; failing closed")
	}
	tool, err := hooks.ParseTool(args[0])
	if err != nil {
		return deny("ahp-hook: " + err.Error() + "; failing closed")
	}
	fs := flag.NewFlagSet("ahp-hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connect := fs.String("connect", os.Getenv("AHP_CONNECT"), "harness address (or $AHP_CONNECT)")
	timeout := fs.Duration("timeout", 50*time.Second, "longest wait for the harness, escalations included")
	if err := fs.Parse(args[1:]); err != nil {
		return deny("ahp-hook: " + err.Error() + "; failing closed")
	}
	if *connect == "" {
		return deny("ahp: no harness address (--connect or $AHP_CONNECT), failing closed")
	}
	raw, err := io.ReadAll(io.LimitReader(stdin, hooks.MaxInputBytes+1))
	if err != nil {
		return deny("ahp: cannot read the hook input, failing closed: " + err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	h := &hooks.DialHarness{Addr: *connect, Timeout: *timeout, Version: "ahp-hook",
		Dial: transport.DialOptions{APIKey: os.Getenv("AHP_API_KEY"), BearerToken: os.Getenv("AHP_BEARER_TOKEN")}}
	defer h.Close()
	home, user := hooks.AgentEnv()
	res := hooks.Handle(ctx, tool, raw, h, hooks.Options{Home: home, User: user})
	if tool == hooks.ClaudeCode {
		if err := hooks.ExportSession(raw, os.Getenv("CLAUDE_ENV_FILE")); err != nil {
			fmt.Fprintln(stderr, "ahp: session id not exported:", err)
		}
	}
	if res.Exit == 2 {
		return deny(res.Reason)
	}
	if res.Reason != "" && res.Outcome == "none" {
		fmt.Fprintln(stderr, res.Reason)
	}
	if _, err := stdout.Write(append(res.Stdout, '\n')); err != nil {
		return 1
	}
	return 0
}
