package reconnect_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/internal/nettest"
	"github.com/ahp-go/ahp/transport/reconnect"
)

// harness serves in-memory connections and can drop them all at once.
type harness struct {
	h    *nettest.Handler
	srv  *server.Server
	down atomic.Bool // dials fail while set
	deny atomic.Bool // dials fail permanently while set
	dial atomic.Int64
	wg   sync.WaitGroup

	mu    sync.Mutex
	conns []transport.Conn
}

func newHarness(t *testing.T) *harness {
	h := &harness{h: nettest.NewHandler()}
	h.srv = server.New(h.h, server.Options{})
	t.Cleanup(func() {
		h.drop()
		close(h.h.Release) // ServeConn waits for handlers still running
		h.wg.Wait()
	})
	return h
}

func (h *harness) Dial(context.Context) (transport.Conn, error) {
	h.dial.Add(1)
	if h.deny.Load() {
		return nil, reconnect.Permanent(errors.New("credentials refused"))
	}
	if h.down.Load() {
		return nil, errors.New("connection refused")
	}
	a, b := transport.Pipe()
	h.mu.Lock()
	h.conns = append(h.conns, b)
	h.mu.Unlock()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		_ = h.srv.ServeConn(context.Background(), b)
	}()
	return a, nil
}

// drop cuts every connection.
func (h *harness) drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.conns {
		_ = c.Close()
	}
	h.conns = nil
}

var fast = reconnect.Options{MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, WaitTimeout: 5 * time.Second}

func TestPendingFailAndLaterCallsReconnect(t *testing.T) {
	h := newHarness(t)
	rc, err := reconnect.Dial(context.Background(), h.Dial, fast)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(rc, client.Options{Timeout: 30 * time.Second, FailMode: client.FailError})
	defer c.Close()
	nettest.RoundTrip(t, c)
	ctx := context.Background()

	const n = 5
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := c.Event(ctx, protocol.EventPreAction, nettest.Wait)
			errs <- err
		}()
	}
	for range n {
		<-h.h.Waiting
	}
	h.down.Store(true)
	h.drop()
	for range n {
		var je *jsonrpc.Error
		if err := <-errs; !errors.As(err, &je) || je.Code != reconnect.CodeTransportError {
			t.Fatalf("pending call: %v, want a transport error", err)
		}
	}
	time.Sleep(100 * time.Millisecond) // let some attempts fail
	if rc.Connected() {
		t.Fatal("connected while the harness is down")
	}
	tried := h.dial.Load()
	h.down.Store(false)
	d, err := c.Event(ctx, protocol.EventPreAction, nettest.RmRoot)
	if err != nil || d.Kind != protocol.DecisionBlock {
		t.Fatalf("after reconnect: %v %v", d, err)
	}
	if tried < 3 {
		t.Fatalf("only %d dials while down: backoff too slow", tried)
	}
	if h.h.Handshakes.Load() != 2 {
		t.Fatalf("%d handshakes, want the original and the replay", h.h.Handshakes.Load())
	}
	if rc.Reconnects() != 1 {
		t.Fatalf("%d reconnects, want 1", rc.Reconnects())
	}
}

func TestBackoffIsCapped(t *testing.T) {
	h := newHarness(t)
	o := reconnect.Options{MinBackoff: 20 * time.Millisecond, MaxBackoff: 80 * time.Millisecond}
	rc, err := reconnect.Dial(context.Background(), h.Dial, o)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	go func() {
		for {
			if _, err := rc.ReadMessage(context.Background()); errors.Is(err, transport.ErrClosed) {
				return
			}
		}
	}()
	h.down.Store(true)
	h.drop()
	time.Sleep(1500 * time.Millisecond)
	// Nominal waits 20, 40, 80, 80, ... ms (±20%): about 18 attempts in
	// 1.5 s. Without the cap (20, 40, 80, 160, 320, 640) there would be 6.
	if got := h.dial.Load() - 1; got < 10 || got > 40 {
		t.Fatalf("%d attempts in 1.5 s with waits capped at 80 ms", got)
	}
}

func TestWriteWaitsThenFails(t *testing.T) {
	h := newHarness(t)
	o := fast
	o.WaitTimeout = 100 * time.Millisecond
	rc, err := reconnect.Dial(context.Background(), h.Dial, o)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	readErr := make(chan error, 1)
	go func() {
		_, err := rc.ReadMessage(context.Background())
		readErr <- err
	}()
	h.down.Store(true)
	h.drop()
	for rc.Connected() {
		time.Sleep(5 * time.Millisecond)
	}
	began := time.Now()
	err = rc.WriteMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if !errors.Is(err, reconnect.ErrDisconnected) {
		t.Fatalf("write while down: %v", err)
	}
	if d := time.Since(began); d < 90*time.Millisecond || d > 2*time.Second {
		t.Fatalf("write waited %v, want about 100ms", d)
	}
	_ = rc.Close()
	if err := <-readErr; !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("read after close: %v", err)
	}
}

func TestPermanentFailureEndsRetries(t *testing.T) {
	h := newHarness(t)
	rc, err := reconnect.Dial(context.Background(), h.Dial, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	readErr := make(chan error, 1)
	go func() {
		for {
			if _, err := rc.ReadMessage(context.Background()); err != nil {
				readErr <- err
				return
			}
		}
	}()
	h.deny.Store(true)
	h.drop()
	err = <-readErr
	if !reconnect.IsPermanent(err) {
		t.Fatalf("read: %v, want the permanent failure", err)
	}
	n := h.dial.Load()
	time.Sleep(100 * time.Millisecond)
	if h.dial.Load() != n {
		t.Fatal("dials went on after a permanent failure")
	}
	if err := rc.WriteMessage(context.Background(), []byte(`{}`)); !reconnect.IsPermanent(err) {
		t.Fatalf("write: %v", err)
	}
}

func TestFirstDialErrorReturned(t *testing.T) {
	h := newHarness(t)
	h.down.Store(true)
	if _, err := reconnect.Dial(context.Background(), h.Dial, fast); err == nil {
		t.Fatal("Dial succeeded with the harness down")
	}
}
