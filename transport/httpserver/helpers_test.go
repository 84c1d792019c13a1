package httpserver_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/auth/authtest"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/httpserver"
	_ "github.com/ahp-go/ahp/transport/httptransport"
)

// countingHandler counts everything that reaches the harness.
type countingHandler struct {
	server.BaseHandler
	handshakes, events, notes atomic.Int64
	mu                        sync.Mutex
	principals                []string
	block                     chan struct{} // when set, HandleEvent waits on it
}

func (h *countingHandler) HandleHandshake(ctx context.Context, _ *protocol.HandshakeRequest, _ *protocol.HandshakeResponse) error {
	h.handshakes.Add(1)
	return nil
}

func (h *countingHandler) HandleEvent(ctx context.Context, ev *protocol.Event) (protocol.Decision, error) {
	h.events.Add(1)
	p := server.PeerFromContext(ctx).Principal
	h.mu.Lock()
	if p != nil {
		h.principals = append(h.principals, p.ID)
	} else {
		h.principals = append(h.principals, "<nil>")
	}
	h.mu.Unlock()
	if h.block != nil {
		select {
		case <-h.block:
		case <-ctx.Done():
		}
	}
	return protocol.Allow(), nil
}

func (h *countingHandler) HandleNotification(context.Context, *protocol.Event) { h.notes.Add(1) }

// seen is the number of messages that reached the harness.
func (h *countingHandler) seen() int64 { return h.handshakes.Load() + h.events.Load() + h.notes.Load() }

func (h *countingHandler) lastPrincipal() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.principals) == 0 {
		return ""
	}
	return h.principals[len(h.principals)-1]
}

type testServer struct {
	URL     string
	Addr    string
	H       *countingHandler
	Reg     *prometheus.Registry
	Handler *httpserver.Handler
}

// startServer serves a counting harness on 127.0.0.1 until the test ends.
func startServer(t *testing.T, ho httpserver.Options, so httpserver.ServerOptions) *testServer {
	t.Helper()
	h := &countingHandler{}
	srv := server.New(h, server.Options{})
	reg := prometheus.NewRegistry()
	ho.Registerer = reg
	handler, err := httpserver.New(srv, ho)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ahp", handler)
	so.Guard = handler.Guard()
	hs := httpserver.NewServer(mux, so)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	scheme := "http"
	if so.TLS != nil {
		scheme = "https"
	}
	return &testServer{URL: scheme + "://" + l.Addr().String() + "/ahp", Addr: l.Addr().String(), H: h, Reg: reg, Handler: handler}
}

// refusals reads ahp_auth_refusals_total{transport,reason}.
func (s *testServer) refusals(t *testing.T, transportName, reason string) float64 {
	t.Helper()
	return authtest.Refusals(t, s.Reg, transportName, reason)
}

// eventually polls cond for up to 3 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// roundTrip dials, handshakes, sends a pre_action and a post_action
// notification, and pings.
func roundTrip(t *testing.T, url string, o transport.DialOptions) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, url, o, client.Options{Timeout: 5 * time.Second, FailMode: client.FailError, SessionID: "s", AgentID: "a"})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Handshake(ctx); err != nil {
		return err
	}
	d, err := c.Event(ctx, protocol.EventPreAction, map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": "ls"}})
	if err != nil {
		return err
	}
	if d.Kind != protocol.DecisionAllow {
		return errors.New("decision " + string(d.Kind))
	}
	if err := c.Notify(ctx, protocol.EventPostAction, map[string]any{"tool_name": "bash"}); err != nil {
		return err
	}
	return c.Ping(ctx)
}

// credentials used by the tests.
const (
	agentKey    = "agent-key-0123456789abcdef"
	agentToken  = "agent-token-0123456789abcdef"
	observerKey = "observer-key-0123456789abcdef"
)

func testStore(t testing.TB) *auth.Store {
	t.Helper()
	st, err := auth.Parse([]byte(`version: 1
principals:
  - id: build-agent
    roles: [agent]
    api_keys: ["` + auth.HashSecret(agentKey) + `"]
    bearer_tokens: ["` + auth.HashSecret(agentToken) + `"]
  - id: dashboard
    roles: [observer, approver]
    api_keys: ["` + auth.HashSecret(observerKey) + `"]
  - id: cert-agent
    roles: [agent]
mtls:
  - common_name: agent-7
    principal: cert-agent
`))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// serveForBench serves h until the benchmark ends and returns its URL.
func serveForBench(b *testing.B, h server.Handler, ho httpserver.Options) string {
	b.Helper()
	handler, err := httpserver.New(server.New(h, server.Options{}), ho)
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ahp", handler)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = httpserver.NewServer(mux, httpserver.ServerOptions{}).Serve(ctx, l)
	}()
	b.Cleanup(func() { cancel(); <-done })
	return "http://" + l.Addr().String() + "/ahp"
}

// TestMain fails the package when goroutines outlive the tests.
func TestMain(m *testing.M) {
	before := runtime.NumGoroutine()
	code := m.Run()
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); code == 0 && n > before {
		buf := make([]byte, 1<<20)
		fmt.Fprintf(os.Stderr, "%d goroutines leaked:\n%s", n-before, buf[:runtime.Stack(buf, true)])
		code = 1
	}
	os.Exit(code)
}
