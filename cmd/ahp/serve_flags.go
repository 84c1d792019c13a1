package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/httpserver"
	"github.com/ahp-go/ahp/transport/wstransport"
)

// serveOptions are the flags of ahp serve. Flags that are set override
// the configuration file; the others keep its values (or the defaults).
type serveOptions struct {
	configFile      string
	printConfig     bool
	dataDir         string
	store           string
	admin           string
	policies        []string
	descriptor      string
	listen          []string
	maxMessageBytes int
	maxInFlight     int
	maxConnections  int
	maxDepth        uint32
	batchSize       int
	timeoutMs       uint64
	cpuProfile      string
	protocolOnly    bool
	auditMaxBatch   int
	socketMode      string

	// Security of network listeners (the auth section of the file).
	credentials    string
	insecureNoAuth bool
	tlsCert        string
	tlsKey         string
	clientCA       string
	httpWrite      time.Duration
	httpRead       time.Duration

	// WebSocket on http(s) listeners.
	wsPing    time.Duration
	wsWrite   time.Duration
	wsOrigins []string

	// Observer channels and dashboard.
	observeOnListeners bool
	observeRing        int
	observeQueue       int

	// Rolling a policy out in shadow (docs/shadow.md).
	policyMode   string
	shadowFiles  []string
	shadowSample float64

	adminExplicit bool // the admin address was chosen, not defaulted
}

func (o *serveOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.configFile, "config", os.Getenv("AHP_CONFIG"), "configuration file (YAML; or $AHP_CONFIG)")
	f.BoolVar(&o.printConfig, "print-config", false, "print the effective configuration as YAML and exit")
	f.StringVar(&o.dataDir, "data-dir", "", "directory of the audit store and admin token (or $AHP_DATA_DIR; default "+config.DefaultDataDir()+"); one harness at a time uses it")
	f.StringVar(&o.store, "store", "", "store: sqlite (default, in --data-dir) or postgres://USER@HOST:PORT/DB shared by replicas")
	f.StringVar(&o.admin, "admin", "", "admin API address, e.g. http://127.0.0.1:7700 (\"off\" disables it)")
	f.StringArrayVar(&o.policies, "policy", nil, "policy file to load after the built-in packs, repeatable")
	f.StringVar(&o.descriptor, "descriptor", "", "Agent Harness Descriptor to enforce: agents may only use the tools and handoffs it declares")
	f.StringArrayVar(&o.listen, "listen", nil, "address to listen on, repeatable: "+schemeList()+" (default "+config.DefaultConnect()+")")
	f.IntVar(&o.maxMessageBytes, "max-message-bytes", transport.DefaultMaxMessageBytes, "largest message accepted from an agent")
	f.IntVar(&o.maxInFlight, "max-in-flight", 256, "concurrent requests per connection")
	f.IntVar(&o.maxConnections, "max-connections", 0, "agent connections open at once, across all listeners; more are refused (0: derived from the open-file limit, see docs/transports.md)")
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

	f.StringVar(&o.credentials, "credentials", os.Getenv("AHP_CREDENTIALS"), "credentials file for network listeners: principals, roles, API keys, bearer tokens, mTLS mappings (or $AHP_CREDENTIALS; see docs/security.md)")
	f.BoolVar(&o.insecureNoAuth, "insecure-no-auth", false, "let anyone who reaches a network listener send events, unauthenticated (dangerous; loopback listeners without --credentials are open anyway, with a warning)")
	f.StringVar(&o.tlsCert, "tls-cert", os.Getenv("AHP_TLS_CERT"), "PEM certificate for https (and TLS on other network listeners) (or $AHP_TLS_CERT)")
	f.StringVar(&o.tlsKey, "tls-key", os.Getenv("AHP_TLS_KEY"), "PEM private key of --tls-cert (or $AHP_TLS_KEY)")
	f.StringVar(&o.clientCA, "client-ca", os.Getenv("AHP_CLIENT_CA"), "PEM CA bundle: require client certificates signed by it (mutual TLS) and map them to principals via the credentials file (or $AHP_CLIENT_CA)")
	f.DurationVar(&o.httpWrite, "http-write-timeout", httpserver.DefaultWriteTimeout, "longest time an HTTP request may take to be answered (must exceed the longest escalation wait)")
	f.DurationVar(&o.httpRead, "http-read-timeout", httpserver.DefaultReadTimeout, "longest time to read one HTTP request, body included")

	f.DurationVar(&o.wsPing, "ws-ping-interval", wstransport.DefaultPingInterval, "WebSocket keep-alive: ping every agent this often and drop it when the pong is "+wstransport.DefaultPongTimeout.String()+" late (0 turns pings off)")
	f.DurationVar(&o.wsWrite, "ws-write-timeout", wstransport.DefaultWriteTimeout, "drop a WebSocket agent that does not take a message within this time (it stopped reading)")
	f.StringSliceVar(&o.wsOrigins, "ws-origin", nil, "browser origins (host patterns) allowed to open WebSocket connections; agents send no Origin and are always allowed")

	f.BoolVar(&o.observeOnListeners, "observe-on-listeners", false, "serve the observer protocol (/observe) and the dashboard on the http(s) listeners too (needs --credentials)")
	f.IntVar(&o.observeRing, "observe-ring", 4096, "observer actions kept in memory for replay (older ones are rebuilt from the store)")
	f.IntVar(&o.observeQueue, "observe-queue", 1024, "messages queued per observer before it is disconnected as too slow")

	f.StringVar(&o.policyMode, "policy-mode", "enforce", "enforce, or shadow: every rule, packs included, is evaluated and recorded but none decides (a first deployment)")
	f.StringArrayVar(&o.shadowFiles, "shadow-policy", nil, "candidate policy file evaluated beside the live policy on every event, never deciding; disagreements are recorded (repeatable)")
	f.Float64Var(&o.shadowSample, "shadow-sample", 1, "fraction of events the shadow policy evaluates, in (0, 1]")
}

// effectiveConfig loads the configuration file (if any) and applies the
// flags that were set.
func (o *serveOptions) effectiveConfig(f *pflag.FlagSet) (config.Config, error) {
	c := config.Default()
	if o.configFile != "" {
		var err error
		if c, err = config.Load(o.configFile); err != nil {
			return c, err
		}
	}
	if o.store != "" {
		c.Store = o.store
	}
	if o.dataDir != "" {
		c.DataDir = o.dataDir
	} else if v := os.Getenv(dataDirEnv); v != "" {
		c.DataDir = v
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
	if f.Changed("max-connections") {
		c.Harness.MaxConnections = o.maxConnections
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
	a := c.Auth
	if o.credentials != "" {
		a.Credentials = o.credentials
	}
	if o.insecureNoAuth {
		a.InsecureNoAuth = true
	}
	if o.tlsCert != "" {
		a.TLSCert = o.tlsCert
	}
	if o.tlsKey != "" {
		a.TLSKey = o.tlsKey
	}
	if o.clientCA != "" {
		a.ClientCA = o.clientCA
	}
	c.Auth = a
	if f.Changed("policy-mode") {
		c.Policy.Mode = o.policyMode
	}
	c.Policy.Shadow.Files = append(c.Policy.Shadow.Files, o.shadowFiles...)
	if f.Changed("shadow-sample") {
		c.Policy.Shadow.Sample = o.shadowSample
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// serviceOptions are the settings of the service that come from flags
// outside the configuration file.
func (o *serveOptions) serviceOptions(c config.Config) (service.Options, error) {
	mode, err := strconv.ParseUint(o.socketMode, 8, 32)
	if err != nil || mode&^0o660 != 0 {
		return service.Options{}, fmt.Errorf("--socket-mode %q: want 0600 or 0660 (octal)", o.socketMode)
	}
	ping := o.wsPing
	if ping == 0 {
		ping = -1 // the service: negative turns pings off, zero means the default
	}
	return service.Options{
		Version:          buildVersion(),
		ConfigFile:       o.configFile,
		AdminOptional:    !o.adminExplicit,
		ProtocolOnly:     o.protocolOnly,
		AuditMaxBatch:    o.auditMaxBatch,
		SocketMode:       os.FileMode(mode),
		HTTPWriteTimeout: o.httpWrite,
		HTTPReadTimeout:  o.httpRead,
		WebSocket:        service.WebSocketOptions{PingInterval: ping, WriteTimeout: o.wsWrite, Origins: o.wsOrigins},
		Observe:          service.ObserveOptions{OnListeners: o.observeOnListeners, Ring: o.observeRing, Queue: o.observeQueue},
	}, nil
}
