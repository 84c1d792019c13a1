package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/transport"
)

// TestQuietReaderMoves: the reader of a Unix socket connection that has
// waited for input is moved to a fresh goroutine, once per wait, and the
// connection goes on working, also when the wait was for the rest of a
// message already begun.
func TestQuietReaderMoves(t *testing.T) {
	old := quietAfter
	quietAfter = 20 * time.Millisecond
	defer func() { quietAfter = old }()

	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "q.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s := New(BaseHandler{}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		nc, err := l.Accept()
		if err != nil {
			served <- err
			return
		}
		served <- s.ServeConn(ctx, transport.NewNetConn(nc, 0, transport.Info{Transport: "unix"}))
	}()
	c, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	ping := func(id string) {
		t.Helper()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, `{"jsonrpc":"2.0","id":"`+id+`","method":"ping"}`+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := br.ReadString('\n')
		if err != nil || !strings.Contains(line, `"id":"`+id+`"`) {
			t.Fatalf("ping %s: %q %v", id, line, err)
		}
	}
	waitMoves := func(n int64) {
		t.Helper()
		eventually(t, func() bool { return s.moves.Load() >= n },
			func() string { return fmt.Sprintf("%d readers moved, want %d", s.moves.Load(), n) })
	}
	ping("a")
	waitMoves(1)
	time.Sleep(10 * quietAfter)
	if n := s.moves.Load(); n != 1 {
		t.Fatalf("a quiet wait moved its reader %d times, want once", n)
	}
	ping("b") // served by the moved reader
	waitMoves(2)

	// Half a message, a pause long enough for several looks, the rest.
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, `{"jsonrpc":"2.0","id":"half",`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * quietAfter)
	if _, err := io.WriteString(c, `"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":"half"`) || !strings.Contains(line, `"result"`) {
		t.Fatalf("message split by a pause: %q %v", line, err)
	}
	ping("c")
	_ = c.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("ServeConn: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeConn did not end after the agent left")
	}
}

// endWatcher records the ends of connections.
type endWatcher struct {
	BaseHandler
	ended chan []string
}

func (e *endWatcher) ConnEnded(ctx context.Context, sessions []string, err error) {
	if PeerFromContext(ctx).Transport != "unix" || ctx.Err() != nil {
		sessions = append(sessions, "<bad context>")
	}
	e.ended <- sessions
}

// TestConnEndedNamesSessions: when an agent's connection ends, a
// ConnObserver learns it with the sessions handshaken on it.
func TestConnEndedNamesSessions(t *testing.T) {
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "e.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h := &endWatcher{ended: make(chan []string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if nc, err := l.Accept(); err == nil {
			_ = New(h, Options{}).ServeConn(ctx, transport.NewNetConn(nc, 0, transport.Info{Transport: "unix"}))
		}
	}()
	c, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for _, id := range []string{"s1", "s2", "s1"} {
		_, _ = io.WriteString(c, `{"jsonrpc":"2.0","id":1,"method":"ahp/handshake","params":{"protocol_version":"2.4","session_id":"`+id+`","agent_info":{"framework":"t","version":"1"}}}`+"\n")
		if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"result"`) {
			t.Fatalf("handshake %s: %q %v", id, line, err)
		}
	}
	_ = c.Close()
	select {
	case got := <-h.ended:
		if strings.Join(got, ",") != "s1,s2" {
			t.Fatalf("ended sessions %v, want [s1 s2]", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ConnEnded not called after the agent left")
	}
}

// eventually waits up to 5 s for cond, then fails saying what the
// message tells at that moment.
func eventually(t *testing.T, cond func() bool, msg func() string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(msg())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
