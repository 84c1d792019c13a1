package wsserve_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/internal/nettest"
	"github.com/ahp-go/ahp/transport/reconnect"
	"github.com/ahp-go/ahp/transport/wstransport/wsserve"
)

// killable is a WebSocket harness on a fixed address whose TCP
// connections can be cut without a close frame, as when the process dies.
type killable struct {
	h    *nettest.Handler
	ws   *wsserve.Handler
	hs   *http.Server
	addr string

	mu    sync.Mutex
	conns []net.Conn
}

func serveAt(t *testing.T, addr string, a auth.Authenticator) *killable {
	t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the old listener's port may take a moment to free
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	k := &killable{h: nettest.NewHandler(), addr: ln.Addr().String()}
	k.ws = wsserve.NewHandler(server.New(k.h, server.Options{}), wsserve.Options{Authenticator: a})
	k.hs = &http.Server{Handler: k.ws, ConnState: func(c net.Conn, s http.ConnState) {
		if s == http.StateHijacked {
			k.mu.Lock()
			k.conns = append(k.conns, c)
			k.mu.Unlock()
		}
	}}
	go func() { _ = k.hs.Serve(ln) }()
	t.Cleanup(k.kill)
	return k
}

// kill closes the listener and cuts every connection.
func (k *killable) kill() {
	_ = k.hs.Close()
	k.mu.Lock()
	for _, c := range k.conns {
		_ = c.Close()
	}
	k.conns = nil
	k.mu.Unlock()
	_ = k.ws.Close()
}

// TestReconnectAfterServerDies cuts the server while a request is in
// flight: the request fails at once (not after the client timeout), and
// the next call reaches a new server on the same address through a new
// connection on which the handshake was replayed.
func TestReconnectAfterServerDies(t *testing.T) {
	a := serveAt(t, "127.0.0.1:0", auth.InsecureNoAuth{})
	addr := a.addr
	conn, err := transport.Dial(context.Background(), "ws://"+addr+"/ahp", transport.DialOptions{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rc := conn.(*reconnect.Conn)
	c := client.New(conn, client.Options{Timeout: 30 * time.Second, FailMode: client.FailError})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nettest.RoundTrip(t, c)

	pending := make(chan error, 1)
	go func() {
		_, err := c.Event(ctx, protocol.EventPreAction, nettest.Wait)
		pending <- err
	}()
	<-a.h.Waiting
	began := time.Now()
	a.kill()
	err = <-pending
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != reconnect.CodeTransportError {
		t.Fatalf("pending call: %v, want a transport error", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("pending call failed after %v; it should fail at once", d)
	}

	time.Sleep(300 * time.Millisecond) // a few failed attempts while nobody listens
	b := serveAt(t, addr, auth.InsecureNoAuth{})
	d, err := c.Event(ctx, protocol.EventPreAction, nettest.RmRoot)
	if err != nil {
		t.Fatalf("call after restart: %v", err)
	}
	if d.Kind != protocol.DecisionBlock {
		t.Fatalf("got %s, want block", d.Kind)
	}
	if got := b.h.Handshakes.Load(); got != 1 {
		t.Fatalf("new server saw %d handshakes, want the replayed one", got)
	}
	if got := rc.Reconnects(); got != 1 {
		t.Fatalf("%d reconnections, want 1", got)
	}
}

// TestReconnectGivesUpOnRefusal checks that a server that refuses the
// credentials after a restart ends the retries: calls fail with the
// refusal instead of waiting.
func TestReconnectGivesUpOnRefusal(t *testing.T) {
	a := serveAt(t, "127.0.0.1:0", nettest.Store(t))
	addr := a.addr
	c, err := client.Dial(context.Background(), "ws://"+addr, transport.DialOptions{APIKey: nettest.APIKey, Timeout: 5 * time.Second}, client.Options{Timeout: 5 * time.Second, FailMode: client.FailError})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nettest.RoundTrip(t, c)
	a.kill()
	serveAt(t, addr, auth.AuthenticatorFunc(func(context.Context, auth.Credentials) (*transport.Principal, error) {
		return nil, auth.ErrUnauthenticated
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var last error
	nettest.Eventually(t, 8*time.Second, "reconnection to give up", func() bool {
		_, last = c.Event(ctx, protocol.EventPreAction, nettest.Ls)
		return last != nil && strings.Contains(last.Error(), "giving up")
	})
	if !strings.Contains(last.Error(), "401") {
		t.Fatalf("error %q does not name the refusal", last)
	}
}
