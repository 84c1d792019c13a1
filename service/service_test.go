package service_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// logBuffer collects the service's logs for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// running is a Service under test, serving in the background.
type running struct {
	svc    *service.Service
	logs   *logBuffer
	addrs  map[string]string // configured listen address -> bound address
	runErr chan error
}

// testConfig is the default configuration with its files under a
// temporary directory, a Unix socket listener and no admin API.
func testConfig(t *testing.T) config.Config {
	t.Helper()
	dir := t.TempDir()
	c := config.Default()
	c.DataDir = filepath.Join(dir, "data")
	c.Listen = []string{"unix:" + filepath.Join(dir, "h.sock")}
	c.Admin = ""
	return c
}

// start builds a Service from c, runs it until the test ends and waits
// until every listener accepts connections.
func start(t *testing.T, c config.Config, opts service.Options) *running {
	t.Helper()
	r := &running{logs: &logBuffer{}, addrs: map[string]string{}, runErr: make(chan error, 1)}
	opts.Logger = slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var mu sync.Mutex
	want := len(c.Listen)
	if c.Admin != "" {
		want++
	}
	ready := make(chan struct{})
	opts.Ready = func(l service.Listening) {
		mu.Lock()
		defer mu.Unlock()
		r.addrs[l.Listen] = l.Addr
		if len(r.addrs) == want {
			close(ready)
		}
	}
	svc, err := service.New(c, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.svc = svc
	go func() { r.runErr <- svc.Run(context.Background()) }()
	t.Cleanup(func() {
		if err := svc.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	select {
	case <-ready:
	case err := <-r.runErr:
		t.Fatalf("Run ended before its listeners were ready: %v\n%s", err, r.logs)
	case <-time.After(20 * time.Second):
		t.Fatalf("listeners not ready:\n%s", r.logs)
	}
	return r
}

// dial connects a client that has done the handshake.
func dial(t *testing.T, addr string, opts client.Options) *client.Client {
	t.Helper()
	ctx := context.Background()
	c, err := client.Dial(ctx, addr, transport.DialOptions{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

func bash(command string) map[string]any {
	return map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": command}}
}

func decide(t *testing.T, c *client.Client, command string) protocol.Decision {
	t.Helper()
	d, err := c.Event(context.Background(), protocol.EventPreAction, bash(command))
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	return d
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not in time", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// lifecycle returns the kinds of the harness_* records of a data
// directory's store, read through a second service-free open.
func kinds(recs []store.AuditRecord) string {
	var out []string
	for _, r := range recs {
		if strings.HasPrefix(r.EventType, "harness_") {
			out = append(out, r.EventType)
		}
	}
	return strings.Join(out, ",")
}

// The default harness decides over a Unix socket: the destructive command
// pack blocks, a plain command is allowed, and both are in the store.
func TestServeDecidesAndRecords(t *testing.T) {
	c := testConfig(t)
	r := start(t, c, service.Options{})
	cl := dial(t, r.addrs[c.Listen[0]], client.Options{SessionID: "s1", AgentID: "a1"})
	if d := decide(t, cl, "rm -rf /"); d.Kind != protocol.DecisionBlock {
		t.Fatalf("rm -rf /: %+v", d)
	}
	if d := decide(t, cl, "ls"); d.Kind != protocol.DecisionAllow {
		t.Fatalf("ls: %+v", d)
	}
	recs, err := r.svc.Store().Audit().Query(context.Background(), store.AuditFilter{SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, rec := range recs {
		if rec.EventType == "pre_action" {
			outcomes = append(outcomes, rec.Outcome)
		}
	}
	if strings.Join(outcomes, ",") != "block,allow" {
		t.Fatalf("recorded outcomes %v", outcomes)
	}
}

// Close, while Run serves, stops the listeners, makes Run return, writes
// harness_stop after harness_start, removes the run marker and closes the
// store. Run after Close is refused.
func TestCloseStopsRunInOrder(t *testing.T) {
	c := testConfig(t)
	r := start(t, c, service.Options{})
	sock := r.addrs[c.Listen[0]]
	cl := dial(t, sock, client.Options{SessionID: "s1"})
	decide(t, cl, "ls")
	st := r.svc.Store()
	if err := r.svc.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.runErr:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after Close")
	}
	if _, err := transport.Dial(context.Background(), sock, transport.DialOptions{}); err == nil {
		t.Fatal("the socket still accepts after Close")
	}
	if _, err := os.Stat(filepath.Join(c.DataDir, service.RunMarkerFile)); !os.IsNotExist(err) {
		t.Fatalf("run marker left behind: %v", err)
	}
	if _, err := st.Audit().Query(context.Background(), store.AuditFilter{}); err == nil {
		t.Fatal("the store is still open after Close")
	}
	if err := r.svc.Run(context.Background()); !errors.Is(err, service.ErrClosed) {
		t.Fatalf("Run after Close: %v", err)
	}
	// A second service on the same data directory reads what the first
	// recorded: its start, then its orderly stop (no harness_lost).
	c2 := c
	c2.Listen = nil
	svc2, err := service.New(c2, service.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc2.Close()
	recs, err := svc2.Store().Audit().Query(context.Background(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(recs); got != "harness_start,harness_stop,harness_start" {
		t.Fatalf("lifecycle records %q", got)
	}
}

// A decision waiting for a human when the service closes fails closed:
// the agent never gets an allow.
func TestCloseFailsPendingDecisionClosed(t *testing.T) {
	c := testConfig(t)
	dir := filepath.Dir(c.DataDir)
	pol := filepath.Join(dir, "escalate.yaml")
	writeFile(t, pol, `rules:
  - id: ask-deploy
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.startsWith("deploy")'
    outcome: {decision: escalate, reason: "a human decides deploys", await_approval: {timeout: 1h}}
`)
	c.Policy.Files = []string{pol}
	c.Approvals.Timeout = config.Duration(10 * time.Minute)
	r := start(t, c, service.Options{})
	cl := dial(t, r.addrs[c.Listen[0]], client.Options{SessionID: "s1", Timeout: time.Minute})
	got := make(chan protocol.Decision, 1)
	gotErr := make(chan error, 1)
	go func() {
		d, err := cl.Event(context.Background(), protocol.EventPreAction, bash("deploy prod"))
		if err != nil {
			gotErr <- err
			return
		}
		got <- d
	}()
	waitFor(t, "a pending approval", func() bool {
		p, err := r.svc.Store().Approvals().List(context.Background(), store.ApprovalFilter{Status: store.ApprovalPending})
		return err == nil && len(p) == 1
	})
	done := make(chan error, 1)
	go func() { done <- r.svc.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return with a decision pending")
	}
	select {
	case d := <-got:
		if d.Allowed() {
			t.Fatalf("a pending decision was allowed at shutdown: %+v", d)
		}
	case <-gotErr: // the connection ended: the agent's fail mode applies (closed by default)
	case <-time.After(10 * time.Second):
		t.Fatal("the agent got no answer after Close")
	}
}
