package server

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
)

// recorder is a Handler that records what it sees.
type recorder struct {
	BaseHandler
	mu       sync.Mutex
	events   []protocol.Event
	notes    []protocol.Event
	rejected []string
	decide   func(*protocol.Event) (protocol.Decision, error)
	calls    atomic.Int64
}

func (r *recorder) HandleEvent(_ context.Context, ev *protocol.Event) (protocol.Decision, error) {
	r.calls.Add(1)
	r.mu.Lock()
	cp := *ev
	cp.Payload = append(json.RawMessage(nil), ev.Payload...)
	r.events = append(r.events, cp)
	r.mu.Unlock()
	if r.decide != nil {
		return r.decide(ev)
	}
	return protocol.Allow(), nil
}

func (r *recorder) HandleNotification(_ context.Context, ev *protocol.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, *ev)
}

func (r *recorder) EventRejected(_ context.Context, _ []byte, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejected = append(r.rejected, reason)
}

func (r *recorder) snapshot() (events, notes []protocol.Event, rejected []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]protocol.Event(nil), r.events...), append([]protocol.Event(nil), r.notes...), append([]string(nil), r.rejected...)
}

// peer is the agent end of an in-memory connection to a served Server.
type peer struct {
	t    *testing.T
	conn transport.Conn
	done chan error
}

func startServer(t *testing.T, h Handler, opts Options) *peer {
	t.Helper()
	a, b := transport.Pipe()
	s := New(h, opts)
	p := &peer{t: t, conn: a, done: make(chan error, 1)}
	go func() { p.done <- s.ServeConn(context.Background(), b) }()
	t.Cleanup(func() {
		_ = a.Close()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			t.Error("ServeConn did not return after close")
		}
	})
	return p
}

func (p *peer) send(msg string) {
	p.t.Helper()
	if err := p.conn.WriteMessage(context.Background(), []byte(msg)); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

// recv reads one message and decodes it into a generic map.
func (p *peer) recv() map[string]any {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := p.conn.ReadMessage(ctx)
	if err != nil {
		p.t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		p.t.Fatalf("response is not JSON: %s", b)
	}
	return m
}

// recvRaw reads one raw message.
func (p *peer) recvRaw() []byte {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := p.conn.ReadMessage(ctx)
	if err != nil {
		p.t.Fatalf("read: %v", err)
	}
	return b
}

// noMessage asserts that nothing arrives within a short time.
func (p *peer) noMessage() {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	b, err := p.conn.ReadMessage(ctx)
	if err == nil {
		p.t.Fatalf("unexpected message: %s", b)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		p.t.Fatalf("read: %v", err)
	}
}

func errCode(t *testing.T, m map[string]any) int {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error in %v", m)
	}
	return int(e["code"].(float64))
}

func errMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

const ts = `"timestamp":"2026-11-21T10:00:00Z"`

func event(typ string, depth int, payload string) string {
	return `{"event_type":"` + typ + `","session_id":"s1","agent_id":"a1",` + ts + `,"depth":` + itoa(depth) + `,"payload":` + payload + `}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
