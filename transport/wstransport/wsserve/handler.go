// Package wsserve serves AHP over WebSocket: an http.Handler that
// authenticates the upgrade request, accepts the WebSocket and serves it
// with server.ServeConn, one JSON-RPC message per text frame. It is apart
// from wstransport because it depends on the server and auth packages,
// which agents that only dial do not need.
package wsserve

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/wstransport"
)

// Options configure a Handler. The zero value serves only requests that
// were authenticated before they reached the Handler (see Authenticator).
type Options struct {
	// Authenticator authenticates upgrade requests that carry no principal
	// yet: credentials in the X-API-Key or "Authorization: Bearer" header
	// (preferred), or in the api_key or token query parameter as the 2.4
	// client sends them (accepted, with a warning), or a verified client
	// certificate. The principal must hold auth.RoleAgent. When nil, only
	// requests already authenticated upstream (server.WithPeer info with a
	// principal in their context, as httpserver's WebSocket hook passes
	// them) are served; all others get 401. auth.InsecureNoAuth{} accepts
	// everyone.
	Authenticator auth.Authenticator
	// MaxMessageBytes bounds one received frame; a larger one closes the
	// connection with status 1009 (the server's MaxMessageBytes when 0).
	MaxMessageBytes int
	// WriteTimeout drops a peer that does not take a message in time
	// (wstransport.DefaultWriteTimeout when 0).
	WriteTimeout time.Duration
	// PingInterval and PongTimeout set the keep-alive: a ping every
	// PingInterval, and the connection is closed when its pong does not
	// come within PongTimeout (wstransport defaults when 0; a negative
	// PingInterval turns pings off).
	PingInterval time.Duration
	PongTimeout  time.Duration
	// OriginPatterns lists the host patterns of browser origins allowed to
	// connect (see websocket.AcceptOptions). Requests without an Origin
	// header, which is what agents send, are always allowed; with none
	// listed, only same-origin browser requests are.
	OriginPatterns []string
	// Logger receives connection events and refusals (discarded when nil).
	Logger *slog.Logger
	// Registerer receives ahp_auth_refusals_total, unless AuthMetrics is set.
	Registerer prometheus.Registerer
	// AuthMetrics is a refusal counter shared with other transports.
	AuthMetrics *auth.Metrics
}

// Handler accepts WebSocket upgrades and serves each connection until the
// peer leaves or Close is called. Mount it at /ahp (it does not look at
// the path), or hand it to httpserver.Options.WebSocket.
type Handler struct {
	srv   *server.Server
	opts  Options
	log   *slog.Logger
	guard *auth.Guard // nil without an Authenticator
	auth  http.Handler

	life context.Context
	stop context.CancelFunc

	mu      sync.Mutex
	conns   map[*wstransport.Conn]entry
	watched map[*http.Server]bool
	closed  bool
	wg      sync.WaitGroup
}

// entry is an open connection: the server it came through (when known)
// and what ends the context it is served with.
type entry struct {
	hs     *http.Server
	cancel context.CancelFunc
}

// NewHandler returns a Handler that serves srv.
func NewHandler(srv *server.Server, opts Options) *Handler {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = srv.Options().MaxMessageBytes
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &Handler{srv: srv, opts: opts, log: log, conns: map[*wstransport.Conn]entry{}, watched: map[*http.Server]bool{}}
	h.life, h.stop = context.WithCancel(context.Background())
	if opts.Authenticator != nil {
		h.guard = auth.NewGuard(opts.Authenticator, auth.MiddlewareOptions{
			Transport: "ws", AllowQuery: true, RequireRole: auth.RoleAgent,
			Logger: log, Registerer: opts.Registerer, Metrics: opts.AuthMetrics,
		})
		h.auth = h.guard.Middleware(http.HandlerFunc(h.serveUpgrade))
	}
	return h
}

// ServeHTTP authenticates r, upgrades it and serves the connection. A
// refused request gets 401 or 403 before any WebSocket or JSON-RPC
// processing; a request that is not an upgrade gets 426.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if server.PeerFromContext(r.Context()).Principal != nil || h.auth == nil {
		h.serveUpgrade(w, r)
		return
	}
	h.auth.ServeHTTP(w, r)
}

// serveUpgrade runs once the request is authenticated (or found not to be).
func (h *Handler) serveUpgrade(w http.ResponseWriter, r *http.Request) {
	p := server.PeerFromContext(r.Context()).Principal
	if err := h.allowed(p); err != nil {
		h.refuse(w, r, err)
		return
	}
	if !isUpgrade(r) {
		w.Header().Set("Upgrade", "websocket")
		w.Header().Set("Connection", "Upgrade")
		http.Error(w, "this endpoint speaks WebSocket: send a GET with Upgrade: websocket", http.StatusUpgradeRequired)
		return
	}
	if !h.begin() {
		http.Error(w, "server shutting down", http.StatusServiceUnavailable)
		return
	}
	// net/http clears its read and write deadlines when the connection is
	// hijacked (TestOutlivesHTTPServerTimeouts); the WebSocket has its own
	// (write timeout, keep-alive).
	c, err := wstransport.Accept(w, r, wstransport.AcceptOptions{
		OriginPatterns: h.opts.OriginPatterns,
		Conn: wstransport.ConnOptions{
			MaxMessageBytes: h.opts.MaxMessageBytes,
			WriteTimeout:    h.opts.WriteTimeout,
			PingInterval:    h.opts.PingInterval,
			PongTimeout:     h.opts.PongTimeout,
			Info:            transport.Info{Transport: "ws", Remote: r.RemoteAddr, Principal: p},
		},
	})
	if err != nil {
		h.end(nil)
		h.log.Debug("websocket upgrade failed", "remote", r.RemoteAddr, "error", err)
		return // Accept has written the HTTP error
	}
	// The connection is served without this goroutine, which net/http
	// grew while reading the request: it returns, and an idle agent costs
	// only the goroutine waiting for its input. The context keeps the
	// request's values but not its end, which comes when this returns.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	stop := context.AfterFunc(h.life, cancel)
	hs, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	h.mu.Lock()
	h.conns[c] = entry{hs: hs, cancel: cancel}
	if hs != nil && !h.watched[hs] {
		// Shutdown does not know hijacked connections: tell it about ours.
		h.watched[hs] = true
		hs.RegisterOnShutdown(func() { h.closeFrom(hs) })
	}
	h.mu.Unlock()

	remote, id := r.RemoteAddr, p.ID
	h.log.Debug("websocket connected", "remote", remote, "principal", id)
	h.srv.Start(ctx, c, func(err error) {
		stop()
		cancel()
		h.ended(c, remote, id, err)
		h.end(c)
	})
}

// ended logs how a connection ended.
func (h *Handler) ended(c *wstransport.Conn, remote, id string, err error) {
	switch {
	case c.TimedOut():
		h.log.Info("websocket dropped: peer missed a pong or did not read in time", "remote", remote, "principal", id)
	case err != nil:
		var tl *transport.TooLargeError
		if errors.As(err, &tl) {
			h.log.Warn("websocket closed: frame over the size limit", "remote", remote, "principal", id, "limit", tl.Limit)
		} else {
			h.log.Debug("websocket ended", "remote", remote, "principal", id, "error", err)
		}
	default:
		h.log.Debug("websocket closed", "remote", remote, "principal", id)
	}
}

// allowed checks the principal a request arrived with.
func (h *Handler) allowed(p *transport.Principal) error {
	if p == nil {
		return &auth.RefusalError{Reason: auth.ReasonMissing, Detail: "no authenticated principal"}
	}
	return auth.Require(p, auth.RoleAgent)
}

// refuse answers a refused request with 401 or 403.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, err error) {
	if h.guard != nil {
		h.guard.Refused(r.Context(), r.RemoteAddr, auth.ReasonOf(err), err)
		h.guard.WriteRefusal(w, err)
		return
	}
	h.log.Warn("websocket upgrade refused", "remote", r.RemoteAddr, "reason", auth.ReasonOf(err))
	if auth.HTTPStatus(err) == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ahp"`)
	}
	http.Error(w, http.StatusText(auth.HTTPStatus(err))+": "+auth.ReasonOf(err), auth.HTTPStatus(err))
}

// begin counts a connection about to be accepted; false after Close.
func (h *Handler) begin() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	return true
}

// end undoes begin and forgets c (nil when the upgrade failed).
func (h *Handler) end(c *wstransport.Conn) {
	h.mu.Lock()
	if c != nil {
		delete(h.conns, c)
	}
	h.mu.Unlock()
	h.wg.Done()
}

// Close refuses new upgrades, closes every open connection with status
// 1001 (going away) and waits for them to finish. Requests in flight on
// them are abandoned; agents see their calls fail and may reconnect
// elsewhere. The connections that came through an http.Server are also
// closed, without waiting, when that server's Shutdown is called (which
// on its own leaves upgraded connections alone).
func (h *Handler) Close() error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.closeFrom(nil)
	h.stop()
	h.wg.Wait()
	return nil
}

// closeFrom closes the connections that came through hs (all when nil).
func (h *Handler) closeFrom(hs *http.Server) {
	h.mu.Lock()
	var conns []*wstransport.Conn
	var cancels []context.CancelFunc
	for c, e := range h.conns {
		if hs == nil || e.hs == hs {
			conns = append(conns, c)
			cancels = append(cancels, e.cancel)
		}
	}
	h.mu.Unlock()
	for i, c := range conns {
		_ = c.CloseWith(websocket.StatusGoingAway, "server shutting down")
		cancels[i]() // requests in flight on it are abandoned
	}
}

// Connections returns the number of open WebSocket connections.
func (h *Handler) Connections() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// isUpgrade reports whether r asks for a WebSocket upgrade.
func isUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet && hasToken(r.Header, "Connection", "upgrade") && hasToken(r.Header, "Upgrade", "websocket")
}

func hasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}
