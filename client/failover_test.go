package client

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
)

// replica is an in-process harness on a Unix socket that answers every
// blocking event with allow and its own name in the metadata.
type replica struct {
	server.BaseHandler
	name  string
	addr  string
	stop  context.CancelFunc
	done  chan struct{}
	seen  atomic.Int64                                       // events and notifications received
	onEv  func(r *replica, ev *protocol.Event) time.Duration // optional: called first; a delay to wait
	once  sync.Once
	mu    sync.Mutex
	conns []transport.Conn
}

// crash closes the replica's connections at once, as if its process died,
// without letting calls in flight answer.
func (r *replica) crash() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		_ = c.Close()
	}
}

// recordingListener keeps the connections it accepts for crash.
type recordingListener struct {
	transport.Listener
	r *replica
}

func (l recordingListener) Accept(ctx context.Context) (transport.Conn, error) {
	c, err := l.Listener.Accept(ctx)
	if err == nil {
		l.r.mu.Lock()
		l.r.conns = append(l.r.conns, c)
		l.r.mu.Unlock()
	}
	return c, err
}

func (r *replica) HandleEvent(ctx context.Context, ev *protocol.Event) (protocol.Decision, error) {
	r.seen.Add(1)
	if r.onEv != nil {
		if d := r.onEv(r, ev); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
	}
	return protocol.Decision{Kind: protocol.DecisionAllow, Metadata: json.RawMessage(`{"replica":"` + r.name + `"}`)}, nil
}

func (r *replica) HandleNotification(context.Context, *protocol.Event) { r.seen.Add(1) }

// kill stops the replica: its listener and every connection close.
func (r *replica) kill() {
	r.once.Do(func() { r.stop(); <-r.done })
}

func startReplica(t *testing.T, name string) *replica {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".sock")
	l, err := transport.ListenUnix(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{name: name, addr: "unix:" + path, stop: cancel, done: make(chan struct{})}
	s := server.New(r, server.Options{})
	go func() { _ = s.Serve(ctx, recordingListener{l, r}); close(r.done) }()
	t.Cleanup(r.kill)
	return r
}

func dialAny(t *testing.T, opts Options, rs ...*replica) *Failover {
	t.Helper()
	addrs := make([]string, len(rs))
	for i, r := range rs {
		addrs[i] = r.addr
	}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	opts.SessionID, opts.AgentID = "s1", "a1"
	f, err := DialAny(context.Background(), addrs, transport.DialOptions{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	if _, err := f.Handshake(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f
}

func preAction(t *testing.T, f *Failover) protocol.Decision {
	t.Helper()
	d, err := f.Event(context.Background(), protocol.EventPreAction, map[string]any{"tool_name": "bash", "arguments": map[string]any{}})
	if err != nil {
		t.Fatalf("pre_action: %v", err)
	}
	return d
}

// from returns the name of the replica that allowed d.
func from(d protocol.Decision) string {
	var m struct{ Replica string }
	_ = json.Unmarshal(d.Metadata, &m)
	return m.Replica
}

// Two replicas, the first killed between two events: the second event is
// answered by the second replica (after a new handshake there).
func TestFailoverMovesToNextReplica(t *testing.T) {
	a, b := startReplica(t, "A"), startReplica(t, "B")
	f := dialAny(t, Options{}, a, b)
	if d := preAction(t, f); d.Kind != protocol.DecisionAllow || from(d) != "A" {
		t.Fatalf("first decision = %+v, want allow from A", d)
	}
	a.kill()
	for i := range 3 {
		if d := preAction(t, f); d.Kind != protocol.DecisionAllow || from(d) != "B" {
			t.Fatalf("decision %d after A died = %+v, want allow from B", i, d)
		}
	}
	if f.Addr() != b.addr {
		t.Fatalf("Addr() = %q, want %q", f.Addr(), b.addr)
	}
	if err := f.Ping(context.Background()); err != nil {
		t.Fatalf("ping after failover: %v", err)
	}
}

// The first endpoint is down at dial time: DialAny connects to the next.
func TestDialAnySkipsDeadEndpoint(t *testing.T) {
	a, b := startReplica(t, "A"), startReplica(t, "B")
	a.kill()
	f := dialAny(t, Options{}, a, b)
	if d := preAction(t, f); from(d) != "B" {
		t.Fatalf("decision = %+v, want allow from B", d)
	}
	// None reachable: DialAny fails and names every endpoint.
	b.kill()
	_, err := DialAny(context.Background(), []string{a.addr, b.addr}, transport.DialOptions{}, Options{})
	if !errors.Is(err, ErrNoHarness) || !strings.Contains(err.Error(), a.addr) || !strings.Contains(err.Error(), b.addr) {
		t.Fatalf("DialAny with both down: %v", err)
	}
}

// With every replica gone, a blocking event is a block naming them, never
// an allow, and no error (FailClosed, the default).
func TestFailoverFailsClosedWhenNoneAnswers(t *testing.T) {
	a, b := startReplica(t, "A"), startReplica(t, "B")
	f := dialAny(t, Options{}, a, b)
	preAction(t, f)
	a.kill()
	b.kill()
	d := preAction(t, f)
	if d.Kind != protocol.DecisionBlock || !strings.Contains(d.Reason, "failing closed") ||
		!strings.Contains(d.Reason, a.addr) || !strings.Contains(d.Reason, b.addr) {
		t.Fatalf("decision with no replica = %+v, want a block naming both endpoints", d)
	}
	// FailError reports it as ErrNoHarness.
	c, d2 := startReplica(t, "C"), startReplica(t, "D")
	g := dialAny(t, Options{FailMode: FailError}, c, d2)
	c.kill()
	d2.kill()
	if _, err := g.Event(context.Background(), protocol.EventPreAction, map[string]any{"tool_name": "x"}); !errors.Is(err, ErrNoHarness) {
		t.Fatalf("FailError with no replica: err = %v", err)
	}
}

// The connection is lost after a blocking event was written and before it
// was answered: the event is sent again to the next replica. A batch in
// the same situation is not (the replica may have counted its events).
func TestFailoverAfterLostAnswer(t *testing.T) {
	a, b := startReplica(t, "A"), startReplica(t, "B")
	a.onEv = func(r *replica, _ *protocol.Event) time.Duration {
		r.crash() // the harness dies while deciding
		return 300 * time.Millisecond
	}
	f := dialAny(t, Options{}, a, b)
	if d := preAction(t, f); d.Kind != protocol.DecisionAllow || from(d) != "B" {
		t.Fatalf("decision = %+v, want allow from B after A died mid-call", d)
	}
	if a.seen.Load() != 1 || b.seen.Load() != 1 {
		t.Fatalf("A saw %d, B saw %d events; want 1 and 1", a.seen.Load(), b.seen.Load())
	}

	c, d := startReplica(t, "C"), startReplica(t, "D")
	c.onEv = a.onEv
	g := dialAny(t, Options{}, c, d)
	ev, _ := g.NewEvent(protocol.EventPreAction, map[string]any{"tool_name": "bash"})
	if _, err := g.Batch(context.Background(), []protocol.Event{*ev}); err == nil {
		t.Fatal("batch whose connection was lost after writing succeeded")
	}
	if d.seen.Load() != 0 {
		t.Fatalf("batch was sent again to the next replica (%d events)", d.seen.Load())
	}
}

// A replica that does not answer in time is not skipped: the call fails
// closed (the harness may still be deciding) and the next replica never
// sees it.
func TestFailoverDoesNotRetryTimeout(t *testing.T) {
	a, b := startReplica(t, "A"), startReplica(t, "B")
	a.onEv = func(*replica, *protocol.Event) time.Duration { return 2 * time.Second }
	f := dialAny(t, Options{Timeout: 200 * time.Millisecond}, a, b)
	d := preAction(t, f)
	if d.Kind != protocol.DecisionBlock || b.seen.Load() != 0 {
		t.Fatalf("decision = %+v, B saw %d; want a block and nothing sent to B", d, b.seen.Load())
	}
}
