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
	go c.watch()
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

// watch ends the stream when a Send lasts the whole write timeout, which
// means the peer does not read. It looks a few times per timeout, so the
// stream ends between one and one and a quarter timeouts after the Send
// began; a timer per message would cost more.
func (c *Conn) watch() {
	t := time.NewTicker(max(c.opts.WriteTimeout/4, 5*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-c.aborted:
			return
		case now := <-t.C:
			start := c.sendStart.Load()
			if start != 0 && now.Sub(time.Unix(0, start)) >= c.opts.WriteTimeout {
				c.timedOut.Store(true)
				c.abort()
				return
			}
		}
	}
}

// Close ends the stream (see StreamOptions.Abort).
func (c *Conn) Close() error {
	c.closed.Store(true)
	c.abort()
	return nil
}
