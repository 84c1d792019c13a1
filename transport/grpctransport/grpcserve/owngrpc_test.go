package grpcserve_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/grpctransport"
	"github.com/ahp-go/ahp/transport/grpctransport/grpcserve"
	ahpv1 "github.com/ahp-go/ahp/transport/grpctransport/proto/ahp/v1"
	"github.com/ahp-go/ahp/transport/internal/nettest"
)

// TestServiceOnOwnGRPCServer: the Service registered on a grpc.Server made
// elsewhere, without StreamTap, serves its streams with a reading goroutine
// of their own; a stream works, and Close ends it.
func TestServiceOnOwnGRPCServer(t *testing.T) {
	h := nettest.NewHandler()
	svc, err := grpcserve.NewService(server.New(h, server.Options{}), grpcserve.Options{Authenticator: auth.InsecureNoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.ForceServerCodecV2(grpctransport.Codec))
	ahpv1.RegisterHarnessServer(gs, svc)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := grpctransport.Dial(ctx, "grpc://"+ln.Addr().String(), transport.DialOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(conn)
	defer c.Close()
	for range 3 {
		if err := c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if svc.Streams() != 1 {
		t.Fatalf("%d streams served, want 1", svc.Streams())
	}
	svc.Close()
	nettest.Eventually(t, 5*time.Second, "the stream to end after Close", func() bool { return svc.Streams() == 0 })
	if err := c.Ping(ctx); err == nil {
		t.Fatal("a ping passed on a stream of a closed Service")
	}
}
