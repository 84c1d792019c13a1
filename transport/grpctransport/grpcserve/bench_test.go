package grpcserve_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/grpctransport/grpcserve"
	"github.com/ahp-go/ahp/transport/internal/nettest"
)

// BenchmarkGRPCStreamPipelined measures decisions per second on one gRPC
// Stream over 127.0.0.1 with 64 requests in flight, the baseline harness
// deciding, without and with API key authentication.
//
//	go test -run XXX -bench GRPCStreamPipelined -benchtime 200000x ./transport/grpctransport/grpcserve/
func BenchmarkGRPCStreamPipelined(b *testing.B) {
	benchStream(b, 64)
}

// BenchmarkGRPCStreamSequential is the same with one request in flight:
// each decision's round trip, as an agent that waits for its answer sees it.
//
//	go test -run XXX -bench GRPCStreamSequential -benchtime 20000x ./transport/grpctransport/grpcserve/
func BenchmarkGRPCStreamSequential(b *testing.B) {
	benchStream(b, 1)
}

func benchStream(b *testing.B, inflight int) {
	for _, mode := range []string{"none", "apikey"} {
		b.Run(mode, func(b *testing.B) {
			var a auth.Authenticator = auth.InsecureNoAuth{}
			opts := transport.DialOptions{Timeout: 10 * time.Second}
			if mode == "apikey" {
				a = nettest.Store(b)
				opts.APIKey = nettest.APIKey
			}
			gs, err := grpcserve.NewServer(server.New(&harness.Baseline{}, server.Options{}), grpcserve.ServerOptions{Options: grpcserve.Options{Authenticator: a}})
			if err != nil {
				b.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { _ = gs.Serve(ctx, ln); close(done) }()
			defer func() { cancel(); <-done }()
			c, err := transport.Dial(context.Background(), "grpc://"+ln.Addr().String(), opts)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			nettest.Pipelined(b, c, inflight)
		})
	}
}
