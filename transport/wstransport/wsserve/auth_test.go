package wsserve_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/internal/nettest"
	"github.com/ahp-go/ahp/transport/wstransport"
	"github.com/ahp-go/ahp/transport/wstransport/wsserve"
)

// TestCredentialForms runs handshake and decisions over every accepted
// form of credentials and checks who the harness saw.
func TestCredentialForms(t *testing.T) {
	p := nettest.NewPKI(t)
	cases := []struct {
		name      string
		insecure  bool
		tls       bool
		query     string
		opts      transport.DialOptions
		principal string
	}{
		{name: "none (insecure)", insecure: true, principal: auth.Anonymous.ID},
		{name: "api key header", opts: transport.DialOptions{APIKey: nettest.APIKey}, principal: nettest.KeyAgent},
		{name: "bearer header", opts: transport.DialOptions{BearerToken: nettest.Bearer}, principal: nettest.BearerAgent},
		{name: "query api_key", query: "?api_key=" + nettest.APIKey, principal: nettest.KeyAgent},
		{name: "query token", query: "?token=" + nettest.Bearer, principal: nettest.BearerAgent},
		{name: "mTLS (wss)", tls: true, opts: transport.DialOptions{TLS: p.ClientTLS(&p.Client)}, principal: nettest.CertAgent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var a auth.Authenticator = nettest.Store(t)
			if tc.insecure {
				a = auth.InsecureNoAuth{}
			}
			var cfg *tls.Config
			if tc.tls {
				cfg = p.ServerTLS(tls.RequireAndVerifyClientCert)
			}
			e := start(t, wsserve.Options{Authenticator: a}, cfg, serverOpts())
			c, err := dial(t, e.url+tc.query, tc.opts)
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

// TestRefusedUpgrades checks that bad credentials are refused with 401 or
// 403 before any JSON-RPC processing, and counted.
func TestRefusedUpgrades(t *testing.T) {
	cases := []struct {
		name   string
		query  string
		opts   transport.DialOptions
		status int
		reason string
	}{
		{name: "missing", status: 401, reason: auth.ReasonMissing},
		{name: "wrong api key", opts: transport.DialOptions{APIKey: "wrong-key-0123456789abcdef"}, status: 401, reason: auth.ReasonInvalid},
		{name: "wrong bearer", opts: transport.DialOptions{BearerToken: "wrong-token-0123456789abcdef"}, status: 401, reason: auth.ReasonInvalid},
		{name: "wrong query token", query: "?token=nope", status: 401, reason: auth.ReasonInvalid},
		{name: "role missing", opts: transport.DialOptions{APIKey: nettest.ObserverKey}, status: 403, reason: auth.ReasonForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, wsserve.Options{Authenticator: nettest.Store(t)}, nil, serverOpts())
			_, err := dial(t, e.url+tc.query, tc.opts)
			var he *wstransport.HandshakeError
			if !errors.As(err, &he) || he.StatusCode != tc.status {
				t.Fatalf("dial: %v, want a refusal with status %d", err, tc.status)
			}
			if n := e.h.Calls(); n != 0 {
				t.Fatalf("%d calls reached the handler, want 0", n)
			}
			if n := nettest.Refusals(t, e.reg, "ws", tc.reason); n != 1 {
				t.Fatalf("ahp_auth_refusals_total{transport=ws,reason=%s} = %v, want 1", tc.reason, n)
			}
		})
	}
}

// TestExpiredClientCertificate checks that an expired certificate fails
// the TLS handshake, so nothing reaches the harness.
func TestExpiredClientCertificate(t *testing.T) {
	p := nettest.NewPKI(t)
	e := start(t, wsserve.Options{Authenticator: nettest.Store(t)}, p.ServerTLS(tls.RequireAndVerifyClientCert), serverOpts())
	_, err := dial(t, e.url, transport.DialOptions{TLS: p.ClientTLS(&p.Expired)})
	if err == nil {
		t.Fatal("dial with an expired certificate succeeded")
	}
	if n := e.h.Calls(); n != 0 {
		t.Fatalf("%d calls reached the handler, want 0", n)
	}
	// And a valid certificate still gets in.
	c, err := dial(t, e.url, transport.DialOptions{TLS: p.ClientTLS(&p.Client)})
	if err != nil {
		t.Fatal(err)
	}
	nettest.RoundTrip(t, c)
}

// TestUnknownCertificate checks that a valid certificate that maps to no
// principal is refused at the upgrade.
func TestUnknownCertificate(t *testing.T) {
	p := nettest.NewPKI(t)
	stranger := p.CA.Client(t, "stranger").TLSCertificate(t)
	e := start(t, wsserve.Options{Authenticator: nettest.Store(t)}, p.ServerTLS(tls.VerifyClientCertIfGiven), serverOpts())
	_, err := dial(t, e.url, transport.DialOptions{TLS: p.ClientTLS(&stranger)})
	var he *wstransport.HandshakeError
	if !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized {
		t.Fatalf("dial: %v, want 401", err)
	}
	if n := e.h.Calls(); n != 0 {
		t.Fatalf("%d calls reached the handler, want 0", n)
	}
	if n := nettest.Refusals(t, e.reg, "ws", auth.ReasonUnknownCert); n != 1 {
		t.Fatalf("refusals = %v, want 1", n)
	}
}

// TestNotAnUpgrade checks the answer to a plain GET.
func TestNotAnUpgrade(t *testing.T) {
	e := start(t, wsserve.Options{Authenticator: auth.InsecureNoAuth{}}, nil, serverOpts())
	resp, err := http.Get(e.ts.URL + "/ahp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired {
		t.Fatalf("status %d, want 426", resp.StatusCode)
	}
}

// TestNoAuthenticatorFailsClosed checks that a Handler without an
// Authenticator refuses requests that were not authenticated upstream.
func TestNoAuthenticatorFailsClosed(t *testing.T) {
	e := start(t, wsserve.Options{}, nil, serverOpts())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, e.url, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("dial: %v (%v), want 401", err, resp)
	}
	if n := e.h.Calls(); n != 0 {
		t.Fatalf("%d calls reached the handler, want 0", n)
	}
}

// TestCleartextSecretsRefused checks that the dialer does not send
// credentials over ws:// to a host that is not loopback.
func TestCleartextSecretsRefused(t *testing.T) {
	_, err := wstransport.Dial(context.Background(), "ws://harness.example:8080/ahp", transport.DialOptions{APIKey: "k"})
	if err == nil {
		t.Fatal("credentials would have been sent in clear text")
	}
}
