package grpctransport

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ahp-go/ahp/transport"
	ahpv1 "github.com/ahp-go/ahp/transport/grpctransport/proto/ahp/v1"
)

// fakeStream is a Stream fed from a channel; it fails the test when two
// goroutines receive at once, which gRPC does not allow.
type fakeStream struct {
	t         *testing.T
	in        chan []byte // closed: the peer ended the stream
	ctx       context.Context
	receiving atomic.Int32
	receives  atomic.Int64
}

func newFakeStream(t *testing.T) (*fakeStream, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	return &fakeStream{t: t, in: make(chan []byte, 64), ctx: ctx}, cancel
}

func (f *fakeStream) RecvMsg(m any) error {
	if f.receiving.Add(1) != 1 {
		f.t.Error("two receives at once on one stream")
	}
	defer f.receiving.Add(-1)
	f.receives.Add(1)
	select {
	case b, ok := <-f.in:
		if !ok {
			return io.EOF
		}
		m.(*ahpv1.Message).Json = b
		return nil
	case <-f.ctx.Done():
		return status.Error(codes.Canceled, "context canceled")
	}
}

func (f *fakeStream) SendMsg(any) error { return nil }

func pumped(t *testing.T, maxBytes int) (*Conn, *fakeStream, chan error) {
	t.Helper()
	s, cancel := newFakeStream(t)
	c := NewConn(s, StreamOptions{Pumped: true, Abort: cancel, MaxMessageBytes: maxBytes})
	pumpErr := make(chan error, 1)
	pumpDone := make(chan struct{})
	go func() {
		pumpErr <- c.Pump()
		close(pumpDone)
	}()
	t.Cleanup(func() {
		_ = c.Close()
		select {
		case <-pumpDone:
		case <-time.After(5 * time.Second):
			t.Error("Pump did not return after Close")
		}
	})
	return c, s, pumpErr
}

func read(t *testing.T, c *Conn) ([]byte, error) {
	t.Helper()
	type result struct {
		b   []byte
		err error
	}
	r := make(chan result, 1)
	go func() {
		b, err := c.ReadMessage(context.Background())
		r <- result{b, err}
	}()
	select {
	case x := <-r:
		return x.b, x.err
	case <-time.After(5 * time.Second):
		t.Fatal("ReadMessage did not return")
		return nil, nil
	}
}

func direct(c *Conn) bool {
	c.in.mu.Lock()
	defer c.in.mu.Unlock()
	return c.in.direct
}

// TestPumpOrderAndEnd: what Pump receives reaches the reader in order, and
// the end of the stream reaches both.
func TestPumpOrderAndEnd(t *testing.T) {
	c, s, pumpErr := pumped(t, 0)
	for i := range 3 {
		s.in <- []byte(strconv.Itoa(i))
		time.Sleep(2 * quickWait) // slow enough to stay with Pump
	}
	for i := range 3 {
		b, err := read(t, c)
		if err != nil || string(b) != strconv.Itoa(i) {
			t.Fatalf("message %d: %q %v", i, b, err)
		}
	}
	if direct(c) {
		t.Fatal("slow messages were handed to the reader to receive")
	}
	close(s.in)
	if _, err := read(t, c); !errors.Is(err, io.EOF) {
		t.Fatalf("after the end: %v, want EOF", err)
	}
	if _, err := read(t, c); !errors.Is(err, io.EOF) {
		t.Fatalf("second read after the end: %v, want EOF again", err)
	}
	select {
	case err := <-pumpErr:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("Pump: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Pump did not return at the end of the stream")
	}
}

// TestPumpBusyStreamReadDirectly: quick messages make the reader receive
// itself (no hand-over per message); a long wait gives receiving back to
// Pump; at no time do two goroutines receive.
func TestPumpBusyStreamReadDirectly(t *testing.T) {
	c, s, _ := pumped(t, 0)
	for i := range 50 {
		s.in <- []byte(strconv.Itoa(i))
	}
	for i := range 50 {
		b, err := read(t, c)
		if err != nil || string(b) != strconv.Itoa(i) {
			t.Fatalf("message %d: %q %v", i, b, err)
		}
	}
	if !direct(c) {
		t.Fatal("a busy stream is still handed over message by message")
	}
	// A wait longer than slowWait, then one message: Pump receives again.
	go func() {
		time.Sleep(slowWait + 20*time.Millisecond)
		s.in <- []byte("late")
	}()
	b, err := read(t, c)
	if err != nil || string(b) != "late" {
		t.Fatalf("late message: %q %v", b, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for direct(c) || s.receiving.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("receiving did not go back to Pump after a long wait")
		}
		time.Sleep(time.Millisecond)
	}
	s.in <- []byte("after")
	if b, err := read(t, c); err != nil || string(b) != "after" {
		t.Fatalf("message after the switch: %q %v", b, err)
	}
}

// TestPumpInterruptAndWatch: a waiting reader can be sent away, and a
// watcher is called when input comes, not before.
func TestPumpInterruptAndWatch(t *testing.T) {
	c, s, _ := pumped(t, 0)
	got := make(chan struct {
		b   []byte
		err error
	}, 1)
	go func() {
		b, err := c.ReadMessage(context.Background())
		got <- struct {
			b   []byte
			err error
		}{b, err}
	}()
	time.Sleep(10 * time.Millisecond)
	c.InterruptRead()
	select {
	case r := <-got:
		if r.err != transport.ErrReadInterrupted {
			t.Fatalf("interrupted read: %q %v", r.b, r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("InterruptRead did not release the reader")
	}
	called := make(chan struct{}, 2)
	c.WatchInput(func() { called <- struct{}{} })
	time.Sleep(20 * time.Millisecond)
	if len(called) != 0 {
		t.Fatal("watcher called before any input")
	}
	s.in <- []byte("x")
	select {
	case <-called:
	case <-time.After(5 * time.Second):
		t.Fatal("watcher not called when input came")
	}
	if b, err := read(t, c); err != nil || string(b) != "x" {
		t.Fatalf("read after the watcher: %q %v", b, err)
	}
	// Input already there: the watcher is called at once.
	s.in <- []byte("y")
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.in.mu.Lock()
		has := c.in.has
		c.in.mu.Unlock()
		if has {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Pump did not receive")
		}
		time.Sleep(time.Millisecond)
	}
	c.WatchInput(func() { called <- struct{}{} })
	if len(called) != 1 {
		t.Fatal("watcher not called at once for input already received")
	}
}

// TestPumpCloseReleasesAll: Close (Abort cancels the stream) releases
// Pump blocked in a receive and a waiting reader.
func TestPumpCloseReleasesAll(t *testing.T) {
	c, _, pumpErr := pumped(t, 0)
	r := make(chan error, 1)
	go func() {
		_, err := c.ReadMessage(context.Background())
		r <- err
	}()
	time.Sleep(10 * time.Millisecond)
	_ = c.Close()
	select {
	case err := <-r:
		if err != transport.ErrClosed {
			t.Fatalf("reader after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reader not released by Close")
	}
	select {
	case <-pumpErr:
	case <-time.After(5 * time.Second):
		t.Fatal("Pump not released by Close")
	}
}

// TestPumpOversizedMessageSkipped: a message over the limit is refused to
// the reader and the stream goes on, with Pump and when reading directly.
func TestPumpOversizedMessageSkipped(t *testing.T) {
	c, s, _ := pumped(t, 8)
	s.in <- []byte("0123456789")
	_, err := read(t, c)
	var tl *transport.TooLargeError
	if !errors.As(err, &tl) || !tl.Skipped || tl.Limit != 8 {
		t.Fatalf("oversized message: %v", err)
	}
	s.in <- []byte("ok")
	if b, err := read(t, c); err != nil || string(b) != "ok" {
		t.Fatalf("after the oversized message: %q %v", b, err)
	}
	for i := range 10 {
		s.in <- []byte(strconv.Itoa(i))
	}
	for range 10 {
		if _, err := read(t, c); err != nil {
			t.Fatal(err)
		}
	}
	if !direct(c) {
		t.Fatal("not reading directly after quick messages")
	}
	s.in <- []byte("0123456789")
	if _, err := read(t, c); !errors.As(err, &tl) || !tl.Skipped {
		t.Fatalf("oversized message read directly: %v", err)
	}
	s.in <- []byte("ok2")
	if b, err := read(t, c); err != nil || string(b) != "ok2" {
		t.Fatalf("after the oversized message read directly: %q %v", b, err)
	}
}
