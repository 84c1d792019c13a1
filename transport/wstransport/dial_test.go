package wstransport

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/transport"
)

// TestDialErrorsHideQuerySecrets checks that a failed dial does not quote
// credentials given in the URL query (the 2.4 client's form).
func TestDialErrorsHideQuerySecrets(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = Dial(ctx, "ws://"+addr+"/ahp?api_key=SECRET-123", transport.DialOptions{})
	if err == nil {
		t.Fatal("dial succeeded")
	}
	if strings.Contains(err.Error(), "SECRET-123") {
		t.Fatalf("error reveals the key: %v", err)
	}
}

func TestDialRejectsBadAddresses(t *testing.T) {
	for _, a := range []string{"http://127.0.0.1:1/ahp", "ws:///ahp", "ws://%zz"} {
		if _, err := Dial(context.Background(), a, transport.DialOptions{}); err == nil {
			t.Errorf("%q accepted", a)
		}
	}
}

// TestDialRefusalMessage: a refused upgrade with a JSON body (a harness at
// its connection limit) is reported with the body's message, bounded; one
// without is reported by its status alone.
func TestDialRefusalMessage(t *testing.T) {
	for _, tc := range []struct {
		body, want string
	}{
		{`{"error":"connection_limit","message":"the harness is at its connection limit (2 connections)","max_connections":2}`, "503 Service Unavailable: the harness is at its connection limit (2 connections)"},
		{`{"message":"` + strings.Repeat("m", 900) + `"}`, "503 Service Unavailable: " + strings.Repeat("m", maxRefusalBytes) + "…"},
		{"plain text", "refused the WebSocket upgrade: 503 Service Unavailable"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, tc.body)
		}))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ahp", transport.DialOptions{})
		cancel()
		srv.Close()
		var he *HandshakeError
		if !errors.As(err, &he) || he.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("dial: %v", err)
		}
		if !strings.HasSuffix(err.Error(), tc.want) {
			t.Fatalf("error %q does not end with %q", err, tc.want)
		}
	}
}
