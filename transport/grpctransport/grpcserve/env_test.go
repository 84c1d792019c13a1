package grpcserve_test

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/grpctransport/grpcserve"
	"github.com/ahp-go/ahp/transport/internal/nettest"
)

// env is a gRPC harness on a real 127.0.0.1 socket.
type env struct {
	addr string // grpc://127.0.0.1:PORT or grpcs://...
	host string // 127.0.0.1:PORT
	h    *nettest.Handler
	gs   *grpcserve.Server
	reg  *prometheus.Registry
	stop func()
}

// start serves a nettest.Handler; with cfg it serves TLS.
func start(t *testing.T, a auth.Authenticator, cfg *tls.Config, tweak func(*grpcserve.ServerOptions)) *env {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startOn(t, ln, a, cfg, tweak)
}

func startOn(t *testing.T, ln net.Listener, a auth.Authenticator, cfg *tls.Config, tweak func(*grpcserve.ServerOptions)) *env {
	t.Helper()
	e := &env{h: nettest.NewHandler(), reg: prometheus.NewRegistry(), host: ln.Addr().String()}
	o := grpcserve.ServerOptions{Options: grpcserve.Options{Authenticator: a, Registerer: e.reg}, TLS: cfg, ShutdownTimeout: time.Second}
	if tweak != nil {
		tweak(&o)
	}
	gs, err := grpcserve.NewServer(server.New(e.h, server.Options{}), o)
	if err != nil {
		t.Fatal(err)
	}
	e.gs = gs
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := gs.Serve(ctx, ln); err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	var once bool
	e.stop = func() {
		if !once {
			once = true
			cancel()
			<-done
		}
	}
	t.Cleanup(e.stop)
	e.addr = "grpc://" + e.host
	if cfg != nil {
		e.addr = "grpcs://" + e.host
	}
	return e
}

// dial returns a client connected through transport.Dial.
func dial(t *testing.T, addr string, o transport.DialOptions) (*client.Client, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	conn, err := transport.Dial(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	c := client.New(conn, client.Options{Timeout: 5 * time.Second, SessionID: "s1", AgentID: "a1", FailMode: client.FailError})
	t.Cleanup(func() { _ = c.Close() })
	return c, nil
}

func newClient(c transport.Conn) *client.Client {
	return client.New(c, client.Options{Timeout: 5 * time.Second, SessionID: "s1", AgentID: "a1", FailMode: client.FailError})
}
