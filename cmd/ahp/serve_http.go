package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/transport/httpserver"
)

// netFlagValues are the security flags shared by every network listener
// of ahp serve (http, https, and the WebSocket and gRPC listeners).
type netFlagValues struct {
	credentials    string
	insecureNoAuth bool
	tlsCert        string
	tlsKey         string
	clientCA       string
	writeTimeout   time.Duration
	readTimeout    time.Duration

	// reg, when set (by the code that serves /metrics), receives the
	// refusal counter of every listener.
	reg prometheus.Registerer

	mu       sync.Mutex
	store    *auth.Store
	warned   map[string]bool
	metrics  *auth.Metrics
	metricsR prometheus.Registerer
}

// netFlags holds the values of the network security flags of ahp serve.
var netFlags = &netFlagValues{warned: map[string]bool{}}

// httpRouteHooks mount more routes (health, metrics, UI) on the mux of
// every http(s) listener, next to the AHP endpoint.
var httpRouteHooks []func(mux *http.ServeMux, env *serveEnv)

// httpWebSocketHook, when set, returns the handler for WebSocket upgrades
// on the AHP path of http(s) listeners (it runs after authentication).
var httpWebSocketHook func(env *serveEnv) (http.Handler, error)

func init() {
	registerListen("http", serveHTTP)
	registerListen("https", serveHTTP)
	serveFlagHooks = append(serveFlagHooks, func(f *pflag.FlagSet) {
		f.StringVar(&netFlags.credentials, "credentials", os.Getenv("AHP_CREDENTIALS"), "credentials file for network listeners: principals, roles, API keys, bearer tokens, mTLS mappings (or $AHP_CREDENTIALS; see docs/security.md)")
		f.BoolVar(&netFlags.insecureNoAuth, "insecure-no-auth", false, "let anyone who reaches a network listener send events, unauthenticated (dangerous; loopback listeners without --credentials are open anyway, with a warning)")
		f.StringVar(&netFlags.tlsCert, "tls-cert", os.Getenv("AHP_TLS_CERT"), "PEM certificate for https (and TLS on other network listeners) (or $AHP_TLS_CERT)")
		f.StringVar(&netFlags.tlsKey, "tls-key", os.Getenv("AHP_TLS_KEY"), "PEM private key of --tls-cert (or $AHP_TLS_KEY)")
		f.StringVar(&netFlags.clientCA, "client-ca", os.Getenv("AHP_CLIENT_CA"), "PEM CA bundle: require client certificates signed by it (mutual TLS) and map them to principals via the credentials file (or $AHP_CLIENT_CA)")
		f.DurationVar(&netFlags.writeTimeout, "http-write-timeout", httpserver.DefaultWriteTimeout, "longest time an HTTP request may take to be answered (must exceed the longest escalation wait)")
		f.DurationVar(&netFlags.readTimeout, "http-read-timeout", httpserver.DefaultReadTimeout, "longest time to read one HTTP request, body included")
	})
}

// errNoCredentials is returned when a network listener would be open to
// everyone without that having been asked for.
var errNoCredentials = errors.New("a network listener needs --credentials FILE (or $AHP_CREDENTIALS); to run without authentication, pass --insecure-no-auth")

// authenticator returns the Authenticator of a network listener. The
// rule: --credentials selects the credentials file; --insecure-no-auth
// accepts everyone; with neither, a listener whose listenHost is
// loopback-only (127.0.0.0/8, ::1, localhost) is open with a warning, and
// any other listener (or a call that names no host) refuses to start.
// reg, when not nil, gets the refusal counter registered at once.
func (n *netFlagValues) authenticator(log *slog.Logger, reg prometheus.Registerer, listenHost ...string) (auth.Authenticator, error) {
	if reg != nil {
		if _, err := n.authMetrics(reg); err != nil {
			return nil, err
		}
	}
	switch {
	case n.credentials != "" && n.insecureNoAuth:
		return nil, errors.New("give --credentials or --insecure-no-auth, not both")
	case n.credentials != "":
		return n.loadStore(log)
	case n.insecureNoAuth:
		n.warnOnce(log, "insecure", "authentication is off (--insecure-no-auth): anyone who can reach the listener can send events and read decisions")
		return auth.InsecureNoAuth{}, nil
	case len(listenHost) > 0 && allLoopback(listenHost):
		if n.clientCA != "" {
			return nil, errors.New("--client-ca needs --credentials with an mtls section to map certificates to principals")
		}
		n.warnOnce(log, "loopback", "no --credentials: the loopback listener accepts every local process and user without authentication; give --credentials to require API keys")
		return auth.InsecureNoAuth{}, nil
	}
	return nil, errNoCredentials
}

func allLoopback(hosts []string) bool {
	for _, h := range hosts {
		if !auth.IsLoopbackHost(h) {
			return false
		}
	}
	return true
}

// loadStore loads the credentials file once per process and logs its
// warnings once.
func (n *netFlagValues) loadStore(log *slog.Logger) (*auth.Store, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.store != nil {
		return n.store, nil
	}
	st, err := auth.LoadFile(n.credentials)
	if err != nil {
		return nil, err
	}
	if n.clientCA != "" && !st.HasCertificateMappings() {
		return nil, fmt.Errorf("--client-ca is set but %s maps no certificate to a principal (add an mtls section)", n.credentials)
	}
	for _, w := range st.Warnings() {
		log.Warn("credentials file", "warning", w)
	}
	log.Info("credentials loaded", "file", n.credentials, "principals", len(st.Principals()))
	n.store = st
	return st, nil
}

// authMetrics returns the refusal counter shared by all listeners.
func (n *netFlagValues) authMetrics(reg prometheus.Registerer) (*auth.Metrics, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.metrics != nil && n.metricsR == reg {
		return n.metrics, nil
	}
	m, err := auth.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	n.metrics, n.metricsR = m, reg
	return m, nil
}

func (n *netFlagValues) warnOnce(log *slog.Logger, key, msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.warned[key] {
		n.warned[key] = true
		log.Warn(msg)
	}
}

// serverTLS returns the TLS config of a network listener from --tls-cert,
// --tls-key and --client-ca, or nil when TLS is not configured.
func (n *netFlagValues) serverTLS() (*tls.Config, error) {
	if n.tlsCert == "" && n.tlsKey == "" {
		if n.clientCA != "" {
			return nil, errors.New("--client-ca needs --tls-cert and --tls-key")
		}
		return nil, nil
	}
	return auth.ServerTLSConfig(n.tlsCert, n.tlsKey, n.clientCA)
}

// serveHTTP serves AHP over HTTP(S): --listen http://HOST:PORT[/PATH]
// (the path defaults to /ahp).
func serveHTTP(ctx context.Context, env *serveEnv, scheme, target string, ready func(string)) error {
	u, err := url.Parse(scheme + ":" + target)
	if err != nil || u.Host == "" || u.Port() == "" {
		return fmt.Errorf("--listen %s:%s: want %s://HOST:PORT, as in %s://127.0.0.1:8080", scheme, target, scheme, scheme)
	}
	path := u.Path
	if path == "" || path == "/" {
		path = "/ahp"
	}
	tlsCfg, err := netFlags.serverTLS()
	if err != nil {
		return err
	}
	switch {
	case scheme == "https" && tlsCfg == nil:
		return errors.New("--listen https:// needs --tls-cert and --tls-key")
	case scheme == "http" && tlsCfg != nil:
		return errors.New("--tls-cert is set: listen on https:// instead of http://")
	}
	host := u.Hostname()
	a, err := netFlags.authenticator(env.log, netFlags.reg, host)
	if err != nil {
		return err
	}
	if scheme == "http" && !auth.IsLoopbackHost(host) {
		if _, open := a.(auth.InsecureNoAuth); !open {
			env.log.Warn("API keys and bearer tokens cross the network in clear text on http://; use https:// with --tls-cert and --tls-key", "listen", u.Host)
		}
	}
	metrics, err := netFlags.authMetrics(netFlags.reg)
	if err != nil {
		return err
	}
	var ws http.Handler
	if httpWebSocketHook != nil {
		if ws, err = httpWebSocketHook(env); err != nil {
			return err
		}
	}
	h, err := httpserver.New(env.srv, httpserver.Options{
		Authenticator: a,
		MaxBodyBytes:  int64(env.opts.maxMessageBytes),
		WebSocket:     ws,
		Logger:        env.log,
		AuthMetrics:   metrics,
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(path, h)
	for _, hook := range httpRouteHooks {
		hook(mux, env)
	}
	l, err := net.Listen("tcp", u.Host)
	if err != nil {
		return err
	}
	srv := httpserver.NewServer(mux, httpserver.ServerOptions{
		TLS:          tlsCfg,
		WriteTimeout: netFlags.writeTimeout,
		ReadTimeout:  netFlags.readTimeout,
		Logger:       env.log,
		Guard:        h.Guard(),
	})
	addr := scheme + "://" + l.Addr().String() + path
	ready(fmt.Sprintf("ahp: harness listening on %s\nahp: try: ahp send --connect %s pre_action '{\"tool_name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}'", addr, addr))
	return srv.Serve(ctx, l)
}
