package observe

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/transport"
)

// CookieName is the dashboard's session cookie.
const CookieName = "ahp_observer"

// loginTTL is how long a dashboard login lasts.
const loginTTL = 12 * time.Hour

// maxLogins bounds the dashboard logins kept at once.
const maxLogins = 1024

// HandlerOptions configure Handler.
type HandlerOptions struct {
	// Auth checks credentials: bearer tokens and API keys in headers (for
	// programs) and the credential typed into the dashboard's login form.
	Auth auth.Authenticator
	// Secure marks the session cookie Secure (set it when served over TLS).
	Secure bool
	// OriginPatterns are extra browser origins allowed to connect (see
	// websocket.AcceptOptions); by default only the page's own origin is.
	OriginPatterns []string
}

// Handler serves the observer protocol at /observe, the dashboard at /
// (assets under /ui/), and the dashboard's login at /login and /logout.
type Handler struct {
	hub *Hub
	o   HandlerOptions
	mux *http.ServeMux

	mu     sync.Mutex
	logins map[[32]byte]login
}

type login struct {
	p       *transport.Principal
	expires time.Time
}

// NewHandler returns the observer endpoint and dashboard of hub.
func NewHandler(hub *Hub, o HandlerOptions) *Handler {
	h := &Handler{hub: hub, o: o, mux: http.NewServeMux(), logins: map[[32]byte]login{}}
	h.mux.HandleFunc("GET /observe", h.serveObserve)
	h.mux.HandleFunc("POST /login", h.login)
	h.mux.HandleFunc("POST /logout", h.logout)
	h.mux.Handle("GET /ui/", assetHandler())
	h.mux.HandleFunc("GET /{$}", serveIndex)
	return h
}

// Routes lists the patterns Handler serves, for mounting it on a mux.
func (h *Handler) Routes() []string {
	return []string{"GET /observe", "POST /login", "POST /logout", "GET /ui/", "GET /{$}"}
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.mux.ServeHTTP(w, r)
}

// principal returns who makes r: a credential in the headers, else the
// dashboard's session cookie.
func (h *Handler) principal(r *http.Request) (*transport.Principal, error) {
	if c := auth.FromHTTPRequest(r, false); !c.Empty() {
		if h.o.Auth == nil {
			return nil, auth.ErrUnauthenticated
		}
		return h.o.Auth.Authenticate(r.Context(), c)
	}
	ck, err := r.Cookie(CookieName)
	if err != nil {
		return nil, auth.ErrUnauthenticated
	}
	key := cookieKey(ck.Value)
	h.mu.Lock()
	defer h.mu.Unlock()
	l, ok := h.logins[key]
	if !ok || time.Now().After(l.expires) {
		delete(h.logins, key)
		return nil, auth.ErrUnauthenticated
	}
	return l.p, nil
}

func cookieKey(v string) [32]byte { return sha256.Sum256([]byte(v)) }

// sameOrigin refuses cross-site state-changing requests: a browser sends
// Origin (or at least Sec-Fetch-Site) with them; programs send neither.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

func writeJSONError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg}})
}

// login exchanges a credential from the credentials file (or the local
// admin token) for an HttpOnly, SameSite=Strict session cookie.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		writeJSONError(w, http.StatusForbidden, CodePermissionDenied, "cross-site login refused")
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		writeJSONError(w, http.StatusUnsupportedMediaType, CodeInvalidRequest, "send {\"credential\": \"...\"} as application/json")
		return
	}
	var body struct {
		Credential string `json:"credential"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<10)).Decode(&body); err != nil || body.Credential == "" {
		writeJSONError(w, http.StatusBadRequest, CodeInvalidParams, "send {\"credential\": \"...\"}")
		return
	}
	var p *transport.Principal
	err := auth.ErrUnauthenticated
	if h.o.Auth != nil {
		// A credential may be a bearer token or an API key.
		if p, err = h.o.Auth.Authenticate(r.Context(), auth.Credentials{Bearer: body.Credential}); err != nil {
			p, err = h.o.Auth.Authenticate(r.Context(), auth.Credentials{APIKey: body.Credential})
		}
	}
	if err != nil {
		writeJSONError(w, http.StatusUnauthorized, CodeAuthRequired, "unknown credential")
		return
	}
	if !canObserve(p) {
		writeJSONError(w, http.StatusForbidden, CodePermissionDenied, "principal "+p.ID+" may not observe (role observer, approver or admin required; agent credentials are refused)")
		return
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		writeJSONError(w, http.StatusInternalServerError, CodeInternalError, "no randomness for a session")
		return
	}
	tok := hex.EncodeToString(raw[:])
	now := time.Now()
	h.mu.Lock()
	for k, l := range h.logins {
		if now.After(l.expires) {
			delete(h.logins, k)
		}
	}
	if len(h.logins) >= maxLogins {
		h.mu.Unlock()
		writeJSONError(w, http.StatusServiceUnavailable, CodeInternalError, "too many dashboard logins; log out elsewhere or wait")
		return
	}
	h.logins[cookieKey(tok)] = login{p: p, expires: now.Add(loginTTL)}
	h.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: tok, Path: "/", HttpOnly: true, Secure: h.o.Secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(loginTTL / time.Second)})
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"principal": p.ID, "roles": p.Roles, "canApprove": canApprove(p)})
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		writeJSONError(w, http.StatusForbidden, CodePermissionDenied, "cross-site logout refused")
		return
	}
	if ck, err := r.Cookie(CookieName); err == nil {
		h.mu.Lock()
		delete(h.logins, cookieKey(ck.Value))
		h.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true, Secure: h.o.Secure,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	w.WriteHeader(http.StatusNoContent)
}

// serveObserve upgrades to the observer protocol. Refused credentials are
// answered in the protocol (-32007 or -32009) to the first request other
// than ping, then the connection closes.
func (h *Handler) serveObserve(w http.ResponseWriter, r *http.Request) {
	p, err := h.principal(r)
	var authErr *rpcError
	switch {
	case err != nil:
		authErr = errorf(CodeAuthRequired, "authentication required: log in to the dashboard, or send Authorization: Bearer or X-API-Key with an observer or approver credential")
		p = nil
	case !canObserve(p):
		authErr = errorf(CodePermissionDenied, "principal "+p.ID+" may not observe (role observer, approver or admin required; agent credentials are refused)")
		p = nil
	}
	hub := h.hub
	hub.mu.Lock()
	full := len(hub.observers) >= hub.o.MaxObservers
	hub.mu.Unlock()
	if full {
		writeJSONError(w, http.StatusServiceUnavailable, CodeInternalError, "too many observers connected")
		return
	}
	ws, err := websocket.Accept(deadlineClearer{w}, r, &websocket.AcceptOptions{OriginPatterns: h.o.OriginPatterns})
	if err != nil {
		return // Accept wrote the HTTP error
	}
	ob := &observer{h: hub, ws: ws, p: p, authErr: authErr, q: make(chan []byte, hub.o.QueueSize),
		failed: make(chan struct{}), done: make(chan struct{}), subs: map[string]bool{}}
	hub.mu.Lock()
	hub.observers[ob] = struct{}{}
	hub.mu.Unlock()
	// The connection outlives the request's handler deadlines but not the
	// server: r.Context ends when the server shuts down.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	go func() {
		select {
		case <-r.Context().Done():
		case <-ob.failed:
		case <-ctx.Done():
			return
		}
		cancel()
	}()
	var wg sync.WaitGroup
	wg.Go(func() { ob.writeLoop(ctx) })
	if authErr != nil {
		// Unauthenticated connections get a short life.
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, 10*time.Second)
		defer c2()
	}
	ob.readLoop(ctx)
	close(ob.done)
	wg.Wait()
	_ = ws.CloseNow()
	hub.mu.Lock()
	delete(hub.observers, ob)
	for ch := range ob.subs {
		if m := hub.subs[ch]; m != nil {
			delete(m, ob)
			if len(m) == 0 {
				delete(hub.subs, ch)
			}
		}
	}
	hub.mu.Unlock()
}

// deadlineClearer clears the deadlines the HTTP server set on the
// connection when it is hijacked: an observer connection lives long.
type deadlineClearer struct{ http.ResponseWriter }

func (d deadlineClearer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(d.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		_ = c.Close()
		return nil, nil, errors.Join(errors.New("observe: clear deadlines"), err)
	}
	return c, brw, nil
}

// Unwrap lets http.ResponseController reach the original writer.
func (d deadlineClearer) Unwrap() http.ResponseWriter { return d.ResponseWriter }
