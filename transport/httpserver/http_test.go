package httpserver_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/auth/authtest"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/httpserver"
	"github.com/ahp-go/ahp/transport/httptransport"
)

func TestSuccess(t *testing.T) {
	t.Run("insecure", func(t *testing.T) {
		s := startServer(t, httpserver.Options{Authenticator: auth.InsecureNoAuth{}}, httpserver.ServerOptions{})
		if err := roundTrip(t, s.URL, transport.DialOptions{}); err != nil {
			t.Fatal(err)
		}
		if s.H.handshakes.Load() != 1 || s.H.events.Load() != 1 || s.H.lastPrincipal() != "anonymous" {
			t.Fatalf("handler saw %d handshakes, %d events, principal %q", s.H.handshakes.Load(), s.H.events.Load(), s.H.lastPrincipal())
		}
		eventually(t, "notification", func() bool { return s.H.notes.Load() == 1 })
	})
	t.Run("api key", func(t *testing.T) {
		s := startServer(t, httpserver.Options{Authenticator: testStore(t)}, httpserver.ServerOptions{})
		if err := roundTrip(t, s.URL, transport.DialOptions{APIKey: agentKey}); err != nil {
			t.Fatal(err)
		}
		if s.H.events.Load() != 1 || s.H.notes.Load() != 1 || s.H.lastPrincipal() != "build-agent" {
			t.Fatalf("events %d notes %d principal %q", s.H.events.Load(), s.H.notes.Load(), s.H.lastPrincipal())
		}
	})
	t.Run("bearer", func(t *testing.T) {
		s := startServer(t, httpserver.Options{Authenticator: testStore(t)}, httpserver.ServerOptions{})
		if err := roundTrip(t, s.URL, transport.DialOptions{BearerToken: agentToken}); err != nil {
			t.Fatal(err)
		}
		if s.H.events.Load() != 1 || s.H.lastPrincipal() != "build-agent" {
			t.Fatalf("events %d principal %q", s.H.events.Load(), s.H.lastPrincipal())
		}
	})
	t.Run("mtls", func(t *testing.T) {
		pki := newPKI(t)
		s := startServer(t, httpserver.Options{Authenticator: testStore(t)}, httpserver.ServerOptions{TLS: pki.serverTLS})
		cfg := pki.clientTLS(t, pki.ca.Client(t, "agent-7"))
		if err := roundTrip(t, s.URL, transport.DialOptions{TLS: cfg}); err != nil {
			t.Fatal(err)
		}
		if s.H.events.Load() != 1 || s.H.lastPrincipal() != "cert-agent" {
			t.Fatalf("events %d principal %q", s.H.events.Load(), s.H.lastPrincipal())
		}
		// Files on disk through the exported helpers work the same way.
		dir := t.TempDir()
		caFile := pki.ca.WriteCA(t, dir, "ca.crt")
		certFile, keyFile := pki.ca.Client(t, "agent-7").Write(t, dir, "client")
		fileCfg, err := auth.ClientTLSConfig(certFile, keyFile, caFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := roundTrip(t, s.URL, transport.DialOptions{TLS: fileCfg}); err != nil {
			t.Fatal(err)
		}
	})
}

// pki is a CA with a server certificate for 127.0.0.1 and mutual TLS.
type pki struct {
	ca        *authtest.CA
	serverTLS *tls.Config
}

func newPKI(t *testing.T) *pki {
	ca := authtest.NewCA(t, "ahp test CA")
	dir := t.TempDir()
	certFile, keyFile := ca.Server(t).Write(t, dir, "server")
	cfg, err := auth.ServerTLSConfig(certFile, keyFile, ca.WriteCA(t, dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS12 || cfg.ClientAuth != tls.RequireAndVerifyClientCert {
		t.Fatalf("server TLS config: min %x auth %v", cfg.MinVersion, cfg.ClientAuth)
	}
	return &pki{ca: ca, serverTLS: cfg}
}

func (p *pki) clientTLS(t *testing.T, leaf *authtest.Leaf) *tls.Config {
	cfg := &tls.Config{RootCAs: p.ca.Pool(), MinVersion: tls.VersionTLS12}
	if leaf != nil {
		cfg.Certificates = []tls.Certificate{leaf.TLSCertificate(t)}
	}
	return cfg
}

// post sends one raw POST and returns the status, headers and body.
func post(t *testing.T, url, contentType string, body []byte, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

const preAction = `{"jsonrpc":"2.0","id":7,"method":"ahp/event","params":{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"2026-01-01T00:00:00Z","depth":0,"payload":{"tool_name":"bash"}}}`

func TestRefusals(t *testing.T) {
	s := startServer(t, httpserver.Options{Authenticator: testStore(t), MaxBodyBytes: 1 << 10}, httpserver.ServerOptions{})
	key := map[string]string{"X-API-Key": agentKey}
	cases := []struct {
		name   string
		ct     string
		body   string
		hdr    map[string]string
		status int
		check  func(t *testing.T, h http.Header, b []byte)
	}{
		{name: "missing key", ct: "application/json", body: preAction, status: 401, check: func(t *testing.T, h http.Header, _ []byte) {
			if h.Get("WWW-Authenticate") == "" {
				t.Error("no WWW-Authenticate")
			}
		}},
		{name: "wrong key", ct: "application/json", body: preAction, hdr: map[string]string{"X-API-Key": "guess"}, status: 401},
		{name: "wrong bearer", ct: "application/json", body: preAction, hdr: map[string]string{"Authorization": "Bearer guess"}, status: 401},
		{name: "key in the query of a POST", ct: "application/json", body: preAction, status: 401},
		{name: "wrong role", ct: "application/json", body: preAction, hdr: map[string]string{"X-API-Key": observerKey}, status: 403},
		{name: "oversized body", ct: "application/json", body: `{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("a", 2<<10) + `"}`, hdr: key, status: 413},
		{name: "wrong content type", ct: "text/plain", body: preAction, hdr: key, status: 415},
		{name: "wrong charset", ct: "application/json; charset=latin1", body: preAction, hdr: key, status: 415},
		{name: "no content type", body: preAction, hdr: key, status: 415},
		{name: "not JSON", ct: "application/json", body: `{"jsonrpc":"2.0","id":1,`, hdr: key, status: 200, check: wantRPCError(jsonrpc.CodeParseError)},
		{name: "empty body", ct: "application/json", body: ``, hdr: key, status: 200, check: wantRPCError(jsonrpc.CodeParseError)},
		{name: "not JSON-RPC", ct: "application/json", body: `{"hello":"world"}`, hdr: key, status: 200, check: wantRPCError(jsonrpc.CodeInvalidRequest)},
		{name: "JSON array", ct: "application/json", body: `[1,2]`, hdr: key, status: 200, check: wantRPCError(jsonrpc.CodeInvalidRequest)},
		{name: "event before handshake", ct: "application/json; charset=UTF-8", body: preAction, hdr: key, status: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := s.URL
			if tc.name == "key in the query of a POST" {
				url += "?api_key=" + agentKey
			}
			status, h, b := post(t, url, tc.ct, []byte(tc.body), tc.hdr)
			if status != tc.status {
				t.Fatalf("status %d, want %d (%s)", status, tc.status, b)
			}
			if tc.check != nil {
				tc.check(t, h, b)
			}
			if strings.Contains(string(b), agentKey) || strings.Contains(string(b), "guess") {
				t.Fatalf("body reveals a secret: %s", b)
			}
		})
	}
	// The only message that reached the harness is the authenticated,
	// well-formed event of the last case (the server answers it; no
	// handshake is needed over HTTP's stateless requests).
	if got := s.H.events.Load(); got != 1 {
		t.Fatalf("handler saw %d events, want 1", got)
	}
	if got := s.refusals(t, "http", auth.ReasonMissing); got != 2 {
		t.Errorf("missing refusals %v", got)
	}
	if got := s.refusals(t, "http", auth.ReasonInvalid); got != 2 {
		t.Errorf("invalid refusals %v", got)
	}
	if got := s.refusals(t, "http", auth.ReasonForbidden); got != 1 {
		t.Errorf("forbidden refusals %v", got)
	}
}

func wantRPCError(code int) func(t *testing.T, h http.Header, b []byte) {
	return func(t *testing.T, h http.Header, b []byte) {
		t.Helper()
		if h.Get("Content-Type") != "application/json" {
			t.Errorf("content type %q", h.Get("Content-Type"))
		}
		m, err := jsonrpc.Decode(b)
		if err != nil || m.Error == nil || m.Error.Code != code {
			t.Fatalf("body %s: want error %d", b, code)
		}
	}
}

// Each refusal test asserts that nothing reached the harness.
func TestRefusalsReachNothing(t *testing.T) {
	s := startServer(t, httpserver.Options{Authenticator: testStore(t), MaxBodyBytes: 1 << 10}, httpserver.ServerOptions{})
	check := func(name string, status int, wantStatus int) {
		t.Helper()
		if status != wantStatus {
			t.Errorf("%s: status %d, want %d", name, status, wantStatus)
		}
		if n := s.H.seen(); n != 0 {
			t.Fatalf("%s: the harness saw %d messages", name, n)
		}
	}
	st, _, _ := post(t, s.URL, "application/json", []byte(preAction), nil)
	check("missing key", st, 401)
	st, _, _ = post(t, s.URL, "application/json", []byte(preAction), map[string]string{"X-API-Key": "x"})
	check("wrong key", st, 401)
	st, _, _ = post(t, s.URL, "application/json", []byte(preAction), map[string]string{"X-API-Key": observerKey})
	check("wrong role", st, 403)
	big := `{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":{"pad":"` + strings.Repeat("p", 4<<10) + `"}}`
	st, _, _ = post(t, s.URL, "application/json", []byte(big), map[string]string{"X-API-Key": agentKey})
	check("oversized", st, 413)
	chunked, _ := http.NewRequest(http.MethodPost, s.URL, io.MultiReader(strings.NewReader(big)))
	chunked.Header.Set("Content-Type", "application/json")
	chunked.Header.Set("X-API-Key", agentKey)
	resp, err := http.DefaultClient.Do(chunked)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if chunked.ContentLength != 0 {
		t.Fatal("the request has a Content-Length: it is not chunked")
	}
	check("oversized chunked", resp.StatusCode, 413)
	st, _, _ = post(t, s.URL, "application/json", []byte("not json"), map[string]string{"X-API-Key": agentKey})
	check("non-JSON", st, 200)
	st, _, _ = post(t, s.URL, "text/plain", []byte(preAction), map[string]string{"X-API-Key": agentKey})
	check("content type", st, 415)

	req, _ := http.NewRequest(http.MethodGet, s.URL, nil)
	req.Header.Set("X-API-Key", agentKey)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	check("wrong method", resp.StatusCode, 405)
	if resp.Header.Get("Allow") != "POST" {
		t.Errorf("Allow %q", resp.Header.Get("Allow"))
	}
	// Unauthenticated wrong method: 401 first, nothing is revealed.
	req, _ = http.NewRequest(http.MethodPut, s.URL, strings.NewReader(preAction))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	check("unauthenticated PUT", resp.StatusCode, 401)

	// Through the client: a refused key is reported at once, not as a
	// timeout, and the harness still saw nothing.
	ctx := context.Background()
	c, err := client.Dial(ctx, s.URL, transport.DialOptions{APIKey: "wrong"}, client.Options{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.Handshake(ctx)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != httptransport.CodeTransportError || !strings.Contains(rpcErr.Message, "401") || !strings.Contains(string(rpcErr.Data), "401") {
		t.Fatalf("handshake with a wrong key: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("refusal took as long as a timeout")
	}
	if n := s.H.seen(); n != 0 {
		t.Fatalf("the harness saw %d messages", n)
	}
}

func TestTLSRefusals(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, httpserver.Options{Authenticator: testStore(t)}, httpserver.ServerOptions{TLS: p.serverTLS})
	other := authtest.NewCA(t, "someone else's CA")
	cases := map[string]*tls.Config{
		"expired client certificate": p.clientTLS(t, p.ca.Issue(t, authtest.LeafOptions{
			CommonName: "agent-7", Client: true,
			NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour),
		})),
		"unknown-CA client certificate": p.clientTLS(t, other.Client(t, "agent-7")),
		"no client certificate":         p.clientTLS(t, nil),
		"server-only certificate":       p.clientTLS(t, p.ca.Issue(t, authtest.LeafOptions{CommonName: "agent-7", Server: true})),
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			err := roundTrip(t, s.URL, transport.DialOptions{TLS: cfg})
			if err == nil {
				t.Fatal("accepted")
			}
			if time.Since(start) > 3*time.Second {
				t.Errorf("refusal reported after %v (%v): want at once, not after the timeout", time.Since(start), err)
			}
			if n := s.H.seen(); n != 0 {
				t.Fatalf("the harness saw %d messages", n)
			}
		})
	}
	// A certificate from the right CA whose subject maps to no principal
	// passes TLS and is refused by the credentials file.
	err := roundTrip(t, s.URL, transport.DialOptions{TLS: p.clientTLS(t, p.ca.Client(t, "stranger"))})
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("unknown subject: %v", err)
	}
	if n := s.H.seen(); n != 0 {
		t.Fatalf("the harness saw %d messages", n)
	}
	if got := s.refusals(t, "http", auth.ReasonUnknownCert); got != 1 {
		t.Errorf("unknown_certificate refusals %v", got)
	}
	eventually(t, "TLS refusals counted", func() bool { return s.refusals(t, "http", auth.ReasonTLS) >= float64(len(cases)) })
	// Plain HTTP to the TLS port is refused too.
	st, _, _ := post(t, strings.Replace(s.URL, "https", "http", 1), "application/json", []byte(preAction), nil)
	if st != 400 {
		t.Errorf("plain HTTP to TLS: %d", st)
	}
}

func TestSlowloris(t *testing.T) {
	s := startServer(t, httpserver.Options{Authenticator: auth.InsecureNoAuth{}}, httpserver.ServerOptions{ReadHeaderTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := "POST /ahp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Padding: " + strings.Repeat("x", 200) + "\r\n"
	start := time.Now()
	stopped := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < len(head); i++ {
			if _, err := c.Write([]byte{head[i]}); err != nil {
				return
			}
			select {
			case <-stopped:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	close(stopped)
	wg.Wait()
	elapsed := time.Since(start)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the slow connection open for %v", elapsed)
	}
	if elapsed > 2*time.Second {
		t.Fatalf("cut after %v, want about 300ms", elapsed)
	}
	if strings.HasPrefix(string(b), "HTTP/1.1 2") {
		t.Fatalf("slow request answered: %q", b)
	}
	if n := s.H.seen(); n != 0 {
		t.Fatalf("the harness saw %d messages", n)
	}
}

func TestBusy(t *testing.T) {
	s := startServer(t, httpserver.Options{Authenticator: auth.InsecureNoAuth{}, MaxInFlight: 1}, httpserver.ServerOptions{})
	s.H.block = make(chan struct{})
	first := make(chan int, 1)
	go func() {
		st, _, _ := post(t, s.URL, "application/json", []byte(preAction), nil)
		first <- st
	}()
	eventually(t, "first request in the handler", func() bool { return s.H.events.Load() == 1 })
	st, h, _ := post(t, s.URL, "application/json", []byte(preAction), nil)
	if st != 503 || h.Get("Retry-After") == "" {
		t.Fatalf("second request: %d", st)
	}
	close(s.H.block)
	if st := <-first; st != 200 {
		t.Fatalf("first request: %d", st)
	}
	if s.H.events.Load() != 1 {
		t.Fatalf("events %d", s.H.events.Load())
	}
}

func TestWebSocketHook(t *testing.T) {
	type seen struct{ principal, transport, query string }
	got := make(chan seen, 4)
	ws := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := server.PeerFromContext(r.Context())
		got <- seen{info.Principal.ID, info.Transport, r.URL.RawQuery}
		w.WriteHeader(http.StatusTeapot)
	})
	s := startServer(t, httpserver.Options{Authenticator: testStore(t), WebSocket: ws}, httpserver.ServerOptions{})
	get := func(url string, hdr map[string]string) int {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Connection", "keep-alive, Upgrade")
		req.Header.Set("Upgrade", "websocket")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := get(s.URL+"?api_key="+agentKey+"&v=1", nil); st != http.StatusTeapot {
		t.Fatalf("query key: %d", st)
	}
	if g := <-got; g.principal != "build-agent" || g.transport != "ws" || g.query != "v=1" {
		t.Fatalf("ws handler saw %+v", g)
	}
	if st := get(s.URL, map[string]string{"Authorization": "Bearer " + agentToken}); st != http.StatusTeapot {
		t.Fatalf("bearer header: %d", st)
	}
	<-got
	if st := get(s.URL, nil); st != 401 {
		t.Fatalf("no credentials: %d", st)
	}
	if st := get(s.URL+"?token="+observerKey, nil); st != 401 {
		t.Fatalf("observer key as token: %d", st)
	}
	if st := get(s.URL+"?api_key="+observerKey, nil); st != 403 {
		t.Fatalf("observer: %d", st)
	}
	if got := s.refusals(t, "ws", auth.ReasonMissing); got != 1 {
		t.Errorf("ws refusals %v", got)
	}
	// A GET that is not an upgrade is still a wrong method.
	req, _ := http.NewRequest(http.MethodGet, s.URL, nil)
	req.Header.Set("X-API-Key", agentKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, POST" {
		t.Fatalf("plain GET: %d %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

func TestConcurrentClient(t *testing.T) {
	s := startServer(t, httpserver.Options{Authenticator: testStore(t)}, httpserver.ServerOptions{})
	ctx := context.Background()
	c, err := client.Dial(ctx, s.URL, transport.DialOptions{APIKey: agentKey}, client.Options{Timeout: 10 * time.Second, FailMode: client.FailError})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	const workers, each = 32, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				d, err := c.Event(ctx, protocol.EventPreAction, map[string]any{"tool_name": "bash"})
				if err != nil || d.Kind != protocol.DecisionAllow {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := s.H.events.Load(); got != workers*each {
		t.Fatalf("events %d", got)
	}
}

func TestClientFailClosedWhenUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	ctx := context.Background()
	c, err := client.Dial(ctx, url, transport.DialOptions{}, client.Options{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	if _, err := c.Handshake(ctx); err == nil {
		t.Fatal("handshake with nobody succeeded")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("an unreachable harness took as long as a timeout")
	}
}

func TestClientDialChecks(t *testing.T) {
	ctx := context.Background()
	if _, err := transport.Dial(ctx, "http://203.0.113.7:80/ahp", transport.DialOptions{APIKey: "k"}); err == nil || !strings.Contains(err.Error(), "clear text") {
		t.Fatalf("credentials over plain http to a remote host: %v", err)
	}
	if _, err := transport.Dial(ctx, "http://user:pw@127.0.0.1:1/", transport.DialOptions{}); err == nil {
		t.Fatal("user info accepted")
	}
	c, err := transport.Dial(ctx, "https://127.0.0.1:1", transport.DialOptions{BearerToken: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Info().Transport != "https" || c.Info().Remote != "127.0.0.1:1" {
		t.Fatalf("info %+v", c.Info())
	}
	c.Close()
	if err := c.WriteMessage(ctx, []byte(`{}`)); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	var leaked sync.Map
	target := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store("hit", r.Header.Get("X-API-Key"))
	})
	ts := startPlain(t, target)
	redirect := startPlain(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, ts+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	c, err := transport.Dial(context.Background(), redirect+"/ahp", transport.DialOptions{APIKey: agentKey})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.WriteMessage(context.Background(), []byte(`{"jsonrpc":"2.0","method":"ahp/event","params":{}}`))
	var se *httptransport.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusTemporaryRedirect {
		t.Fatalf("redirected notification: %v", err)
	}
	if _, ok := leaked.Load("hit"); ok {
		t.Fatal("the redirect was followed")
	}
}

func TestClientResponseLimit(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("r", 2048) + `"}`
	ts := startPlain(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, big)
	}))
	c, err := transport.Dial(context.Background(), ts, transport.DialOptions{MaxMessageBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WriteMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	msg, err := c.ReadMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		ID    json.RawMessage `json:"id"`
		Error *jsonrpc.Error  `json:"error"`
	}
	if err := json.Unmarshal(msg, &resp); err != nil || string(resp.ID) != "1" || resp.Error == nil || !strings.Contains(resp.Error.Message, "limit") {
		t.Fatalf("oversized response became %s", msg)
	}
}

// startPlain serves h on 127.0.0.1 with net/http defaults.
func startPlain(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: time.Second}
	go func() { _ = hs.Serve(l) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + l.Addr().String()
}

// A web page cannot post events to an open loopback harness: the CORS
// preflight is never granted and the simple (text/plain) form is refused.
func TestNoCrossOriginPosts(t *testing.T) {
	s := startServer(t, httpserver.Options{Authenticator: auth.InsecureNoAuth{}}, httpserver.ServerOptions{})
	req, _ := http.NewRequest(http.MethodOptions, s.URL, nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight: %d %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	st, _, _ := post(t, s.URL, "text/plain;charset=UTF-8", []byte(preAction), map[string]string{"Origin": "https://evil.example"})
	if st != 415 || s.H.seen() != 0 {
		t.Fatalf("simple cross-origin POST: %d, harness saw %d", st, s.H.seen())
	}
}
