package wsserve_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/internal/nettest"
)

// BenchmarkUnixSocketReference runs the WebSocket benchmark's driver and
// harness over a Unix socket (newline-delimited JSON), as a reference
// measured on the same machine at the same time.
func BenchmarkUnixSocketReference(b *testing.B) {
	p := filepath.Join(b.TempDir(), "s")
	l, err := transport.ListenUnix(p, 0)
	if err != nil {
		b.Fatal(err)
	}
	srv := server.New(&harness.Baseline{}, server.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx, l); close(done) }()
	defer func() { cancel(); <-done }()
	c, err := transport.DialUnix(context.Background(), p, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	nettest.Pipelined(b, c, 64)
}
