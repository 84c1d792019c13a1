package httpserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
)

// DefaultMaxInFlight bounds the POSTs one Handler works on at a time.
const DefaultMaxInFlight = 1024

// Options configure a Handler.
type Options struct {
	// Authenticator decides who may send messages; required. Use
	// auth.InsecureNoAuth{} to accept everyone (see its risks). Senders
	// must hold auth.RoleAgent.
	Authenticator auth.Authenticator
	// MaxBodyBytes bounds one POST body; larger ones get 413
	// (transport.DefaultMaxMessageBytes, 4 MiB, when 0).
	MaxBodyBytes int64
	// MaxInFlight bounds the POSTs handled at once; beyond it the answer is
	// 503 with Retry-After (DefaultMaxInFlight when 0).
	MaxInFlight int
	// WebSocket, when set, receives GET requests that ask for a WebSocket
	// upgrade, after authentication (query-string credentials allowed, as
	// 2.4 clients send them), with server.WithPeer info in their context
	// (transport "ws").
	WebSocket http.Handler
	// Logger receives refusals and warnings (discarded when nil).
	Logger *slog.Logger
	// Registerer receives ahp_auth_refusals_total, unless AuthMetrics is set.
	Registerer prometheus.Registerer
	// AuthMetrics is a refusal counter shared with other transports.
	AuthMetrics *auth.Metrics
}

// Handler is the AHP endpoint. Mount it at /ahp (the 2.4 path) in any
// http.ServeMux; it does not look at the path itself. A POST carries one
// JSON-RPC message: a request is answered 200 with the response, a
// notification 204 with no body. Malformed JSON gets 200 with a -32700
// error and JSON that is not a JSON-RPC message 200 with -32600, as the
// protocol says; HTTP-level problems get 401, 403, 405, 413, 415 or 503,
// and none of them reaches the server.
type Handler struct {
	srv     *server.Server
	max     int64
	slots   chan struct{}
	ws      http.Handler
	guard   *auth.Guard
	allowed string
}

// New returns the endpoint handler for srv.
func New(srv *server.Server, o Options) (*Handler, error) {
	if srv == nil {
		return nil, errors.New("httpserver: no server")
	}
	if o.Authenticator == nil {
		return nil, errors.New("httpserver: no Authenticator (use auth.InsecureNoAuth{} to accept everyone)")
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = transport.DefaultMaxMessageBytes
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	metrics := o.AuthMetrics
	if metrics == nil {
		var err error
		if metrics, err = auth.NewMetrics(o.Registerer); err != nil {
			return nil, err
		}
	}
	h := &Handler{srv: srv, max: o.MaxBodyBytes, slots: make(chan struct{}, o.MaxInFlight), allowed: "POST"}
	h.guard = auth.NewGuard(o.Authenticator, auth.MiddlewareOptions{
		Transport: "http", RequireRole: auth.RoleAgent, Logger: o.Logger, Metrics: metrics,
	})
	if o.WebSocket != nil {
		h.allowed = "GET, POST"
		h.ws = auth.NewGuard(o.Authenticator, auth.MiddlewareOptions{
			Transport: "ws", AllowQuery: true, RequireRole: auth.RoleAgent, Logger: o.Logger, Metrics: metrics,
		}).Middleware(o.WebSocket)
	}
	return h, nil
}

// Guard returns the guard that authenticates POSTs; Server uses it to
// count failed TLS handshakes.
func (h *Handler) Guard() *auth.Guard { return h.guard }

// ServeHTTP authenticates r, then answers it (see Handler).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.ws != nil && IsWebSocketUpgrade(r) {
		h.ws.ServeHTTP(w, r)
		return
	}
	// The POST path authenticates inline rather than through
	// Guard.Middleware: same checks, without copying the request.
	c := auth.FromHTTPRequest(r, false)
	p, err := h.guard.Check(r.Context(), r.RemoteAddr, c)
	if err != nil {
		h.guard.WriteRefusal(w, err)
		return
	}
	ctx := server.WithPeer(r.Context(), transport.Info{Transport: "http", Remote: r.RemoteAddr, Principal: p})
	h.servePost(ctx, w, r)
}

// IsWebSocketUpgrade reports whether r asks for a WebSocket upgrade.
func IsWebSocketUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet &&
		headerHasToken(r.Header, "Connection", "upgrade") &&
		headerHasToken(r.Header, "Upgrade", "websocket")
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// servePost runs after authentication; ctx carries the peer.
func (h *Handler) servePost(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", h.allowed)
		httpError(w, http.StatusMethodNotAllowed, "use POST with one JSON-RPC message as the body")
		return
	}
	if !jsonContentType(r.Header.Get("Content-Type")) {
		w.Header().Set("Accept", "application/json")
		httpError(w, http.StatusUnsupportedMediaType, "the body must be Content-Type: application/json")
		return
	}
	if r.ContentLength > h.max {
		httpError(w, http.StatusRequestEntityTooLarge, "message larger than "+strconv.FormatInt(h.max, 10)+" bytes")
		return
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		w.Header().Set("Retry-After", "1")
		httpError(w, http.StatusServiceUnavailable, "too many requests in flight")
		return
	}
	body, err := readBody(w, r, h.max)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			httpError(w, http.StatusRequestEntityTooLarge, "message larger than "+strconv.FormatInt(h.max, 10)+" bytes")
			return
		}
		httpError(w, http.StatusBadRequest, "could not read the body")
		return
	}
	resp := h.srv.HandleMessage(ctx, body)
	if resp == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	hd := w.Header()
	hd["Content-Type"] = jsonType
	hd["Content-Length"] = []string{strconv.Itoa(len(resp))}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(resp)
}

var jsonType = []string{"application/json"}

// readBody reads the whole body, at most max bytes. A body with a
// Content-Length (already checked against max) is read exactly; net/http
// stops it at that length. Only a chunked body needs MaxBytesReader.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if n := r.ContentLength; n >= 0 {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, max))
}

// jsonContentType accepts application/json with an optional charset,
// which must then be UTF-8 (JSON's only interchange encoding).
func jsonContentType(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") && !strings.EqualFold(v, "utf8") {
			return false
		}
	}
	return true
}

func httpError(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, http.StatusText(code)+": "+msg+"\n")
}
