package wsserve_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/internal/nettest"
	"github.com/ahp-go/ahp/transport/wstransport/wsserve"
)

// env is a WebSocket harness on a real 127.0.0.1 socket.
type env struct {
	url  string // ws://127.0.0.1:PORT/ahp or wss://...
	h    *nettest.Handler
	srv  *server.Server
	ws   *wsserve.Handler
	reg  *prometheus.Registry
	ts   *httptest.Server
	opts wsserve.Options
}

// start serves a nettest.Handler at /ahp; with cfg it serves TLS.
func start(t *testing.T, opts wsserve.Options, cfg *tls.Config, sopts server.Options) *env {
	t.Helper()
	e := &env{h: nettest.NewHandler(), reg: prometheus.NewRegistry()}
	e.srv = server.New(e.h, sopts)
	if opts.Registerer == nil {
		opts.Registerer = e.reg
	}
	e.opts = opts
	e.ws = wsserve.NewHandler(e.srv, opts)
	mux := http.NewServeMux()
	mux.Handle("/ahp", e.ws)
	e.ts = httptest.NewUnstartedServer(mux)
	if cfg != nil {
		e.ts.TLS = cfg
		e.ts.StartTLS()
	} else {
		e.ts.Start()
	}
	t.Cleanup(e.ts.Close)
	t.Cleanup(func() { _ = e.ws.Close() })
	e.url = strings.Replace(e.ts.URL, "http", "ws", 1) + "/ahp"
	return e
}

func serverOpts() server.Options { return server.Options{} }

func nopts() transport.DialOptions { return transport.DialOptions{} }

// dial returns a client connected through transport.Dial.
func dial(t *testing.T, url string, o transport.DialOptions) (*client.Client, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	conn, err := transport.Dial(ctx, url, o)
	if err != nil {
		return nil, err
	}
	c := client.New(conn, client.Options{Timeout: 5 * time.Second, SessionID: "s1", AgentID: "a1", FailMode: client.FailError})
	t.Cleanup(func() { _ = c.Close() })
	return c, nil
}
