package server

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-go/ahp/transport"
)

// watchedConn is a connection with a reading goroutine of its own (like a
// gRPC stream read by its handler): it implements transport.InputWatcher.
type watchedConn struct {
	mu      sync.Mutex
	queue   [][]byte
	closed  bool
	watch   func()
	wake    chan struct{}
	intr    chan struct{}
	out     chan []byte
	watches atomic.Int32
	waits   atomic.Int32
}

func newWatchedConn() *watchedConn {
	return &watchedConn{wake: make(chan struct{}, 1), intr: make(chan struct{}, 1), out: make(chan []byte, 16)}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// send delivers input, calling a registered watcher as the connection's
// own reader would.
func (w *watchedConn) send(b string) {
	w.mu.Lock()
	w.queue = append(w.queue, []byte(b))
	w.tell()
}

// tell, called with w.mu held, unlocks it and wakes the reader and the
// watcher, if any.
func (w *watchedConn) tell() {
	f := w.watch
	w.watch = nil
	w.mu.Unlock()
	signal(w.wake)
	if f != nil {
		f()
	}
}

func (w *watchedConn) ReadMessage(context.Context) ([]byte, error) {
	for {
		w.mu.Lock()
		if len(w.queue) > 0 {
			b := w.queue[0]
			w.queue = w.queue[1:]
			w.mu.Unlock()
			return b, nil
		}
		if w.closed {
			w.mu.Unlock()
			return nil, io.EOF
		}
		w.mu.Unlock()
		select {
		case <-w.wake:
		case <-w.intr:
			return nil, transport.ErrReadInterrupted
		}
	}
}

func (w *watchedConn) WriteMessage(_ context.Context, b []byte) error {
	w.out <- append([]byte(nil), b...)
	return nil
}

func (w *watchedConn) Close() error {
	w.mu.Lock()
	w.closed = true
	w.tell()
	return nil
}

func (w *watchedConn) Info() transport.Info { return transport.Info{Transport: "watched"} }

func (w *watchedConn) InterruptRead() { signal(w.intr) }

func (w *watchedConn) WaitInput() error {
	w.waits.Add(1)
	for {
		w.mu.Lock()
		ok := len(w.queue) > 0 || w.closed
		w.mu.Unlock()
		if ok {
			return nil
		}
		<-w.wake
	}
}

func (w *watchedConn) WatchInput(f func()) {
	w.watches.Add(1)
	w.mu.Lock()
	if len(w.queue) > 0 || w.closed {
		w.mu.Unlock()
		f()
		return
	}
	w.watch = f
	w.mu.Unlock()
}

// TestQuietConnectionWatched: a quiet connection that can watch its own
// input is left with no goroutine of the server waiting on it (WatchInput,
// never WaitInput); its next request is served, and its end is noticed.
func TestQuietConnectionWatched(t *testing.T) {
	old := quietAfter
	quietAfter = 20 * time.Millisecond
	defer func() { quietAfter = old }()

	s := New(BaseHandler{}, Options{})
	c := newWatchedConn()
	ended := make(chan error, 1)
	s.Start(context.Background(), c, func(err error) { ended <- err })
	ping := func(id string) {
		t.Helper()
		c.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"ping"}`)
		select {
		case b := <-c.out:
			if !strings.Contains(string(b), `"id":"`+id+`"`) {
				t.Fatalf("ping %s answered %s", id, b)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ping %s not answered", id)
		}
	}
	waitWatches := func(n int32) {
		t.Helper()
		eventually(t, func() bool { return c.watches.Load() >= n },
			func() string { return fmt.Sprintf("%d watches, want %d", c.watches.Load(), n) })
	}
	ping("a")
	waitWatches(1)
	if s.moves.Load() != 1 {
		t.Fatalf("moves %d, want 1", s.moves.Load())
	}
	ping("b") // served by the reader the watcher started
	waitWatches(2)
	if c.waits.Load() != 0 {
		t.Fatal("a server goroutine waited for input on a connection that watches it")
	}
	_ = c.Close()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("ended: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the end of a watched connection was not noticed")
	}
}
