package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/service"
)

func init() {
	register(newServeCmd)
}

func newServeCmd() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a harness that decides the events agents send",
		Long: `Run a harness.

Agents connect, perform the AHP handshake and send events; the harness
answers each blocking event with a decision. Listen addresses:

  stdio              read requests on stdin, answer on stdout (one agent)
  unix:PATH          a Unix socket (mode 0600), many agents; a missing
                     directory of PATH is created (mode 0700)
  http://HOST:PORT   HTTP POST /ahp and WebSocket GET /ahp (ws:// is the same)
  https://HOST:PORT  the same over TLS (--tls-cert, --tls-key; --client-ca for mutual TLS)
  grpc://HOST:PORT   gRPC service ahp.v1.Harness (grpcs:// with TLS)

Network listeners require --credentials (API keys, bearer tokens, client
certificates with roles; see docs/security.md) unless they listen on
loopback only, which is open with a warning, or --insecure-no-auth is given.

With no --listen, the harness listens on the Unix socket ` + config.DefaultSocket() + `
(the runtime or state directory, never the directory it is started in),
where the other commands look for it when given no --connect, and prints
how to connect. Logs go to stderr.

With no configuration file, everything has a default: the audit log,
approvals and memory live in SQLite under ` + config.DefaultDataDir() + `
(or $AHP_DATA_DIR), out of the project an agent works in, the built-in policy
packs decide on what each action does (destructive commands, reverse
shells, credential theft and exfiltration, persistence, privilege changes
and secrets in prompts are blocked; risky but legitimate steps wait for a
human; docs/policy.md), and the
admin API (approvals, /healthz, /readyz, /metrics) listens on
http://127.0.0.1:7700. SIGHUP reloads the policy. See --print-config for
every setting.

One harness at a time uses a data directory (and a Unix socket path): a
second ahp serve on either exits at once, naming the running one's pid
and addresses, and changes nothing (docs/deployment.md).`,
		Example: `  ahp serve
  ahp serve --listen unix:/run/ahp/ahp.sock
  ahp serve --config ahp.yaml --policy team.yaml
  ahp serve --print-config > ahp.yaml
  ahp send --connect 'stdio:ahp serve --listen stdio' pre_action '{"tool_name":"bash","arguments":{"command":"ls"}}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd, o)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// runServe builds the configuration from the file and flags, then runs
// the service until SIGINT or SIGTERM; SIGHUP reloads the policy.
func runServe(cmd *cobra.Command, o *serveOptions) error {
	cfg, err := o.effectiveConfig(cmd.Flags())
	if err != nil {
		return err
	}
	if o.printConfig {
		showDefaults(&cfg)
		out, err := cfg.Marshal()
		if err != nil {
			return err
		}
		_, err = cmd.OutOrStdout().Write(out)
		return err
	}
	logLevel, logFormat = cfg.Log.Level, cfg.Log.Format
	log, err := newLogger()
	if err != nil {
		return err
	}
	opts, err := o.serviceOptions(cfg)
	if err != nil {
		return err
	}
	opts.Logger = log
	warnNoPython(log)
	opts.Ready = func(l service.Listening) {
		if l.Hint != "" {
			fmt.Fprintln(os.Stderr, l.Hint)
		}
	}
	setServeGCFromEnv()
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	svc, err := service.New(cfg, opts)
	if err != nil {
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	hupCtx, hupDone := context.WithCancel(ctx)
	go func() {
		for {
			select {
			case <-hupCtx.Done():
				return
			case <-hup:
				if svc.Engine() != nil {
					log.Info("SIGHUP: reloading the policy")
					_ = svc.Reload()
				}
			}
		}
	}()
	runErr := svc.Run(ctx)
	hupDone()
	return errors.Join(runErr, svc.Close())
}

// schemeList is the --listen help: the schemes a service serves.
func schemeList() string { return strings.Join(service.Schemes(), ", ") }
