package grpcserve_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/connlimit"
	"github.com/ahp-go/ahp/transport/grpctransport"
	"github.com/ahp-go/ahp/transport/grpctransport/grpcserve"
)

// pingOver checks that a stream is still served.
func pingOver(t *testing.T, c transport.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.WriteMessage(ctx, []byte(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReadMessage(ctx)
	if err != nil || !strings.Contains(string(got), `"id":"p"`) {
		t.Fatalf("ping: %q %v", got, err)
	}
}

// TestConnectionLimitResourceExhausted: past the limit, the calls of a
// new agent's connection fail at once with RESOURCE_EXHAUSTED naming the
// limit; the connected agents' streams go on.
func TestConnectionLimitResourceExhausted(t *testing.T) {
	lim, err := connlimit.New(2, connlimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := start(t, auth.InsecureNoAuth{}, nil, func(o *grpcserve.ServerOptions) { o.Limiter = lim })
	var streams []transport.Conn
	for range 2 {
		cc, err := grpctransport.NewClientConn(e.addr, transport.DialOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := cc.OpenStream(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		streams = append(streams, s)
		pingOver(t, s)
	}

	cc, err := grpctransport.NewClientConn(e.addr, transport.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = cc.OpenStream(ctx)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "connection limit (2 connections)") {
		t.Fatalf("agent past the limit: %v", err)
	}
	if d := time.Since(began); d > time.Second {
		t.Fatalf("refusal took %v", d)
	}
	for _, s := range streams {
		pingOver(t, s)
	}
}
