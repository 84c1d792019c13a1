package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/conformance"
	"github.com/ahp-go/ahp/transport"
)

type conformanceOptions struct {
	connect  string
	timeout  time.Duration
	oversize int
	slowTool string
	run      string
	dial     transport.DialOptions
}

func init() { register(newConformanceCmd) }

func newConformanceCmd() *cobra.Command {
	o := &conformanceOptions{}
	cmd := &cobra.Command{
		Use:   "conformance --connect ADDRESS",
		Short: "Check any AHP 2.4 server against the wire rules of the spec",
		Long: `Check an AHP 2.4 server (this project's or another) against the rules of
the wire specification, §1–§9: handshake and version rejection, ids echoed
as sent, JSON-RPC error codes, blocking and fire-and-forget misuse, depth
and batch limits, run-contract validation, typed decisions, ping,
oversized messages and requests answered while another is slow.

One line per check (PASS, FAIL or SKIP with the reason), then a closing
"N passed, N failed" line. The exit status is 1 when any check fails.

The suite opens several connections; with stdio:'PROGRAM ARGS' each one
starts the program again. Addresses are those of ahp send.`,
		Example: `  ahp conformance --connect unix:./ahp.sock
  ahp conformance --connect "stdio:ahp serve --listen stdio --admin off"
  ahp conformance --connect 'stdio:python3 simple_server.py' --timeout 1s
  ahp conformance --connect ws://127.0.0.1:7600 --slow-tool conformance_slow`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runConformance(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.connect, "connect", defaultConnect(), "server address (or $AHP_CONNECT; default: ahp serve's default socket)")
	f.DurationVar(&o.timeout, "timeout", 2*time.Second, "how long each check waits for an answer")
	f.IntVar(&o.oversize, "oversize-bytes", 5<<20, "size of the message of the oversized-message check (above the server's limit)")
	f.StringVar(&o.slowTool, "slow-tool", "", "a pre_action tool the server is slow to decide (the slow-request check is skipped without it)")
	f.StringVar(&o.run, "run", "", "only the checks whose rule or name matches this regular expression")
	addDialFlags(f, &o.dial)
	return cmd
}

func runConformance(cmd *cobra.Command, o *conformanceOptions) error {
	if o.connect == "" {
		return exitWith(exitFail, "--connect is required (or set AHP_CONNECT)")
	}
	if err := finishDialFlags(&o.dial); err != nil {
		return exitWith(exitFail, err.Error())
	}
	opts := conformance.Options{Timeout: o.timeout, OversizeBytes: o.oversize, SlowTool: o.slowTool}
	if o.run != "" {
		re, err := regexp.Compile(o.run)
		if err != nil {
			return exitWith(exitFail, "--run: "+err.Error())
		}
		opts.Only = func(rule, name string) bool { return re.MatchString(rule + " " + name) }
	}
	dial := o.dial
	dial.Timeout = o.timeout
	if dial.MaxMessageBytes < 2*o.oversize {
		dial.MaxMessageBytes = 2 * o.oversize // a server may echo what it got
	}
	var stdioDirs []string
	var dialMu sync.Mutex
	opts.Dial = func(ctx context.Context) (transport.Conn, error) {
		if !strings.HasPrefix(o.connect, "stdio:") || os.Getenv(dataDirEnv) != "" {
			return transport.Dial(ctx, o.connect, dial)
		}
		// Every check over stdio starts a harness of its own, and one
		// harness at a time uses a data directory: each gets its own
		// temporary one (a --data-dir in the command line still wins).
		dir, err := os.MkdirTemp("", "ahp-conformance-data-")
		if err != nil {
			return nil, err
		}
		dialMu.Lock()
		defer dialMu.Unlock()
		stdioDirs = append(stdioDirs, dir)
		_ = os.Setenv(dataDirEnv, dir)
		defer os.Unsetenv(dataDirEnv)
		return transport.Dial(ctx, o.connect, dial)
	}
	defer func() {
		dialMu.Lock()
		defer dialMu.Unlock()
		for _, d := range stdioDirs {
			_ = os.RemoveAll(d)
		}
	}()
	rep, err := conformance.Run(cmd.Context(), opts)
	if err != nil {
		return exitWith(exitFail, err.Error())
	}
	if err := rep.Write(cmd.OutOrStdout()); err != nil {
		return exitWith(exitFail, err.Error())
	}
	if rep.Failed() > 0 {
		return exitWith(exitFail, fmt.Sprintf("%d checks failed", rep.Failed()))
	}
	return nil
}
