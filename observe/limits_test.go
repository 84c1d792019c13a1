package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
	"github.com/ahp-go/ahp/transport"
)

// goodKey is the one credential limitsAuth accepts (test only).
const goodKey = "limits-observer-key"

// limitsAuth accepts goodKey, as a bearer token or an API key, as the
// observer "watcher".
var limitsAuth = auth.AuthenticatorFunc(func(_ context.Context, c auth.Credentials) (*transport.Principal, error) {
	if c.APIKey == goodKey || c.Bearer == goodKey {
		return &transport.Principal{ID: "watcher", Roles: []string{"observer"}}, nil
	}
	return nil, auth.ErrUnauthenticated
})

// clock is a settable clock for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// limitsServer serves a hub made with o (Store filled in) over HTTP and
// returns the hub, its handler and the /observe URL.
func limitsServer(t *testing.T, o Options) (*Hub, *Handler, string) {
	t.Helper()
	return limitsServerOn(t, o, nil)
}

// slowWrites delays every write to a connection, so that an upgrade's
// 101 response takes a while: the window in which a check-then-insert
// slot count races.
type slowWrites struct{ net.Listener }

func (l slowWrites) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	return slowConn{c}, err
}

type slowConn struct{ net.Conn }

func (c slowConn) Write(p []byte) (int, error) {
	time.Sleep(20 * time.Millisecond)
	return c.Conn.Write(p)
}

// limitsServerOn is limitsServer with the listener wrapped by wrap.
func limitsServerOn(t *testing.T, o Options, wrap func(net.Listener) net.Listener) (*Hub, *Handler, string) {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	o.Store = db
	hub, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(hub, HandlerOptions{Auth: limitsAuth})
	srv := httptest.NewUnstartedServer(h)
	if wrap != nil {
		srv.Listener = wrap(srv.Listener)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return hub, h, "ws" + strings.TrimPrefix(srv.URL, "http") + "/observe"
}

// dialObserve opens /observe, with goodKey when authed; it returns the
// connection or the HTTP status of the refusal.
func dialObserve(t *testing.T, url string, authed bool, hdr http.Header) (*websocket.Conn, int) {
	t.Helper()
	if hdr == nil {
		hdr = http.Header{}
	}
	if authed {
		hdr.Set("X-API-Key", goodKey)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		return nil, resp.StatusCode
	}
	c.SetReadLimit(16 << 20)
	t.Cleanup(func() { _ = c.CloseNow() })
	return c, http.StatusSwitchingProtocols
}

// dialMany dials n connections at once and returns those that were
// upgraded and the statuses of the others.
func dialMany(t *testing.T, url string, n int, authed bool) ([]*websocket.Conn, map[int]int) {
	t.Helper()
	var mu sync.Mutex
	var conns []*websocket.Conn
	statuses := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			c, st := dialObserve(t, url, authed, nil)
			mu.Lock()
			defer mu.Unlock()
			if c != nil {
				conns = append(conns, c)
			} else {
				statuses[st]++
			}
		})
	}
	close(start)
	wg.Wait()
	return conns, statuses
}

// Concurrent upgrades never take more than MaxObservers slots: the check
// and the taking are one step, and a closed connection gives its slot back.
func TestObserverSlotsNeverExceedLimit(t *testing.T) {
	hub, _, url := limitsServerOn(t, Options{MaxObservers: 4}, func(l net.Listener) net.Listener { return slowWrites{l} })
	conns, statuses := dialMany(t, url, 40, true)
	if len(conns) != 4 || statuses[http.StatusServiceUnavailable] != 36 {
		t.Fatalf("40 concurrent upgrades with MaxObservers 4: %d upgraded, refusals %v; want 4 upgraded, 36 refused with 503", len(conns), statuses)
	}
	if n := hub.Observers(); n > 4 {
		t.Fatalf("hub holds %d observers, more than MaxObservers 4", n)
	}
	for _, c := range conns {
		_ = c.CloseNow()
	}
	deadline := time.Now().Add(5 * time.Second)
	for hub.Observers() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if c, st := dialObserve(t, url, true, nil); c == nil {
		t.Fatalf("after every observer left, a new one got HTTP %d: slots were not given back", st)
	}
}

// A refused upgrade (an origin not allowed) gives its slot back.
func TestRefusedUpgradeGivesSlotBack(t *testing.T) {
	_, _, url := limitsServer(t, Options{MaxObservers: 2})
	for range 5 {
		if c, st := dialObserve(t, url, true, http.Header{"Origin": {"http://elsewhere.example"}}); c != nil || st != http.StatusForbidden {
			t.Fatalf("cross-origin upgrade: got status %d, want 403", st)
		}
	}
	for range 2 {
		if c, st := dialObserve(t, url, true, nil); c == nil {
			t.Fatalf("after refused upgrades, an observer got HTTP %d", st)
		}
	}
}

// Sockets without a credential have slots of their own (32): however many
// are open, authenticated observers still get all of MaxObservers, and an
// unauthenticated socket is still told -32007 in the protocol (the
// dashboard shows its login form on it).
func TestUnauthenticatedCannotCrowdOutObservers(t *testing.T) {
	_, _, url := limitsServer(t, Options{MaxObservers: 4})
	anon, statuses := dialMany(t, url, 40, false)
	if len(anon) > 32 {
		t.Fatalf("%d unauthenticated sockets upgraded at once; want at most 32", len(anon))
	}
	if len(anon) == 0 {
		t.Fatalf("no unauthenticated socket upgraded (refusals %v); the dashboard needs one to learn it must log in", statuses)
	}
	for i := range 4 {
		if c, st := dialObserve(t, url, true, nil); c == nil {
			t.Fatalf("authenticated observer %d refused with HTTP %d while %d unauthenticated sockets are open", i+1, st, len(anon))
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"channel":"ahp-root://","protocolVersions":["1.0.0"],"clientId":"x"}}`
	if err := anon[0].Write(ctx, websocket.MessageText, []byte(req)); err != nil {
		t.Fatal(err)
	}
	_, b, err := anon[0].Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Error *rpcError }
	if err := json.Unmarshal(b, &m); err != nil || m.Error == nil || m.Error.Code != CodeAuthRequired {
		t.Fatalf("unauthenticated initialize answered %s; want error -32007", b)
	}
}

// postLogin posts a login from remote and returns the response.
func postLogin(h *Handler, remote, credential string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(`{"credential":"`+credential+`"}`))
	r.Header.Set("Content-Type", "application/json")
	r.RemoteAddr = remote
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func loggedIn(h *Handler, cookie *http.Cookie) bool {
	r := httptest.NewRequest(http.MethodGet, "/observe", nil)
	r.AddCookie(cookie)
	_, err := h.principal(r)
	return err == nil
}

// One principal holds at most 16 logins: the 17th ends its oldest, so one
// credential cannot take every dashboard login slot.
func TestLoginsCappedPerPrincipal(t *testing.T) {
	_, h, _ := limitsServer(t, Options{})
	var cookies []*http.Cookie
	for i := range 20 {
		w := postLogin(h, "192.0.2.1:1000", goodKey)
		if w.Code != http.StatusOK {
			t.Fatalf("login %d: HTTP %d %s", i+1, w.Code, w.Body)
		}
		cookies = append(cookies, w.Result().Cookies()[0])
	}
	h.mu.Lock()
	n := len(h.logins)
	h.mu.Unlock()
	if n != 16 {
		t.Fatalf("20 logins of one principal keep %d sessions; want 16", n)
	}
	for i, c := range cookies {
		if got, want := loggedIn(h, c), i >= 4; got != want {
			t.Fatalf("login %d still valid = %v; want %v (the 4 oldest end)", i+1, got, want)
		}
	}
}

// Five failed logins within a minute from one address make every login
// from there (even with a good credential) 429 for a minute; other
// addresses are not affected. Refusals are logged at most once per 10 s,
// with a count, and never with the credential.
func TestFailedLoginsThrottled(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	var logBuf bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logBuf}, nil))
	_, h, _ := limitsServer(t, Options{Now: clk.now, Logger: logger})
	const wrong = "wrong-guess-secret"
	for i := range 5 {
		if w := postLogin(h, "192.0.2.7:5000", wrong); w.Code != http.StatusUnauthorized {
			t.Fatalf("failed login %d: HTTP %d, want 401", i+1, w.Code)
		}
	}
	w := postLogin(h, "192.0.2.7:5001", wrong)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("6th failed login within a minute: HTTP %d (Retry-After %q), want 429 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	if w := postLogin(h, "192.0.2.7:5002", goodKey); w.Code != http.StatusTooManyRequests {
		t.Fatalf("good credential from a throttled address: HTTP %d, want 429", w.Code)
	}
	if w := postLogin(h, "192.0.2.8:5000", goodKey); w.Code != http.StatusOK {
		t.Fatalf("good credential from another address: HTTP %d, want 200", w.Code)
	}
	logMu.Lock()
	lines := strings.Count(logBuf.String(), "\n")
	logged := logBuf.String()
	logMu.Unlock()
	if lines != 1 {
		t.Fatalf("7 refusals within 10 s logged %d lines, want 1:\n%s", lines, logged)
	}
	clk.add(61 * time.Second)
	if w := postLogin(h, "192.0.2.7:5003", wrong); w.Code != http.StatusUnauthorized {
		t.Fatalf("after the block: HTTP %d, want 401", w.Code)
	}
	if w := postLogin(h, "192.0.2.7:5004", goodKey); w.Code != http.StatusOK {
		t.Fatalf("good credential after the block: HTTP %d, want 200", w.Code)
	}
	logMu.Lock()
	logged = logBuf.String()
	logMu.Unlock()
	if strings.Count(logged, "\n") != 2 || !strings.Contains(logged, "refused_since_last_line=6") {
		t.Fatalf("want a second line counting the 6 refusals not logged:\n%s", logged)
	}
	if strings.Contains(logged, wrong) || strings.Contains(logged, goodKey) {
		t.Fatalf("a credential reached the log:\n%s", logged)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// The failed-login state is bounded whatever the number of addresses.
func TestLoginFailureStateBounded(t *testing.T) {
	_, h, _ := limitsServer(t, Options{})
	for i := range maxLoginAddrs + 100 {
		postLogin(h, fmt.Sprintf("10.%d.%d.%d:1", i>>16&255, i>>8&255, i&255), "nope")
	}
	// IPv6 addresses of one /64 are one address.
	for i := range 6 {
		postLogin(h, fmt.Sprintf("[2001:db8::%x]:1", i+1), "nope")
	}
	h.mu.Lock()
	n := len(h.failures)
	h.mu.Unlock()
	if n > maxLoginAddrs {
		t.Fatalf("%d addresses tracked, more than %d", n, maxLoginAddrs)
	}
	if w := postLogin(h, "[2001:db8::99]:1", goodKey); w.Code != http.StatusTooManyRequests {
		t.Fatalf("6 failures spread over one /64: HTTP %d, want 429", w.Code)
	}
}

// recordSessions has the hub hold sessions s-0 … s-(n-1), with activity
// in that order.
func recordSessions(hub *Hub, n int, start int64) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := start + int64(i)
		hub.Recorded(&store.AuditRecord{ID: id, Time: t0.Add(time.Duration(id) * time.Second), SessionID: fmt.Sprintf("s-%d", id),
			AgentID: "agent-1", EventType: "notification", Event: json.RawMessage(`{}`), Transport: "unix"})
	}
}

// rpc sends a request and returns the response with its id, skipping
// notifications.
func rpc(t *testing.T, c *websocket.Conn, id int, method string, params map[string]any) (json.RawMessage, *rpcError) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var m struct {
			ID     *int
			Result json.RawMessage
			Error  *rpcError
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m.ID != nil && *m.ID == id {
			return m.Result, m.Error
		}
	}
}

// One connection holds at most 256 subscriptions over all its requests;
// past them subscribe (and reconnect) is refused with a clear error, and
// unsubscribing makes room again.
func TestSubscriptionsCappedPerConnection(t *testing.T) {
	hub, _, url := limitsServer(t, Options{})
	recordSessions(hub, 300, 1)
	c, st := dialObserve(t, url, true, nil)
	if c == nil {
		t.Fatalf("dial: HTTP %d", st)
	}
	id := 1
	if _, e := rpc(t, c, id, "initialize", map[string]any{"channel": RootChannel, "protocolVersions": []string{"1.0.0"}, "clientId": "x",
		"initialSubscriptions": []string{RootChannel}}); e != nil {
		t.Fatalf("initialize: %+v", e)
	}
	for i := 1; i <= 255; i++ {
		id++
		if _, e := rpc(t, c, id, "subscribe", map[string]any{"channel": SessionChannel(fmt.Sprintf("s-%d", i))}); e != nil {
			t.Fatalf("subscription %d: %+v", i+1, e)
		}
	}
	id++
	_, e := rpc(t, c, id, "subscribe", map[string]any{"channel": SessionChannel("s-256")})
	if e == nil || e.Code != CodeInvalidRequest || !strings.Contains(e.Message, "256") {
		t.Fatalf("subscription 257: error %+v; want -32600 naming the bound of 256", e)
	}
	id++
	subs := []string{}
	for i := 260; i < 270; i++ {
		subs = append(subs, SessionChannel(fmt.Sprintf("s-%d", i)))
	}
	if _, e := rpc(t, c, id, "reconnect", map[string]any{"channel": RootChannel, "clientId": "x", "lastSeenServerSeq": 0, "subscriptions": subs}); e == nil || e.Code != CodeInvalidRequest {
		t.Fatalf("reconnect past the bound: error %+v; want -32600", e)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "unsubscribe", "params": map[string]any{"channel": SessionChannel("s-1")}})
	if err := c.Write(t.Context(), websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	id++
	if _, e := rpc(t, c, id, "subscribe", map[string]any{"channel": SessionChannel("s-256")}); e != nil {
		t.Fatalf("subscribe after an unsubscribe: %+v", e)
	}
}

// Sessions pinned by subscribers do not stop the hub from forgetting the
// others: the hub stays near MaxSessions, and does not sort every session
// on each new one.
func TestEvictionWithPinnedSessions(t *testing.T) {
	hub, _, _ := limitsServer(t, Options{MaxSessions: 10})
	recordSessions(hub, 10, 1)
	ob := &observer{h: hub, q: make(chan outMsg, 1<<16), failed: make(chan struct{}), done: make(chan struct{}), subs: map[string]bool{}}
	hub.mu.Lock()
	for i := 1; i <= 10; i++ {
		// Half of them are watched through their chat only: that pins
		// them too.
		ch := SessionChannel(fmt.Sprintf("s-%d", i))
		if i%2 == 0 {
			ch = ChatChannel(fmt.Sprintf("s-%d", i))
		}
		hub.subscribeLocked(ob, ch)
	}
	hub.mu.Unlock()
	var most atomic.Int64
	for i := int64(11); i <= 500; i++ {
		recordSessions(hub, 1, i)
		hub.mu.Lock()
		most.Store(max(most.Load(), int64(len(hub.sessions))))
		hub.mu.Unlock()
	}
	if m := most.Load(); m > 13 {
		t.Fatalf("with 10 pinned sessions and MaxSessions 10 the hub held up to %d sessions; want at most 13", m)
	}
	hub.mu.Lock()
	defer hub.mu.Unlock()
	for i := 1; i <= 10; i++ {
		if hub.sessions[fmt.Sprintf("s-%d", i)] == nil {
			t.Fatalf("pinned session s-%d was forgotten", i)
		}
	}
}
