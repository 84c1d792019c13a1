package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ahp-go/ahp/adapters/hooks"
	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/observe"
	"github.com/ahp-go/ahp/transport/httpserver"
	"github.com/ahp-go/ahp/transport/wstransport/wsserve"
)

// serveHTTP serves AHP over HTTP(S): http://HOST:PORT[/PATH] (the path
// defaults to /ahp). The same path takes WebSocket upgrades; the tools'
// HTTP hooks are served on /hooks/*, and the observer channels too when
// Options.Observe.OnListeners is set.
func (s *Service) serveHTTP(ctx context.Context, scheme, target string, ready func(string, string)) error {
	u, err := url.Parse(scheme + ":" + target)
	if err != nil || u.Host == "" || u.Port() == "" {
		return fmt.Errorf("--listen %s:%s: want %s://HOST:PORT, as in %s://127.0.0.1:8080", scheme, target, scheme, scheme)
	}
	path := u.Path
	if path == "" || path == "/" {
		path = "/ahp"
	}
	tlsCfg, err := s.net.serverTLS()
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
	a, err := s.net.authenticator(s.log, true, host)
	if err != nil {
		return err
	}
	if scheme == "http" && !auth.IsLoopbackHost(host) {
		if _, open := a.(auth.InsecureNoAuth); !open {
			s.log.Warn("API keys and bearer tokens cross the network in clear text on http://; use https:// with --tls-cert and --tls-key", "listen", u.Host)
		}
	}
	metrics, err := s.net.authMetrics()
	if err != nil {
		return err
	}
	h, err := httpserver.New(s.srv, httpserver.Options{
		Authenticator: a,
		MaxBodyBytes:  int64(s.cfg.Harness.MaxMessageBytes),
		WebSocket:     s.webSocketHandler(),
		Logger:        s.log,
		AuthMetrics:   metrics,
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(path, h)
	s.mountHooks(mux)
	s.mountObserve(mux)
	l, err := net.Listen("tcp", u.Host)
	if err != nil {
		return err
	}
	srv := httpserver.NewServer(mux, httpserver.ServerOptions{
		TLS:          tlsCfg,
		WriteTimeout: s.opts.HTTPWriteTimeout,
		ReadTimeout:  s.opts.HTTPReadTimeout,
		Logger:       s.log,
		Guard:        h.Guard(),
		Limiter:      s.lim,
		Name:         scheme + "://" + u.Host,
	})
	addr := scheme + "://" + l.Addr().String() + path
	ready(addr, fmt.Sprintf("ahp: harness listening on %s\nahp: try: ahp send --connect %s pre_action '{\"tool_name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}'", addr, addr))
	return srv.Serve(ctx, l)
}

// serveWebSocket serves ws://HOST:PORT[/PATH] and wss://...: the http(s)
// listener, which takes WebSocket upgrades and POSTs alike.
func (s *Service) serveWebSocket(ctx context.Context, scheme, target string, ready func(string, string)) error {
	httpScheme := "http"
	if scheme == "wss" {
		httpScheme = "https"
	}
	return s.serveHTTP(ctx, httpScheme, target, func(addr, hint string) {
		ready(strings.Replace(addr, httpScheme+"://", scheme+"://", 1), strings.ReplaceAll(hint, httpScheme+"://", scheme+"://"))
	})
}

// webSocketHandler is the WebSocket handler of the http(s) listeners (it
// runs after authentication). Its connections are closed when the
// listener shuts down.
func (s *Service) webSocketHandler() http.Handler {
	return wsserve.NewHandler(s.srv, wsserve.Options{
		MaxMessageBytes: s.cfg.Harness.MaxMessageBytes,
		WriteTimeout:    s.opts.WebSocket.WriteTimeout,
		PingInterval:    s.opts.WebSocket.PingInterval,
		OriginPatterns:  s.opts.WebSocket.Origins,
		Logger:          s.log,
	})
}

// mountHooks serves the tools' HTTP hooks, POST /hooks/claude-code,
// /hooks/codex and /hooks/gemini, with the credentials rule of the AHP
// endpoint (open without credentials only when every http(s) listener is
// on loopback), its role (agent) and its bounds: a hook input is at most
// max_message_bytes and at most httpserver.DefaultMaxInFlight hook calls
// are handled at once per listener; past a bound the call is denied.
func (s *Service) mountHooks(mux *http.ServeMux) {
	a, err := s.net.authenticator(s.log, false, httpListenHosts(s.cfg.Listen)...)
	if err != nil {
		s.log.Warn("hook endpoints /hooks/* not served", "error", err)
		return
	}
	write := s.opts.HTTPWriteTimeout
	if write == 0 {
		write = httpserver.DefaultWriteTimeout
	}
	h := hooks.NewHandler(hooks.ServerHarness{H: s.srv}, hooks.HandlerOptions{
		Timeout:      hookHTTPTimeout(write),
		MaxBodyBytes: int64(s.cfg.Harness.MaxMessageBytes),
		MaxInFlight:  httpserver.DefaultMaxInFlight,
	})
	metrics, err := s.net.authMetrics()
	if err != nil {
		s.log.Warn("refusals on /hooks/* are not counted", "error", err)
	}
	mux.Handle("/hooks/", auth.Middleware(a, auth.MiddlewareOptions{
		Transport: "http", RequireRole: auth.RoleAgent, Logger: s.log, Metrics: metrics,
	}, h))
}

// httpListenHosts returns the hosts of the http(s) listeners.
func httpListenHosts(listen []string) []string {
	var hosts []string
	for _, l := range listen {
		if u, err := url.Parse(l); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			hosts = append(hosts, u.Hostname())
		}
	}
	return hosts
}

// hookHTTPTimeout keeps a hook call's wait inside the listener's write
// timeout, so that the deny is written before the connection is cut.
func hookHTTPTimeout(write time.Duration) time.Duration {
	if write > 10*time.Second {
		return write - 5*time.Second
	}
	return write * 3 / 4
}

// mountObserve serves /observe and the dashboard on an http(s) listener
// when Options.Observe.OnListeners is set, with the credentials file.
func (s *Service) mountObserve(mux *http.ServeMux) {
	if s.hub == nil || !s.opts.Observe.OnListeners {
		return
	}
	if s.cfg.Auth.Credentials == "" {
		s.log.Warn("--observe-on-listeners needs --credentials: observers are not served on the network listeners")
		return
	}
	st, err := s.net.loadStore(s.log)
	if err != nil {
		s.log.Warn("observers are not served on the network listeners", "error", err)
		return
	}
	metrics, err := s.net.authMetrics()
	if err != nil {
		s.log.Warn("observers are not served on the network listeners", "error", err)
		return
	}
	oh := observe.NewHandler(s.hub, observe.HandlerOptions{Auth: st, Secure: s.cfg.Auth.TLSCert != "", Metrics: metrics})
	for _, p := range oh.Routes() {
		mux.Handle(p, oh)
	}
}
