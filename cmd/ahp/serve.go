package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
)

// serveEnv is what a listener needs to serve the harness.
type serveEnv struct {
	srv  *server.Server
	log  *slog.Logger
	opts *serveOptions
}

// listenFunc serves srv on target until ctx is done. ready is called once
// the listener accepts connections, with a line telling users how to
// connect.
type listenFunc func(ctx context.Context, env *serveEnv, scheme, target string, ready func(hint string)) error

var (
	listenMu      sync.Mutex
	listenSchemes = map[string]listenFunc{}
)

// registerListen makes `ahp serve --listen SCHEME:...` available.
func registerListen(scheme string, f listenFunc) {
	listenMu.Lock()
	defer listenMu.Unlock()
	listenSchemes[scheme] = f
}

func knownListenSchemes() []string {
	listenMu.Lock()
	defer listenMu.Unlock()
	out := []string{"stdio"}
	for s := range listenSchemes {
		out = append(out, s)
	}
	sort.Strings(out[1:])
	return out
}

// serveFlagHooks add flags to ahp serve; files that add listeners keep
// their flag values in variables of their own.
var serveFlagHooks []func(*pflag.FlagSet)

// serveOptions are the flags of ahp serve. Flags that are set override
// the configuration file; the others keep its values (or the defaults).
type serveOptions struct {
	configFile      string
	printConfig     bool
	dataDir         string
	admin           string
	policies        []string
	descriptor      string
	listen          []string
	maxMessageBytes int
	maxInFlight     int
	maxDepth        uint32
	batchSize       int
	timeoutMs       uint64
	cpuProfile      string
	protocolOnly    bool
	auditMaxBatch   int
	socketMode      string

	cfg           config.Config // the effective configuration
	adminExplicit bool          // the admin address was chosen, not defaulted
}

func init() {
	register(newServeCmd)
	registerListen("unix", serveUnix)
}

const defaultSocket = "ahp.sock"

func newServeCmd() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a harness that decides the events agents send",
		Long: `Run a harness.

Agents connect, perform the AHP handshake and send events; the harness
answers each blocking event with a decision. Listen addresses:

  stdio              read requests on stdin, answer on stdout (one agent)
  unix:PATH          a Unix socket (mode 0600), many agents
  http://HOST:PORT   HTTP POST /ahp and WebSocket GET /ahp (ws:// is the same)
  https://HOST:PORT  the same over TLS (--tls-cert, --tls-key; --client-ca for mutual TLS)
  grpc://HOST:PORT   gRPC service ahp.v1.Harness (grpcs:// with TLS)

Network listeners require --credentials (API keys, bearer tokens, client
certificates with roles; see docs/security.md) unless they listen on
loopback only, which is open with a warning, or --insecure-no-auth is given.

With no --listen, the harness listens on the Unix socket ./` + defaultSocket + `
and prints how to connect. Logs go to stderr.

With no configuration file, everything has a default: the audit log,
approvals and memory live in SQLite under ./ahp-data, the built-in policy
packs decide (destructive shell commands are blocked, private keys and
cloud credentials in prompts and tool arguments are blocked), and the
admin API (approvals, /healthz, /readyz, /metrics) listens on
http://127.0.0.1:7700. See --print-config for every setting.`,
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
	f := cmd.Flags()
	f.StringVar(&o.configFile, "config", os.Getenv("AHP_CONFIG"), "configuration file (YAML; or $AHP_CONFIG)")
	f.BoolVar(&o.printConfig, "print-config", false, "print the effective configuration as YAML and exit")
	f.StringVar(&o.dataDir, "data-dir", "", "directory of the audit store and admin token (default ./ahp-data)")
	f.StringVar(&o.admin, "admin", "", "admin API address, e.g. http://127.0.0.1:7700 (\"off\" disables it)")
	f.StringArrayVar(&o.policies, "policy", nil, "policy file to load after the built-in packs, repeatable")
	f.StringVar(&o.descriptor, "descriptor", "", "Agent Harness Descriptor to enforce: agents may only use the tools and handoffs it declares")
	f.StringArrayVar(&o.listen, "listen", nil, "address to listen on, repeatable: "+strings.Join(knownListenSchemes(), ", ")+" (default unix:./"+defaultSocket+")")
	f.IntVar(&o.maxMessageBytes, "max-message-bytes", transport.DefaultMaxMessageBytes, "largest message accepted from an agent")
	f.IntVar(&o.maxInFlight, "max-in-flight", 256, "concurrent requests per connection")
	f.Uint32Var(&o.maxDepth, "max-depth", 10, "deepest sub-agent event accepted (announced as max_depth)")
	f.IntVar(&o.batchSize, "batch-size", 100, "most events in one batch (announced as batch_size)")
	f.Uint64Var(&o.timeoutMs, "timeout-ms", 10000, "client timeout announced in the handshake")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile to this file (for performance work)")
	_ = f.MarkHidden("cpuprofile")
	f.StringVar(&o.socketMode, "socket-mode", "0600", "permissions of unix: sockets; 0660 lets the socket's group connect (agents running as their own user)")
	f.IntVar(&o.auditMaxBatch, "audit-max-batch", 0, "most audit records per group commit (default 256; 1 disables group commit, for measuring its effect)")
	_ = f.MarkHidden("audit-max-batch")
	f.BoolVar(&o.protocolOnly, "protocol-only", false, "decide with the built-in baseline only: no policy engine, no audit log (for measuring the protocol layer)")
	_ = f.MarkHidden("protocol-only")
	for _, add := range serveFlagHooks {
		add(f)
	}
	return cmd
}

func runServe(cmd *cobra.Command, o *serveOptions) error {
	if err := effectiveConfig(cmd, o); err != nil {
		return err
	}
	if o.printConfig {
		out, err := o.cfg.Marshal()
		if err != nil {
			return err
		}
		_, err = cmd.OutOrStdout().Write(out)
		return err
	}
	logLevel, logFormat = o.cfg.Log.Level, o.cfg.Log.Format
	log, err := newLogger()
	if err != nil {
		return err
	}
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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	hs, err := buildHarness(ctx, log, o)
	if err != nil {
		return err
	}
	defer hs.close()
	c := o.cfg.Harness
	srv := server.New(hs.handler, server.Options{
		Name: c.Name, Version: buildVersion(),
		TimeoutMs: c.TimeoutMs, BatchSize: c.BatchSize, MaxDepth: c.MaxDepth,
		MaxMessageBytes: c.MaxMessageBytes, MaxInFlight: c.MaxInFlight, Logger: log,
	})
	env := &serveEnv{srv: srv, log: log, opts: o}
	if err := hs.startAdmin(ctx, cancel); err != nil {
		return err
	}
	var bg sync.WaitGroup
	defer func() {
		cancel() // background work ends before the store closes
		bg.Wait()
	}()
	bg.Go(func() { hs.watchReloads(ctx) })
	bg.Go(func() { hs.retain(ctx) })

	listens := o.cfg.Listen
	errc := make(chan error, len(listens))
	var wg sync.WaitGroup
	for _, addr := range listens {
		scheme, target, _ := strings.Cut(addr, ":")
		if addr == "stdio" {
			wg.Add(1)
			go func() {
				defer wg.Done()
				log.Debug("serving on stdio")
				err := srv.ServeConn(ctx, transport.Stdio(os.Stdin, os.Stdout, o.maxMessageBytes))
				// stdin closed: the agent is gone, so the harness ends.
				cancel()
				errc <- err
			}()
			continue
		}
		listenMu.Lock()
		f := listenSchemes[scheme]
		listenMu.Unlock()
		if f == nil {
			return fmt.Errorf("--listen %q: unknown scheme (want one of %s)", addr, strings.Join(knownListenSchemes(), ", "))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := f(ctx, env, scheme, target, func(hint string) {
				log.Info("listening", "address", addr)
				if hint != "" {
					fmt.Fprintln(os.Stderr, hint)
				}
			})
			if err != nil {
				cancel()
			}
			errc <- err
		}()
	}
	wg.Wait()
	close(errc)
	var errs []error
	for err := range errc {
		if err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// serveUnix serves on a Unix socket.
func serveUnix(ctx context.Context, env *serveEnv, _, target string, ready func(string)) error {
	if target == "" {
		return errors.New("--listen unix: needs a path, as in unix:/run/ahp.sock")
	}
	mode, err := strconv.ParseUint(env.opts.socketMode, 8, 32)
	if err != nil || mode&^0o660 != 0 {
		return fmt.Errorf("--socket-mode %q: want 0600 or 0660 (octal)", env.opts.socketMode)
	}
	l, err := transport.ListenUnix(target, env.opts.maxMessageBytes)
	if err != nil {
		return err
	}
	if mode != 0o600 {
		if err := os.Chmod(target, os.FileMode(mode)); err != nil {
			_ = l.Close()
			return fmt.Errorf("--socket-mode: %w", err)
		}
	}
	shown := target
	if !filepath.IsAbs(shown) && !strings.HasPrefix(shown, ".") {
		shown = "./" + shown
	}
	ready(fmt.Sprintf("ahp: harness listening on unix:%s\nahp: try: ahp send --connect unix:%s pre_action '{\"tool_name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}'", shown, shown))
	return env.srv.Serve(ctx, l)
}

// effectiveConfig loads the configuration file (if any) and applies the
// flags that were set.
func effectiveConfig(cmd *cobra.Command, o *serveOptions) error {
	c := config.Default()
	if o.configFile != "" {
		var err error
		if c, err = config.Load(o.configFile); err != nil {
			return err
		}
	}
	f := cmd.Flags()
	if o.dataDir != "" {
		c.DataDir = o.dataDir
	}
	o.adminExplicit = o.admin != "" || (o.configFile != "" && c.Admin != config.Default().Admin)
	if o.admin != "" {
		c.Admin = o.admin
	}
	if c.Admin == "off" {
		c.Admin = ""
	}
	c.Policy.Files = append(c.Policy.Files, o.policies...)
	if o.descriptor != "" {
		c.Descriptor = o.descriptor
	}
	if len(o.listen) > 0 {
		c.Listen = o.listen
	}
	if f.Changed("max-message-bytes") {
		c.Harness.MaxMessageBytes = o.maxMessageBytes
	}
	if f.Changed("max-in-flight") {
		c.Harness.MaxInFlight = o.maxInFlight
	}
	if f.Changed("max-depth") {
		c.Harness.MaxDepth = o.maxDepth
	}
	if f.Changed("batch-size") {
		c.Harness.BatchSize = o.batchSize
	}
	if f.Changed("timeout-ms") {
		c.Harness.TimeoutMs = o.timeoutMs
	}
	if f.Changed("log-level") || c.Log.Level == "" {
		c.Log.Level = logLevel
	}
	if f.Changed("log-format") || c.Log.Format == "" {
		c.Log.Format = logFormat
	}
	// The auth section of the file and the security flags fill each other:
	// a flag that is set wins.
	if netFlags.credentials == "" {
		netFlags.credentials = c.Auth.Credentials
	}
	if !netFlags.insecureNoAuth {
		netFlags.insecureNoAuth = c.Auth.InsecureNoAuth
	}
	if netFlags.tlsCert == "" {
		netFlags.tlsCert = c.Auth.TLSCert
	}
	if netFlags.tlsKey == "" {
		netFlags.tlsKey = c.Auth.TLSKey
	}
	if netFlags.clientCA == "" {
		netFlags.clientCA = c.Auth.ClientCA
	}
	c.Auth = config.AuthConfig{Credentials: netFlags.credentials, InsecureNoAuth: netFlags.insecureNoAuth,
		TLSCert: netFlags.tlsCert, TLSKey: netFlags.tlsKey, ClientCA: netFlags.clientCA}
	applyShadowFlags(f, &c)
	if err := c.Validate(); err != nil {
		return err
	}
	o.maxMessageBytes = c.Harness.MaxMessageBytes
	o.cfg = c
	return nil
}
