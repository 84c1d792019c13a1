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
	// Pumped says that the stream is read by Pump, on a goroutine the
	// caller has anyway (a server's stream handler), and ReadMessage takes
	// what Pump received. The Conn then implements transport.InputWatcher
	// for real: a server keeps no goroutine of its own waiting on a quiet
	// stream. Abort must then make a blocked RecvMsg return (by cancelling
	// the stream's context), since Pump's goroutine cannot return first.
	Pumped bool
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

	in *inbox // what Pump received, when Pumped
}

// inbox holds the one message Pump received and the reader has not taken
// yet. Pump waits for the slot to be free before it receives the next, so
// an agent that sends faster than its requests are answered meets gRPC
// flow control, as when the reader receives directly.
//
// Handing each message from Pump's goroutine to the reader costs a
// goroutine wake-up, which a busy stream would pay on every message. So
// while messages come quickly, the reader receives directly (direct is
// set, Pump waits on resume), and once it waited long for one, Pump
// receives again: a stream goes quiet in Pump's hands, but may also stay
// quiet in the reader's after a burst, until its next message.
type inbox struct {
	mu     sync.Mutex
	direct bool          // the reader receives; Pump waits on resume
	resume chan struct{} // Pump receives again (capacity 1)

	msg   []byte
	merr  error  // instead of msg: the refusal of an oversized message
	has   bool   // msg or merr is there to take
	err   error  // how the input ended, once it has
	watch func() // called when a message or the end arrives

	ready     chan struct{} // a message or the end arrived (capacity 1)
	space     chan struct{} // the slot was emptied (capacity 1)
	interrupt chan struct{} // InterruptRead was called (capacity 1)
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
	if opts.Pumped {
		c.in = &inbox{ready: make(chan struct{}, 1), space: make(chan struct{}, 1), interrupt: make(chan struct{}, 1), resume: make(chan struct{}, 1)}
	}
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
	if c.in != nil {
		return c.take()
	}
	return c.receive()
}

// receive receives the next Message on the stream.
func (c *Conn) receive() ([]byte, error) {
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

// Pump receives the stream's messages for ReadMessage until the input
// ends, the stream is aborted or a message is refused for its size, and
// returns how it ended (io.EOF when the peer ended the stream). Only for
// a Conn made with StreamOptions.Pumped; call it once.
func (c *Conn) Pump() error {
	in := c.in
	quick := 0 // messages in a row that came within quickWait
	for {
		in.mu.Lock()
		direct, ended := in.direct, in.err
		in.mu.Unlock()
		if ended != nil {
			return ended
		}
		if direct {
			select {
			case <-in.resume:
			case <-c.aborted:
				return transport.ErrClosed
			}
			continue
		}
		start := time.Now()
		b, err := c.receive()
		if time.Since(start) < quickWait {
			quick++
		} else {
			quick = 0
		}
		var tl *transport.TooLargeError
		if err != nil && errors.As(err, &tl) && tl.Skipped {
			err = nil // told to the reader; the stream goes on
		}
		if err != nil {
			in.end(err)
			return err
		}
		toReader := quick >= quickMessages
		if toReader {
			quick = 0
		}
		if !in.put(b, tl, toReader, c.aborted) {
			return transport.ErrClosed
		}
	}
}

// When Pump received quickMessages messages in a row each within
// quickWait, the reader receives the next ones itself; when the reader
// waited slowWait or more for one, Pump receives again.
const (
	quickWait     = time.Millisecond
	quickMessages = 2
	slowWait      = 50 * time.Millisecond
)

// put hands a message (or the refusal of an oversized one) to the reader,
// first waiting until the previous one was taken. toReader makes the
// reader receive the next messages itself.
func (in *inbox) put(b []byte, tl *transport.TooLargeError, toReader bool, aborted <-chan struct{}) bool {
	in.mu.Lock()
	for in.has {
		in.mu.Unlock()
		select {
		case <-in.space:
		case <-aborted:
			return false
		}
		in.mu.Lock()
	}
	in.msg, in.merr, in.has = b, nil, true
	in.direct = toReader
	if tl != nil {
		in.msg, in.merr = nil, tl
	}
	in.tell()
	return true
}

// end records how the input ended and tells the reader.
func (in *inbox) end(err error) {
	in.mu.Lock()
	if in.err == nil {
		in.err = err
	}
	in.tell()
}

// tell, called with in.mu held, unlocks it and tells the reader and the
// watcher, if any, that there is something to read.
func (in *inbox) tell() {
	f := in.watch
	in.watch = nil
	in.mu.Unlock()
	in.signal()
	if f != nil {
		f()
	}
}

func (in *inbox) signal() {
	select {
	case in.ready <- struct{}{}:
	default:
	}
}

// take returns what Pump received: the next message, the refusal of an
// oversized one, or how the input ended.
func (c *Conn) take() ([]byte, error) {
	in := c.in
	for {
		in.mu.Lock()
		if in.has {
			b, err := in.msg, in.merr
			in.msg, in.merr, in.has = nil, nil, false
			in.mu.Unlock()
			select {
			case in.space <- struct{}{}:
			default:
			}
			return b, err
		}
		if err := in.err; err != nil {
			in.mu.Unlock()
			return nil, c.ended(err)
		}
		if in.direct {
			in.mu.Unlock()
			return c.receiveDirect()
		}
		in.mu.Unlock()
		select {
		case <-in.ready:
		case <-in.interrupt:
			return nil, transport.ErrReadInterrupted
		case <-c.aborted:
			return nil, transport.ErrClosed
		}
	}
}

// receiveDirect receives on the reader's goroutine while messages come
// quickly (see inbox), and gives receiving back to Pump after a long wait
// or at the end of the input.
func (c *Conn) receiveDirect() ([]byte, error) {
	in := c.in
	start := time.Now()
	b, err := c.receive()
	var tl *transport.TooLargeError
	skipped := err != nil && errors.As(err, &tl) && tl.Skipped
	if err == nil && time.Since(start) < slowWait || skipped {
		return b, err
	}
	in.mu.Lock()
	in.direct = false
	if err != nil && in.err == nil {
		in.err = err
	}
	in.mu.Unlock()
	select {
	case in.resume <- struct{}{}:
	default:
	}
	return b, err
}

// ended is the error a reader gets for the end of a pumped stream.
func (c *Conn) ended(err error) error {
	if c.closed.Load() {
		return transport.ErrClosed
	}
	return err
}

// InterruptRead makes a ReadMessage waiting for input return
// transport.ErrReadInterrupted (see transport.ReadInterrupter); it does
// nothing unless the Conn is Pumped.
func (c *Conn) InterruptRead() {
	in := c.in
	if in == nil {
		return
	}
	in.mu.Lock()
	direct := in.direct
	in.mu.Unlock()
	if direct {
		return // the reader is in a receive, which cannot be interrupted
	}
	select {
	case in.interrupt <- struct{}{}:
	default:
	}
}

// WaitInput waits until a message or the end of the input is there to be
// read (at once unless the Conn is Pumped).
func (c *Conn) WaitInput() error {
	in := c.in
	if in == nil {
		return nil
	}
	for {
		in.mu.Lock()
		ok := in.has || in.err != nil
		in.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-in.ready:
			in.signal() // for the read that follows
		case <-c.aborted:
			return nil
		}
	}
}

// WatchInput calls f once a message or the end of the input is there to
// be read: at once if it is, else from Pump (see transport.InputWatcher).
// Unless the Conn is Pumped it calls f at once.
func (c *Conn) WatchInput(f func()) {
	in := c.in
	if in == nil {
		f()
		return
	}
	in.mu.Lock()
	if in.has || in.err != nil {
		in.mu.Unlock()
		f()
		return
	}
	in.watch = f
	in.mu.Unlock()
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
