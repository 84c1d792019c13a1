package wsserve_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/httpserver"
	"github.com/ahp-go/ahp/transport/internal/nettest"
	"github.com/ahp-go/ahp/transport/wstransport"
	"github.com/ahp-go/ahp/transport/wstransport/wsserve"
)

// TestBehindHTTPServerHook mounts the Handler as the WebSocket hook of the
// HTTP endpoint, which authenticates upgrades itself: the principal it
// found must reach the harness, and refusals must not reach it.
func TestBehindHTTPServerHook(t *testing.T) {
	h := nettest.NewHandler()
	srv := server.New(h, server.Options{})
	ws := wsserve.NewHandler(srv, wsserve.Options{}) // no Authenticator: trusts the hook
	reg := prometheus.NewRegistry()
	ep, err := httpserver.New(srv, httpserver.Options{Authenticator: nettest.Store(t), WebSocket: ws, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ahp", ep)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { _ = ws.Close() })
	url := strings.Replace(ts.URL, "http", "ws", 1) + "/ahp"

	_, err = dial(t, url, nopts())
	var he *wstransport.HandshakeError
	if !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized {
		t.Fatalf("dial without credentials: %v, want 401", err)
	}
	if h.Calls() != 0 {
		t.Fatal("a refused upgrade reached the handler")
	}
	for _, tc := range []struct {
		query, principal string
		opts             transport.DialOptions
	}{
		{opts: transport.DialOptions{APIKey: nettest.APIKey}, principal: nettest.KeyAgent},
		{query: "?token=" + nettest.Bearer, principal: nettest.BearerAgent},
	} {
		c, err := dial(t, url+tc.query, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		nettest.RoundTrip(t, c)
		if got := h.Principal(); got != tc.principal {
			t.Fatalf("principal %q, want %q", got, tc.principal)
		}
	}
}
