package conformance_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/conformance"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/transport"
	_ "github.com/ahp-go/ahp/transport/grpctransport" // grpc:// addresses
	_ "github.com/ahp-go/ahp/transport/httptransport" // http:// addresses
	_ "github.com/ahp-go/ahp/transport/wstransport"   // ws:// addresses
)

// startService runs the product harness with a listener of every network
// scheme on loopback and returns the bound address of each.
func startService(t *testing.T) (*service.Service, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	c := config.Default()
	c.Harness.MaxMessageBytes = 1 << 20
	c.Policy.Files = []string{filepath.Join("testdata", "policy.yaml")}
	c.Listen = []string{"unix:" + filepath.Join(dir, "h.sock"), "http://127.0.0.1:0", "ws://127.0.0.1:0", "grpc://127.0.0.1:0"}
	return runService(t, c, dir)
}

// runService runs the harness of configuration c with its data directory
// under dir and no admin listener, and returns the bound address of each
// listener by scheme.
func runService(t *testing.T, c config.Config, dir string) (*service.Service, map[string]string) {
	t.Helper()
	c.DataDir = filepath.Join(dir, "data")
	c.Admin = ""
	var mu sync.Mutex
	addrs := map[string]string{}
	ready := make(chan struct{})
	var logs bytes.Buffer
	svc, err := service.New(c, service.Options{
		Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs}, nil)),
		Ready: func(l service.Listening) {
			mu.Lock()
			defer mu.Unlock()
			scheme, _, _ := strings.Cut(l.Listen, ":")
			addrs[scheme] = l.Addr
			if len(addrs) == len(c.Listen) {
				close(ready)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- svc.Run(context.Background()) }()
	t.Cleanup(func() { _ = svc.Close() })
	select {
	case <-ready:
	case err := <-runErr:
		t.Fatalf("Run: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("listeners not ready")
	}
	return svc, addrs
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func dialer(addr string) func(context.Context) (transport.Conn, error) {
	return func(ctx context.Context) (transport.Conn, error) {
		return transport.Dial(ctx, addr, transport.DialOptions{})
	}
}

// TestDefaultServerPasses runs the suite against the harness in its
// default configuration (default packs, no policy file, default limits),
// as "ahp serve" runs it, over a Unix socket: every check passes, the
// typed confirmation included (a user_confirm is answered escalate at
// once instead of waiting for an approver). The slow-tool check is
// skipped: it needs a rule that holds a tool.
func TestDefaultServerPasses(t *testing.T) {
	dir := t.TempDir()
	c := config.Default()
	c.Listen = []string{"unix:" + filepath.Join(dir, "h.sock")}
	_, addrs := runService(t, c, dir)
	rep, err := conformance.Run(context.Background(), conformance.Options{Dial: dialer(addrs["unix"]), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_ = rep.Write(&out)
	if rep.Failed() > 0 || rep.Passed() < 30 {
		t.Fatalf("default server:\n%s", out.String())
	}
	t.Logf("default server: %d passed, %d skipped", rep.Passed(), len(rep.Results)-rep.Passed())
}

// TestOurServerPasses runs the whole suite against the product harness
// over every network transport it serves (stdio is run by .ci/run
// through the built command, one process per connection).
func TestOurServerPasses(t *testing.T) {
	_, addrs := startService(t)
	cases := map[string]func(context.Context) (transport.Conn, error){}
	for scheme, addr := range addrs {
		cases[scheme] = dialer(addr)
	}
	for name, dial := range cases {
		t.Run(name, func(t *testing.T) {
			rep, err := conformance.Run(context.Background(), conformance.Options{
				Dial: dial, Timeout: 10 * time.Second, OversizeBytes: 2 << 20, SlowTool: "conformance_slow",
			})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			_ = rep.Write(&out)
			if rep.Failed() > 0 || rep.Passed() < 30 {
				t.Fatalf("%s:\n%s", name, out.String())
			}
			t.Logf("%s: %d passed", name, rep.Passed())
		})
	}
}
