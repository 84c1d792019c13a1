package mcpproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxHTTPSessions bounds the MCP sessions an HTTPHandler serves at once
// (each has its own upstream server).
const MaxHTTPSessions = 64

// Defaults of HTTPHandler's limits.
const (
	// DefaultIdleTimeout is how long a session may go without a request
	// in progress before it is closed and its upstream server stopped.
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultMaxBodyBytes bounds one request body.
	DefaultMaxBodyBytes = 4 << 20
)

// maxInitBatch bounds the messages of a JSON-RPC batch read to find an
// initialize request.
const maxInitBatch = 64

// HTTPHandler serves the proxy over MCP Streamable HTTP: every MCP session
// gets its own upstream connection (from Upstream) and its own proxy. Put
// authentication in front of it.
//
// A session, and with it an upstream server, starts only for a POST
// without Mcp-Session-Id whose body is a JSON-RPC initialize request (or
// a batch holding one); any other such POST is answered 400 and starts
// nothing. A session with no request in progress for IdleTimeout, or
// whose client sent DELETE, is closed and its upstream connection closed
// (for mcp.CommandTransport: the process stops). Request bodies past
// MaxBodyBytes are answered 413 and not read further.
//
// The handler itself refuses (403) requests that a web page could make
// against a local server: on a connection to a loopback address, a Host
// that is not a loopback name or address (DNS rebinding); and on every
// connection a browser's cross-site request (Sec-Fetch-Site: cross-site,
// or an Origin that is neither the request's own host nor a loopback
// host).
type HTTPHandler struct {
	// Upstream connects to a new instance of the MCP server.
	Upstream func(ctx context.Context) (mcp.Connection, error)
	// Options of each session's proxy; SessionID defaults to
	// "mcp-" + the MCP session id.
	Options Options
	// Context bounds every session (context.Background when nil).
	Context context.Context
	// IdleTimeout closes a session that has had no request in progress
	// for this long (DefaultIdleTimeout when 0).
	IdleTimeout time.Duration
	// MaxBodyBytes bounds each request body (DefaultMaxBodyBytes when 0).
	MaxBodyBytes int64

	mu       sync.Mutex
	sessions map[string]*httpSession
	closed   bool           // Wait was called: no new sessions
	running  sync.WaitGroup // the sessions' proxies
}

// httpSession is one MCP session: its transport, the end of its proxy and
// its idle timer. active and idleSince are guarded by HTTPHandler.mu.
type httpSession struct {
	t         *mcp.StreamableServerTransport
	end       context.CancelFunc // ends the proxy, which closes upstream
	active    int                // requests in progress
	idleSince time.Time          // when active last fell to 0
	idle      *time.Timer
}

// Wait stops new sessions and waits until every session's proxy has
// ended and closed its upstream connection (for a command started by
// mcp.CommandTransport, that stops the process). Sessions end when their
// client goes or when Context is cancelled: cancel it first for a
// shutdown.
func (h *HTTPHandler) Wait() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.running.Wait()
}

func (h *HTTPHandler) idleTimeout() time.Duration {
	if h.IdleTimeout > 0 {
		return h.IdleTimeout
	}
	return DefaultIdleTimeout
}

func (h *HTTPHandler) maxBodyBytes() int64 {
	if h.MaxBodyBytes > 0 {
		return h.MaxBodyBytes
	}
	return DefaultMaxBodyBytes
}

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if why := refuseBrowser(r); why != "" {
		http.Error(w, "Forbidden: "+why, http.StatusForbidden)
		return
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, h.maxBodyBytes())
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		s := h.enter(id)
		if s == nil {
			http.Error(w, "unknown MCP session", http.StatusNotFound)
			return
		}
		defer h.leave(s)
		if r.Method == http.MethodDelete {
			s.end()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		s.t.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "a new MCP session starts with a POST of initialize", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, "request body larger than "+strconv.FormatInt(mbe.Limit, 10)+" bytes", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "cannot read the request body", http.StatusBadRequest)
		return
	}
	if !isInitialize(body) {
		http.Error(w, "a new MCP session starts with a POST of a JSON-RPC initialize request; other requests need an Mcp-Session-Id header", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s, err := h.start()
	if err != nil {
		http.Error(w, "cannot start the MCP server: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer h.leave(s)
	s.t.ServeHTTP(w, r)
}

// enter finds session id and counts a request in progress on it (nil
// when there is no such session).
func (h *HTTPHandler) enter(id string) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[id]
	if s != nil {
		s.active++
		s.idle.Stop()
	}
	return s
}

// leave ends a request on s; the last one starts its idle timer.
func (h *HTTPHandler) leave(s *httpSession) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.active--
	if s.active == 0 && h.sessions[s.t.SessionID] == s {
		s.idleSince = time.Now()
		s.idle.Reset(h.idleTimeout())
	}
}

// expire closes s if it is still idle (the timer may have fired as a
// request came in).
func (h *HTTPHandler) expire(s *httpSession) {
	h.mu.Lock()
	idle := s.active == 0 && time.Since(s.idleSince) >= h.idleTimeout()
	h.mu.Unlock()
	if idle {
		s.end()
	}
}

// start begins a session, with one request in progress, and its
// upstream connection.
func (h *HTTPHandler) start() (*httpSession, error) {
	ctx := h.Context
	if ctx == nil {
		ctx = context.Background()
	}
	h.mu.Lock()
	if h.sessions == nil {
		h.sessions = map[string]*httpSession{}
	}
	if h.closed {
		h.mu.Unlock()
		return nil, errClosing
	}
	if len(h.sessions) >= MaxHTTPSessions {
		h.mu.Unlock()
		return nil, errTooMany
	}
	id := rand.Text()
	ctx, end := context.WithCancel(ctx)
	s := &httpSession{t: &mcp.StreamableServerTransport{SessionID: id}, end: end, active: 1}
	s.idle = time.AfterFunc(h.idleTimeout(), func() { h.expire(s) })
	s.idle.Stop() // armed when the last request leaves
	h.sessions[id] = s
	h.running.Add(1) // under mu, before Wait can begin
	h.mu.Unlock()
	forget := func() {
		end()
		h.mu.Lock()
		s.idle.Stop()
		delete(h.sessions, id)
		h.mu.Unlock()
		h.running.Done()
	}
	down, err := s.t.Connect(ctx)
	if err != nil {
		forget()
		return nil, err
	}
	up, err := h.Upstream(ctx)
	if err != nil {
		down.Close()
		forget()
		return nil, err
	}
	opts := h.Options
	if opts.SessionID == "" {
		opts.SessionID = "mcp-" + id
	}
	go func() {
		defer forget()
		_ = Proxy(ctx, down, up, opts)
	}()
	return s, nil
}

// isInitialize reports whether body is a JSON-RPC initialize request, or
// a batch (as the SDK's transport still accepts for older protocol
// versions) holding one. Member names are matched exactly.
func isInitialize(body []byte) bool {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(body, &batch) != nil || len(batch) > maxInitBatch {
			return false
		}
		for _, m := range batch {
			if isInitializeRequest(m) {
				return true
			}
		}
		return false
	}
	return isInitializeRequest(body)
}

func isInitializeRequest(msg []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return false
	}
	var method string
	if json.Unmarshal(m["method"], &method) != nil || method != "initialize" {
		return false
	}
	id := bytes.TrimSpace(m["id"])
	return len(id) > 0 && !bytes.Equal(id, []byte("null"))
}

// refuseBrowser says why r must be refused as a request a web page could
// have made (DNS rebinding or cross-site), "" when it may be served.
func refuseBrowser(r *http.Request) string {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local != nil && isLoopbackAddr(local.String()) && !isLoopbackAddr(r.Host) {
		return "the Host header must name a loopback address on a loopback listener"
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return "cross-site browser request"
	}
	if origins := r.Header.Values("Origin"); len(origins) > 0 {
		u, err := url.Parse(origins[0])
		if len(origins) > 1 || err != nil || u.Host == "" {
			return "malformed or opaque Origin"
		}
		if !strings.EqualFold(u.Host, r.Host) && !isLoopbackAddr(u.Host) {
			return "cross-origin browser request"
		}
	}
	return ""
}

// isLoopbackAddr reports whether HOST or HOST:PORT names a loopback
// address: localhost, 127.0.0.0/8 or ::1.
func isLoopbackAddr(addr string) bool {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") || strings.EqualFold(host, "localhost.") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

type httpError string

func (e httpError) Error() string { return string(e) }

const (
	errTooMany = httpError("too many MCP sessions")
	errClosing = httpError("the proxy is shutting down")
)
