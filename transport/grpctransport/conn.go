// Package grpctransport carries AHP over gRPC with the ahp.v1.Harness
// service (proto/ahp/v1/ahp.proto): each protobuf Message holds one
// JSON-RPC message as bytes, so semantics match the other transports. It
// provides the transport.Conn over a Stream RPC (used on both sides), a
// Conn over unary Call RPCs, and the "grpc" and "grpcs" dialers; the
// server side is in grpcserve.
package grpctransport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ahp-go/ahp/transport"
	ahpv1 "github.com/ahp-go/ahp/transport/grpctransport/proto/ahp/v1"
)

// DefaultWriteTimeout bounds the sending of one message on a stream.
const DefaultWriteTimeout = 10 * time.Second

// WindowSize is the HTTP/2 flow-control window, per stream and per
// connection, both sides use. Setting it turns off gRPC's bandwidth
// probing (a ping for every burst of data), which costs more than it
// gains for small JSON-RPC messages; it also bounds what a peer that does
// not read can make the other side queue.
const WindowSize = 256 << 10

// MessageOverhead is what the protobuf framing adds to a JSON message (a
// field tag and a length); gRPC message size limits are set this much
// above the JSON limit.
const MessageOverhead = 16

// Stream is the part of a Harness Stream RPC a Conn uses; both
// ahpv1.Harness_StreamClient and ahpv1.Harness_StreamServer have it. The
// Conn sends and receives *ahpv1.Message values, reusing one of each (the
// codec copies the JSON in both directions).
type Stream interface {
	SendMsg(m any) error
	RecvMsg(m any) error
}

// StreamOptions configure a Conn over a stream.
type StreamOptions struct {
	// MaxMessageBytes bounds one received JSON message
	// (transport.DefaultMaxMessageBytes when 0). gRPC's own receive limit
	// should be set to this plus MessageOverhead.
	MaxMessageBytes int
	// WriteTimeout bounds one Send (DefaultWriteTimeout when 0). A peer
	// that does not take a message in time, for example because it
	// stopped reading and flow control filled up, is cut off: Abort runs.
	WriteTimeout time.Duration
	// Abort ends the stream so that blocked Send and Recv calls return:
	// cancelling the RPC's context on the client, returning from the
	// handler on the server. Close and a write timeout call it, once.
	Abort func()
	// Info describes the connection (Transport defaults to "grpc").
	Info transport.Info
}

// Conn is a transport.Conn over a Harness Stream RPC.
type Conn struct {
	s    Stream
	opts StreamOptions

	wmu       sync.Mutex    // one Send at a time (gRPC requires it)
	smsg      ahpv1.Message // the message sent, reused under wmu
	rmsg      ahpv1.Message // the message received, reused by the one reader
	sendStart atomic.Int64  // UnixNano of the Send in progress, 0 when none
	closed    atomic.Bool
	timedOut  atomic.Bool
	abortOnce sync.Once
	aborted   chan struct{}
}

// NewConn returns a Conn over s.
func NewConn(s Stream, opts StreamOptions) *Conn {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = transport.DefaultMaxMessageBytes
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.Info.Transport == "" {
		opts.Info.Transport = "grpc"
	}
	c := &Conn{s: s, opts: opts, aborted: make(chan struct{})}
	sends.add(c)
	return c
}

// Info describes the connection.
func (c *Conn) Info() transport.Info { return c.opts.Info }

// Aborted is closed when the stream was ended by Close or a write timeout.
func (c *Conn) Aborted() <-chan struct{} { return c.aborted }

// TimedOut reports whether the peer was cut off for not taking a message
// within the write timeout.
func (c *Conn) TimedOut() bool { return c.timedOut.Load() }

func (c *Conn) abort() {
	c.abortOnce.Do(func() {
		sends.remove(c)
		close(c.aborted)
		if c.opts.Abort != nil {
			c.opts.Abort()
		}
	})
}

// ReadMessage returns the JSON of the next Message. It returns io.EOF when
// the peer ended the stream normally. ctx is not consulted while waiting:
// Close unblocks it.
func (c *Conn) ReadMessage(context.Context) ([]byte, error) {
	err := c.s.RecvMsg(&c.rmsg)
	if err != nil {
		switch {
		case c.closed.Load():
			return nil, transport.ErrClosed
		case errors.Is(err, io.EOF):
			return nil, io.EOF
		case status.Code(err) == codes.ResourceExhausted:
			return nil, &transport.TooLargeError{Limit: c.opts.MaxMessageBytes}
		}
		return nil, fmt.Errorf("grpc: receive: %w", err)
	}
	b := c.rmsg.Json
	c.rmsg.Json = nil // the caller owns it now
	if len(b) > c.opts.MaxMessageBytes {
		return nil, &transport.TooLargeError{Limit: c.opts.MaxMessageBytes, Skipped: true}
	}
	return b, nil
}

// WriteMessage sends msg as one Message. ctx is checked first; waiting
// for the turn and the Send itself are bounded by WriteTimeout, after
// which the stream is aborted.
func (c *Conn) WriteMessage(ctx context.Context, msg []byte) error {
	if c.closed.Load() {
		return transport.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.wmu.Lock()
	if c.closed.Load() {
		c.wmu.Unlock()
		return transport.ErrClosed
	}
	c.sendStart.Store(time.Now().UnixNano())
	c.smsg.Json = msg
	err := c.s.SendMsg(&c.smsg)
	c.smsg.Json = nil // not retained
	c.sendStart.Store(0)
	c.wmu.Unlock()
	if err == nil {
		return nil
	}
	switch {
	case c.timedOut.Load():
		return fmt.Errorf("grpc: send: peer did not take the message within %v: %w", c.opts.WriteTimeout, context.DeadlineExceeded)
	case c.closed.Load():
		return transport.ErrClosed
	}
	return fmt.Errorf("grpc: send: %w", err)
}

// sends watches the Sends of every open Conn: one goroutine for all of
// them (none when no Conn is open), so that an idle stream costs no
// goroutine and no timer for its write timeout.
var sends = &sendWatcher{conns: map[*Conn]struct{}{}}

// sendWatcher ends a stream whose Send lasts its whole write timeout,
// which means the peer does not read. It looks a few times per timeout,
// so the stream ends between one and one and a quarter timeouts after
// the Send began; a timer per message would cost more.
type sendWatcher struct {
	mu      sync.Mutex
	conns   map[*Conn]struct{}
	period  time.Duration // how often the goroutine looks; 0 when it is not running
	changed chan struct{} // tells the goroutine that period shrank
}

func (w *sendWatcher) add(c *Conn) {
	p := max(c.opts.WriteTimeout/4, 5*time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.conns[c] = struct{}{}
	switch {
	case w.period == 0:
		w.period = p
		w.changed = make(chan struct{}, 1)
		go w.run(w.changed)
	case p < w.period:
		w.period = p
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
}

func (w *sendWatcher) remove(c *Conn) {
	w.mu.Lock()
	delete(w.conns, c)
	w.mu.Unlock()
}

// run looks at the Sends in progress every period until no Conn is left.
func (w *sendWatcher) run(changed chan struct{}) {
	w.mu.Lock()
	t := time.NewTicker(w.period)
	w.mu.Unlock()
	defer t.Stop()
	var late []*Conn
	for {
		select {
		case <-changed:
			w.mu.Lock()
			t.Reset(w.period)
			w.mu.Unlock()
			continue
		case <-t.C:
		}
		now := time.Now().UnixNano()
		w.mu.Lock()
		if len(w.conns) == 0 {
			w.period = 0
			w.mu.Unlock()
			return
		}
		late = late[:0]
		for c := range w.conns {
			start := c.sendStart.Load()
			if start != 0 && time.Duration(now-start) >= c.opts.WriteTimeout {
				late = append(late, c)
			}
		}
		w.mu.Unlock()
		for _, c := range late {
			c.timedOut.Store(true)
			c.abort()
		}
	}
}

// Close ends the stream (see StreamOptions.Abort).
func (c *Conn) Close() error {
	c.closed.Store(true)
	c.abort()
	return nil
}
