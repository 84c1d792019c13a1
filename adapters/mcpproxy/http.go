package mcpproxy

import (
	"context"
	"crypto/rand"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxHTTPSessions bounds the MCP sessions an HTTPHandler serves at once
// (each has its own upstream server).
const MaxHTTPSessions = 64

// HTTPHandler serves the proxy over MCP Streamable HTTP: every MCP session
// gets its own upstream connection (from Upstream) and its own proxy. Put
// authentication in front of it.
type HTTPHandler struct {
	// Upstream connects to a new instance of the MCP server.
	Upstream func(ctx context.Context) (mcp.Connection, error)
	// Options of each session's proxy; SessionID defaults to
	// "mcp-" + the MCP session id.
	Options Options
	// Context bounds every session (context.Background when nil).
	Context context.Context

	mu       sync.Mutex
	sessions map[string]*mcp.StreamableServerTransport
	closed   bool           // Wait was called: no new sessions
	running  sync.WaitGroup // the sessions' proxies
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

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if id != "" {
		h.mu.Lock()
		t := h.sessions[id]
		h.mu.Unlock()
		if t == nil {
			http.Error(w, "unknown MCP session", http.StatusNotFound)
			return
		}
		t.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "a new MCP session starts with a POST of initialize", http.StatusMethodNotAllowed)
		return
	}
	t, err := h.start()
	if err != nil {
		http.Error(w, "cannot start the MCP server: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	t.ServeHTTP(w, r)
}

func (h *HTTPHandler) start() (*mcp.StreamableServerTransport, error) {
	ctx := h.Context
	if ctx == nil {
		ctx = context.Background()
	}
	h.mu.Lock()
	if h.sessions == nil {
		h.sessions = map[string]*mcp.StreamableServerTransport{}
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
	t := &mcp.StreamableServerTransport{SessionID: id}
	h.sessions[id] = t
	h.running.Add(1) // under mu, before Wait can begin
	h.mu.Unlock()
	forget := func() {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
		h.running.Done()
	}
	down, err := t.Connect(ctx)
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
	return t, nil
}

type httpError string

func (e httpError) Error() string { return string(e) }

const (
	errTooMany = httpError("too many MCP sessions")
	errClosing = httpError("the proxy is shutting down")
)
