package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
)

// A slow decision must not hold up the others on the same connection.
func TestSlowDecisionDoesNotBlockOthers(t *testing.T) {
	release := make(chan struct{})
	r := &recorder{decide: func(ev *protocol.Event) (protocol.Decision, error) {
		if strings.Contains(string(ev.Payload), "slow") {
			<-release
		}
		return protocol.Allow(), nil
	}}
	p := startServer(t, r, Options{})
	p.send(`{"jsonrpc":"2.0","id":"slow","method":"ahp/event","params":` + event("pre_action", 0, `{"tool_name":"slow"}`) + `}`)
	p.send(`{"jsonrpc":"2.0","id":"fast","method":"ahp/event","params":` + event("pre_action", 0, `{"tool_name":"fast"}`) + `}`)
	if m := p.recv(); m["id"] != "fast" {
		t.Fatalf("first answer is %v, want the fast one", m["id"])
	}
	close(release)
	if m := p.recv(); m["id"] != "slow" {
		t.Fatalf("second answer is %v", m["id"])
	}
}

// At most MaxInFlight requests of one connection run at once.
func TestMaxInFlight(t *testing.T) {
	var cur, peak atomic.Int64
	release := make(chan struct{})
	r := &recorder{decide: func(*protocol.Event) (protocol.Decision, error) {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		cur.Add(-1)
		return protocol.Allow(), nil
	}}
	p := startServer(t, r, Options{MaxInFlight: 3})
	for i := 0; i < 10; i++ {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ahp/event","params":%s}`, i, event("pre_action", 0, `{}`)))
	}
	deadline := time.Now().Add(2 * time.Second)
	for cur.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if got := peak.Load(); got != 3 {
		t.Fatalf("peak in flight %d, want 3", got)
	}
	close(release)
	seen := map[float64]bool{}
	for i := 0; i < 10; i++ {
		seen[p.recv()["id"].(float64)] = true
	}
	if len(seen) != 10 {
		t.Fatalf("answers for %d ids", len(seen))
	}
}

// Many goroutines on one Unix socket connection: every response matches
// its request.
func TestConcurrentRequestsOverUnixSocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "h.sock")
	l, err := transport.ListenUnix(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{decide: func(ev *protocol.Event) (protocol.Decision, error) {
		return protocol.Block(string(ev.Payload)), nil
	}}
	s := New(r, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	const n = 2000
	go func() {
		var buf bytes.Buffer
		for i := 0; i < n; i++ {
			fmt.Fprintf(&buf, `{"jsonrpc":"2.0","id":%d,"method":"ahp/event","params":%s}`+"\n", i, event("pre_action", 0, fmt.Sprintf(`{"n":%d}`, i)))
		}
		_, _ = nc.Write(buf.Bytes())
	}()
	dec := json.NewDecoder(nc)
	seen := make(map[int]bool)
	for len(seen) < n {
		var m struct {
			ID     int `json:"id"`
			Result struct {
				Reason string `json:"reason"`
			} `json:"result"`
		}
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("after %d: %v", len(seen), err)
		}
		if want := fmt.Sprintf(`{"n":%d}`, m.ID); m.Result.Reason != want {
			t.Fatalf("id %d answered with %q", m.ID, m.Result.Reason)
		}
		seen[m.ID] = true
	}
}

// The peer's connection info reaches the handler through the context.
func TestPeerInContext(t *testing.T) {
	var got transport.Info
	var mu sync.Mutex
	h := &peerHandler{fn: func(ctx context.Context) {
		mu.Lock()
		got = PeerFromContext(ctx)
		mu.Unlock()
	}}
	p := startServer(t, h, Options{})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":` + event("pre_action", 0, `{}`) + `}`)
	p.recv()
	mu.Lock()
	defer mu.Unlock()
	if got.Transport != "memory" {
		t.Fatalf("peer %+v", got)
	}
}

type peerHandler struct {
	BaseHandler
	fn func(context.Context)
}

func (h *peerHandler) HandleEvent(ctx context.Context, _ *protocol.Event) (protocol.Decision, error) {
	h.fn(ctx)
	return protocol.Allow(), nil
}

// An oversized line gets an error and the connection goes on.
func TestOversizedMessage(t *testing.T) {
	r := &recorder{}
	pr, pw := io.Pipe()
	out := &lockedBuffer{}
	conn := transport.NewStreamConn(pr, out, pr.Close, 1024, transport.Info{Transport: "test"})
	s := New(r, Options{MaxMessageBytes: 1024})
	done := make(chan error, 1)
	go func() { done <- s.ServeConn(context.Background(), conn) }()
	big := `{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":` + event("pre_action", 0, `{"x":"`+strings.Repeat("a", 200000)+`"}`) + `}`
	go func() {
		_, _ = pw.Write([]byte(big + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"))
		_ = pw.Close()
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "larger than the limit") || lines[1] != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("output:\n%s", out.String())
	}
	if events, _, _ := r.snapshot(); len(events) != 0 {
		t.Fatal("oversized event reached the handler")
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// When the agent goes away, handlers still running (say, waiting for a
// human) are cancelled instead of running on for nobody.
func TestPeerGoneCancelsHandlers(t *testing.T) {
	started := make(chan struct{})
	cancelled := make(chan struct{})
	h := &ctxHandler{started: started, cancelled: cancelled}
	a, b := transport.Pipe()
	s := New(h, Options{})
	done := make(chan error, 1)
	go func() { done <- s.ServeConn(context.Background(), b) }()
	_ = a.WriteMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":`+event("pre_action", 0, `{}`)+`}`))
	<-started
	_ = a.Close()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("handler not cancelled after the peer left")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

type ctxHandler struct {
	BaseHandler
	started, cancelled chan struct{}
}

func (h *ctxHandler) HandleEvent(ctx context.Context, _ *protocol.Event) (protocol.Decision, error) {
	close(h.started)
	<-ctx.Done()
	close(h.cancelled)
	return protocol.Block("cancelled"), nil
}

// Over a buffered stream, the answer to a fast request is sent while a
// slow one is still pending (the write buffer does not wait for it).
func TestBufferedStreamDoesNotHoldAnswers(t *testing.T) {
	release := make(chan struct{})
	r := &recorder{decide: func(ev *protocol.Event) (protocol.Decision, error) {
		if strings.Contains(string(ev.Payload), "slow") {
			<-release
		}
		return protocol.Allow(), nil
	}}
	dir := t.TempDir()
	l, err := transport.ListenUnix(filepath.Join(dir, "s.sock"), 0)
	if err != nil {
		t.Fatal(err)
	}
	s := New(r, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	defer func() { close(release); cancel(); <-done }()
	c, err := transport.DialUnix(ctx, filepath.Join(dir, "s.sock"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.WriteMessage(ctx, []byte(`{"jsonrpc":"2.0","id":"slow","method":"ahp/event","params":`+event("pre_action", 0, `{"tool_name":"slow"}`)+`}`))
	_ = c.WriteMessage(ctx, []byte(`{"jsonrpc":"2.0","id":"fast","method":"ahp/event","params":`+event("pre_action", 0, `{"tool_name":"fast"}`)+`}`))
	rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
	defer rcancel()
	msg, err := c.ReadMessage(rctx)
	if err != nil || !strings.Contains(string(msg), `"id":"fast"`) {
		t.Fatalf("fast answer: %s %v", msg, err)
	}
}

// On a half-close connection (stdio) the end of input does not cancel the
// requests still being answered; elsewhere it does.
func TestHalfCloseKeepsAnswering(t *testing.T) {
	for _, half := range []bool{true, false} {
		h := &waitHandler{}
		out := &lockedBuffer{}
		in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":` + event("pre_action", 0, `{}`) + "}\n")
		conn := transport.NewStreamConn(in, out, nil, 0, transport.Info{Transport: "test", HalfClose: half})
		if err := New(h, Options{}).ServeConn(context.Background(), conn); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if half && !strings.Contains(got, `"decision":"allow"`) {
			t.Errorf("half-close: %s", got)
		}
		if !half && strings.Contains(got, `"decision":"allow"`) {
			t.Errorf("full close still answered as if the agent were there: %s", got)
		}
	}
}

// waitHandler allows after a short while, unless its context ends first.
type waitHandler struct{ BaseHandler }

func (waitHandler) HandleEvent(ctx context.Context, _ *protocol.Event) (protocol.Decision, error) {
	select {
	case <-time.After(100 * time.Millisecond):
		return protocol.Allow(), nil
	case <-ctx.Done():
		return protocol.Block("cancelled"), nil
	}
}
