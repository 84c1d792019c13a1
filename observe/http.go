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

// maxLoginsPerPrincipal bounds the live logins of one principal; a new
// login past it ends that principal's oldest one, so one credential
// cannot take every slot of maxLogins.
const maxLoginsPerPrincipal = 16

// Failed logins are throttled per remote address (an IPv6 address by its
// /64): after loginFailLimit failures within loginFailWindow, every login
// from there is answered 429 for loginBlockFor, without looking at the
// credential. At most maxLoginAddrs addresses are tracked.
const (
	loginFailLimit  = 5
	loginFailWindow = time.Minute
	loginBlockFor   = time.Minute
	maxLoginAddrs   = 4096
)

// unauthenticatedLife is how long a connection without a usable
// credential may stay open (it may only ping).
const unauthenticatedLife = 10 * time.Second

// refusalLogEvery is the least time between two log lines about refused
// logins and connections; the refusals in between are counted.
const refusalLogEvery = 10 * time.Second

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
	// Metrics, when set, counts refused logins and connections as
	// ahp_auth_refusals_total{transport="observer"}.
	Metrics *auth.Metrics
}

// Handler serves the observer protocol at /observe, the dashboard at /
// (assets under /ui/), and the dashboard's login at /login and /logout.
type Handler struct {
	hub *Hub
	o   HandlerOptions
	mux *http.ServeMux

	mu       sync.Mutex
	logins   map[[32]byte]login
	failures map[string]*loginFailures // by remoteKey
	lastLog  time.Time                 // of the last refusal logged
	unlogged int                       // refusals since then, not logged
}

type login struct {
	p       *transport.Principal
	expires time.Time
}

// loginFailures counts the failed logins of one remote address.
type loginFailures struct {
	n            int
	since        time.Time // first failure of the window
	blockedUntil time.Time
}

// NewHandler returns the observer endpoint and dashboard of hub.
func NewHandler(hub *Hub, o HandlerOptions) *Handler {
	h := &Handler{hub: hub, o: o, mux: http.NewServeMux(), logins: map[[32]byte]login{}, failures: map[string]*loginFailures{}}
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
	remote := remoteKey(r)
	if wait := h.throttled(remote); wait > 0 {
		h.refused(remote, "throttled")
		w.Header().Set("Retry-After", itoa(int64((wait+time.Second-1)/time.Second)))
		writeJSONError(w, http.StatusTooManyRequests, CodeAuthRequired, "too many failed logins from this address; try again later")
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
		h.loginFailed(remote)
		h.refused(remote, "unknown_credential")
		writeJSONError(w, http.StatusUnauthorized, CodeAuthRequired, "unknown credential")
		return
	}
	if !canObserve(p) {
		h.refused(remote, "not_observer")
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
	var oldest [32]byte
	mine := 0
	for k, l := range h.logins {
		switch {
		case now.After(l.expires):
			delete(h.logins, k)
		case l.p.ID == p.ID:
			if mine == 0 || l.expires.Before(h.logins[oldest].expires) {
				oldest = k
			}
			mine++
		}
	}
	if mine >= maxLoginsPerPrincipal {
		delete(h.logins, oldest) // the principal's oldest login ends
	}
	if len(h.logins) >= maxLogins {
		h.mu.Unlock()
		h.refused(remote, "logins_full")
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
		authErr.Data = authRequiredData(r)
		p = nil
	case !canObserve(p):
		authErr = errorf(CodePermissionDenied, "principal "+p.ID+" may not observe (role observer, approver or admin required; agent credentials are refused)")
		p = nil
	}
	hub := h.hub
	// Connections without a usable credential have slots of their own,
	// so that they cannot keep observers out.
	authed := authErr == nil
	if !hub.reserve(authed) {
		if authed {
			h.refused(remoteKey(r), "observers_full")
			writeJSONError(w, http.StatusServiceUnavailable, CodeInternalError, "too many observers connected")
		} else {
			h.refused(remoteKey(r), "unauthenticated_full")
			writeJSONError(w, http.StatusServiceUnavailable, CodeAuthRequired, "too many unauthenticated connections; send a credential")
		}
		return
	}
	dc := &deadlineClearer{ResponseWriter: w}
	ws, err := websocket.Accept(dc, r, &websocket.AcceptOptions{OriginPatterns: h.o.OriginPatterns})
	if err != nil {
		hub.unreserve(authed)
		return // Accept wrote the HTTP error
	}
	ob := &observer{h: hub, ws: ws, cork: dc.cork, p: p, authErr: authErr, q: make(chan outMsg, hub.o.QueueSize), kick: make(chan struct{}, 1),
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
	rctx := ctx // a new variable: the goroutines above read ctx
	if authErr != nil {
		// Unauthenticated connections get a short life.
		var c2 context.CancelFunc
		rctx, c2 = context.WithTimeout(ctx, unauthenticatedLife)
		defer c2()
	}
	ob.readLoop(rctx)
	close(ob.done)
	wg.Wait()
	_ = ws.CloseNow()
	hub.mu.Lock()
	delete(hub.observers, ob)
	hub.unreserveLocked(authed)
	for ch := range ob.subs {
		hub.dropSubscriberLocked(ob, ch)
	}
	hub.mu.Unlock()
}

// deadlineClearer clears the deadlines the HTTP server set on the
// connection when it is hijacked: an observer connection lives long. It
// also puts a corkConn under the WebSocket library's writes (kept in cork),
// so that the observer's writer can send several messages at once.
type deadlineClearer struct {
	http.ResponseWriter
	cork *corkConn
}

func (d *deadlineClearer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(d.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		_ = c.Close()
		return nil, nil, errors.Join(errors.New("observe: clear deadlines"), err)
	}
	if brw.Writer.Buffered() > 0 { // never: the response was flushed; but keep order if so
		if err := brw.Writer.Flush(); err != nil {
			_ = c.Close()
			return nil, nil, err
		}
	}
	d.cork = newCorkConn(c)
	return d.cork, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(d.cork, brw.Writer.Size())), nil
}

// Unwrap lets http.ResponseController reach the original writer.
func (d *deadlineClearer) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// remoteKey names the address a request comes from, for throttling and
// logs: the peer's IP (an IPv6 address by its /64, which one host
// usually holds whole). Forwarding headers are not trusted.
func remoteKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return truncate(host, 64)
	}
	if ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ip.String()
}

// throttled returns how long logins from remote are still refused.
func (h *Handler) throttled(remote string) time.Duration {
	now := h.hub.o.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if f := h.failures[remote]; f != nil && now.Before(f.blockedUntil) {
		return f.blockedUntil.Sub(now)
	}
	return 0
}

// loginFailed counts a failed login from remote; the loginFailLimit-th
// within loginFailWindow blocks the address for loginBlockFor.
func (h *Handler) loginFailed(remote string) {
	now := h.hub.o.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.failures[remote]
	if f == nil {
		if len(h.failures) >= maxLoginAddrs {
			h.pruneFailuresLocked(now)
		}
		f = &loginFailures{}
		h.failures[remote] = f
	}
	if now.Sub(f.since) > loginFailWindow {
		f.n, f.since = 0, now
	}
	f.n++
	if f.n >= loginFailLimit {
		f.blockedUntil = now.Add(loginBlockFor)
		f.n, f.since = 0, now
	}
}

// pruneFailuresLocked forgets the addresses neither blocked nor failing
// within the window; if none is, the one whose window began first. h.mu
// must be held.
func (h *Handler) pruneFailuresLocked(now time.Time) {
	var first string
	for k, f := range h.failures {
		if now.After(f.blockedUntil) && now.Sub(f.since) > loginFailWindow {
			delete(h.failures, k)
			continue
		}
		if first == "" || f.since.Before(h.failures[first].since) {
			first = k
		}
	}
	if len(h.failures) >= maxLoginAddrs {
		delete(h.failures, first)
	}
}

// refused counts a refused login or connection and logs it, at most one
// line per refusalLogEvery with the count of those not logged. The
// credential is never logged.
func (h *Handler) refused(remote, reason string) {
	h.o.Metrics.Refused("observer", reason)
	now := h.hub.o.Now()
	h.mu.Lock()
	if !h.lastLog.IsZero() && now.Sub(h.lastLog) < refusalLogEvery {
		h.unlogged++
		h.mu.Unlock()
		return
	}
	n := h.unlogged
	h.lastLog, h.unlogged = now, 0
	h.mu.Unlock()
	h.hub.log.Warn("observe: refused a dashboard login or observer connection",
		"reason", reason, "remote", remote, "refused_since_last_line", n)
}

// authRequiredData is the data the Host Protocol requires with -32007:
// the protected resource (this endpoint) and how to present a credential.
func authRequiredData(r *http.Request) map[string]any {
	scheme := "ws"
	if r.TLS != nil {
		scheme = "wss"
	}
	return map[string]any{"resources": []map[string]any{{
		"resource":                 scheme + "://" + r.Host + "/observe",
		"resource_name":            "ahp observers",
		"bearer_methods_supported": []string{"header"},
	}}}
}
