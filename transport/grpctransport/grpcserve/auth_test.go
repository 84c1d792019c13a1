package grpcserve_test

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/grpctransport"
	"github.com/ahp-go/ahp/transport/grpctransport/grpcserve"
	"github.com/ahp-go/ahp/transport/internal/nettest"
)

// TestCredentialForms runs handshake and decisions over each accepted
// form of credentials and checks who the harness saw.
func TestCredentialForms(t *testing.T) {
	p := nettest.NewPKI(t)
	cases := []struct {
		name      string
		insecure  bool
		tls       bool
		opts      transport.DialOptions
		principal string
	}{
		{name: "none (insecure)", insecure: true, principal: auth.Anonymous.ID},
		{name: "api key", opts: transport.DialOptions{APIKey: nettest.APIKey}, principal: nettest.KeyAgent},
		{name: "bearer", opts: transport.DialOptions{BearerToken: nettest.Bearer}, principal: nettest.BearerAgent},
		{name: "mTLS", tls: true, opts: transport.DialOptions{TLS: p.ClientTLS(&p.Client)}, principal: nettest.CertAgent},
		{name: "api key over TLS", tls: true, opts: transport.DialOptions{APIKey: nettest.APIKey, TLS: p.ClientTLS(nil)}, principal: nettest.KeyAgent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var a auth.Authenticator = nettest.Store(t)
			if tc.insecure {
				a = auth.InsecureNoAuth{}
			}
			var cfg *tls.Config
			if tc.tls {
				cfg = p.ServerTLS(tls.VerifyClientCertIfGiven)
			}
			e := start(t, a, cfg, nil)
			c, err := dial(t, e.addr, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			nettest.RoundTrip(t, c)
			if got := e.h.Principal(); got != tc.principal {
				t.Fatalf("principal %q, want %q", got, tc.principal)
			}
			if got := e.h.Events.Load(); got != 2 {
				t.Fatalf("%d events reached the handler, want 2", got)
			}
		})
	}
}

// TestRefusedCredentials checks that bad credentials get Unauthenticated
// or PermissionDenied before any JSON-RPC processing, and are counted.
func TestRefusedCredentials(t *testing.T) {
	cases := []struct {
		name   string
		opts   transport.DialOptions
		reason string
	}{
		{name: "missing", reason: auth.ReasonMissing},
		{name: "wrong api key", opts: transport.DialOptions{APIKey: "wrong-key-0123456789abcdef"}, reason: auth.ReasonInvalid},
		{name: "wrong bearer", opts: transport.DialOptions{BearerToken: "wrong-token-0123456789abcdef"}, reason: auth.ReasonInvalid},
		{name: "role missing", opts: transport.DialOptions{APIKey: nettest.ObserverKey}, reason: auth.ReasonForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, nettest.Store(t), nil, nil)
			_, err := dial(t, e.addr, tc.opts)
			if !grpctransport.IsRefused(err) {
				t.Fatalf("dial: %v, want a refusal", err)
			}
			// The unary path is refused the same way.
			cc, err := grpctransport.NewClientConn(e.addr, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			u := cc.Unary()
			defer u.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := u.WriteMessage(ctx, []byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)); err != nil {
				t.Fatal(err)
			}
			resp, err := u.ReadMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := `"code":-32001`; !strings.Contains(string(resp), want) || !strings.Contains(string(resp), `"id":7`) {
				t.Fatalf("unary refusal answered %s", resp)
			}
			if n := e.h.Calls(); n != 0 {
				t.Fatalf("%d calls reached the handler, want 0", n)
			}
			if n := nettest.Refusals(t, e.reg, "grpc", tc.reason); n != 2 {
				t.Fatalf("ahp_auth_refusals_total{transport=grpc,reason=%s} = %v, want 2", tc.reason, n)
			}
		})
	}
}

// TestExpiredClientCertificate checks that an expired certificate fails
// the TLS handshake: nothing reaches the harness, the refusal is counted.
func TestExpiredClientCertificate(t *testing.T) {
	p := nettest.NewPKI(t)
	e := start(t, nettest.Store(t), p.ServerTLS(tls.RequireAndVerifyClientCert), nil)
	_, err := dial(t, e.addr, transport.DialOptions{TLS: p.ClientTLS(&p.Expired)})
	if err == nil {
		t.Fatal("dial with an expired certificate succeeded")
	}
	if n := e.h.Calls(); n != 0 {
		t.Fatalf("%d calls reached the handler, want 0", n)
	}
	nettest.Eventually(t, 5*time.Second, "the TLS refusal to be counted", func() bool {
		return nettest.Refusals(t, e.reg, "grpc", auth.ReasonTLS) >= 1
	})
	c, err := dial(t, e.addr, transport.DialOptions{TLS: p.ClientTLS(&p.Client)})
	if err != nil {
		t.Fatal(err)
	}
	nettest.RoundTrip(t, c)
}

// TestHealthWithoutCredentials checks the standard health service, which
// answers without credentials, and that it turns NOT_SERVING on shutdown.
func TestHealthWithoutCredentials(t *testing.T) {
	e := start(t, nettest.Store(t), nil, nil)
	cc, err := grpc.NewClient(e.host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, svc := range []string{"", grpcserve.ServiceName} {
		r, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health %q: %v %v", svc, r, err)
		}
	}
	e.gs.Health.Shutdown()
	r, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{Service: grpcserve.ServiceName})
	if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health after shutdown: %v %v", r, err)
	}
}

// TestCleartextSecretsRefused checks that the dialer does not send
// credentials without TLS to a host that is not loopback.
func TestCleartextSecretsRefused(t *testing.T) {
	if _, err := grpctransport.NewClientConn("grpc://harness.example:443", transport.DialOptions{BearerToken: "t"}); err == nil {
		t.Fatal("credentials would have been sent in clear text")
	}
}
