package wsserve_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/internal/nettest"
	"github.com/ahp-go/ahp/transport/wstransport/wsserve"
)

// BenchmarkWebSocketPipelined measures decisions per second on one
// WebSocket connection over 127.0.0.1 with 64 requests in flight, the
// baseline harness deciding, without and with API key authentication.
//
//	go test -run XXX -bench WebSocketPipelined -benchtime 200000x ./transport/wstransport/wsserve/
func BenchmarkWebSocketPipelined(b *testing.B) {
	for _, mode := range []string{"none", "apikey"} {
		b.Run(mode, func(b *testing.B) {
			var a auth.Authenticator = auth.InsecureNoAuth{}
			opts := transport.DialOptions{Timeout: 10 * time.Second}
			if mode == "apikey" {
				a = nettest.Store(b)
				opts.APIKey = nettest.APIKey
			}
			srv := server.New(&harness.Baseline{}, server.Options{})
			h := wsserve.NewHandler(srv, wsserve.Options{Authenticator: a})
			mux := http.NewServeMux()
			mux.Handle("/ahp", h)
			ts := httptest.NewServer(mux)
			defer ts.Close()
			defer h.Close()
			c, err := transport.Dial(context.Background(), strings.Replace(ts.URL, "http", "ws", 1)+"/ahp", opts)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			nettest.Pipelined(b, c, 64)
		})
	}
}
