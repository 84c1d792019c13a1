package grpcserve_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/internal/nettest"
	"github.com/ahp-go/ahp/transport/reconnect"
)

// TestReconnectAfterServerDies stops the server abruptly while a request
// is in flight: the request fails at once, and the next call reaches a
// new server on the same address, with the handshake replayed.
func TestReconnectAfterServerDies(t *testing.T) {
	a := start(t, nettest.Store(t), nil, nil)
	conn, err := transport.Dial(context.Background(), a.addr, transport.DialOptions{APIKey: nettest.APIKey, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rc := conn.(*reconnect.Conn)
	c := client.New(conn, client.Options{Timeout: 30 * time.Second, FailMode: client.FailError})
	defer c.Close()
	nettest.RoundTrip(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	pending := make(chan error, 1)
	go func() {
		_, err := c.Event(ctx, protocol.EventPreAction, nettest.Wait)
		pending <- err
	}()
	<-a.h.Waiting
	began := time.Now()
	a.gs.GRPC.Stop() // connections cut, no goodbye
	close(a.h.Release)
	a.stop()
	err = <-pending
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != reconnect.CodeTransportError {
		t.Fatalf("pending call: %v, want a transport error", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("pending call failed after %v; it should fail at once", d)
	}

	var ln net.Listener
	for i := 0; i < 50 && ln == nil; i++ {
		if ln, err = net.Listen("tcp", a.host); err != nil {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if ln == nil {
		t.Fatal(err)
	}
	b := startOn(t, ln, nettest.Store(t), nil, nil)
	d, err := c.Event(ctx, protocol.EventPreAction, nettest.RmRoot)
	if err != nil || d.Kind != protocol.DecisionBlock {
		t.Fatalf("call after restart: %v %v", d, err)
	}
	if got := b.h.Handshakes.Load(); got != 1 {
		t.Fatalf("new server saw %d handshakes, want the replayed one", got)
	}
	if b.h.Principal() != nettest.KeyAgent {
		t.Fatalf("principal %q after reconnect", b.h.Principal())
	}
	if got := rc.Reconnects(); got != 1 {
		t.Fatalf("%d reconnections, want 1", got)
	}
}

// TestManyInFlight sends requests that the handler holds until all have
// arrived: they can only complete if they share the stream concurrently.
func TestManyInFlight(t *testing.T) {
	e := start(t, auth.InsecureNoAuth{}, nil, nil)
	c, err := dial(t, e.addr, transport.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 32
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := c.Event(ctx, protocol.EventPreAction, nettest.Wait)
			errs <- err
		}()
	}
	for range n {
		select {
		case <-e.h.Waiting:
		case <-ctx.Done():
			t.Fatal("requests were not handled concurrently")
		}
	}
	close(e.h.Release)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
