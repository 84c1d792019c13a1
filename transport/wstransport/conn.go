// Package wstransport carries AHP over WebSocket: one JSON-RPC message per
// text frame, many requests in flight on one connection. It provides the
// transport.Conn over an established github.com/coder/websocket connection
// (with read limit, write deadline and ping keep-alive) and the "ws" and
// "wss" dialers; the server side that accepts upgrades is in wsserve.
package wstransport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/transport"
)

// Defaults of ConnOptions.
const (
	DefaultWriteTimeout = 10 * time.Second
	DefaultPingInterval = 30 * time.Second
	DefaultPongTimeout  = 10 * time.Second
	// closeGrace bounds the close handshake: a peer that does not answer
	// the close frame in time is disconnected.
	closeGrace = time.Second
)

// ConnOptions configure a Conn over an established WebSocket.
type ConnOptions struct {
	// MaxMessageBytes bounds one received message
	// (transport.DefaultMaxMessageBytes when 0). A larger message closes the
	// connection with status 1009 (message too big).
	MaxMessageBytes int
	// WriteTimeout bounds the sending of one message (DefaultWriteTimeout
	// when 0). A peer that does not take a message in time, for example
	// because it stopped reading, is disconnected, so that nothing piles up
	// for it.
	WriteTimeout time.Duration
	// PingInterval is the time between keep-alive pings; a negative value
	// disables them (DefaultPingInterval when 0). Pongs are read by
	// ReadMessage, so pings need a reader, which every AHP peer has.
	PingInterval time.Duration
	// PongTimeout is how long a ping may wait for its pong before the
	// connection is closed (DefaultPongTimeout when 0).
	PongTimeout time.Duration
	// Info describes the connection (Transport defaults to "ws").
	Info transport.Info
}

func (o *ConnOptions) fill() {
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = transport.DefaultMaxMessageBytes
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.PingInterval == 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.PongTimeout <= 0 {
		o.PongTimeout = DefaultPongTimeout
	}
	if o.Info.Transport == "" {
		o.Info.Transport = "ws"
	}
}

// Conn is a transport.Conn over a WebSocket connection.
type Conn struct {
	ws    *websocket.Conn
	opts  ConnOptions
	batch *batchConn // nil when the Conn was made by NewConn
	rbuf  []byte     // read buffer, used by the one reader
	wmu   sync.Mutex // orders writers before coder's own (channel) lock, which costs more when contended

	closed    atomic.Bool
	closeOnce sync.Once
	pmu       sync.Mutex     // orders the keep-alive timer with Close
	pingT     *time.Timer    // fires the next keep-alive ping; nil when pings are off
	stopped   bool           // Close was called: no more pings (under pmu)
	pinger    sync.WaitGroup // a ping in progress
	timedOut  atomic.Bool    // a ping went unanswered or a write did not finish in time
}

// NewConn returns a Conn over ws, which it owns from now on: it sets the
// read limit and, unless disabled, starts the keep-alive pinger.
func NewConn(ws *websocket.Conn, opts ConnOptions) *Conn {
	return newConn(ws, opts, nil)
}

// newConn is NewConn for a WebSocket over batch (nil when unknown).
func newConn(ws *websocket.Conn, opts ConnOptions, batch *batchConn) *Conn {
	opts.fill()
	ws.SetReadLimit(int64(opts.MaxMessageBytes))
	c := &Conn{ws: ws, opts: opts, batch: batch}
	if opts.PingInterval > 0 {
		// A timer, not a goroutine, waits for the next ping: an idle
		// connection costs no goroutine for its keep-alive.
		c.pmu.Lock()
		c.pingT = time.AfterFunc(opts.PingInterval, c.ping)
		c.pmu.Unlock()
	}
	return c
}

// Info describes the connection.
func (c *Conn) Info() transport.Info { return c.opts.Info }

// TimedOut reports whether the connection was dropped because the peer
// missed a pong or did not take a message within the write timeout.
func (c *Conn) TimedOut() bool {
	return c.timedOut.Load() || (c.batch != nil && c.batch.timedOut())
}

// ReadMessage returns the payload of the next data frame. Text frames are
// what AHP sends; binary frames are accepted as well and handed over as
// they are. A message over the limit yields a *transport.TooLargeError
// (not skipped: the connection is closed); a normal close by the peer
// yields io.EOF. ctx is checked before waiting; while waiting, Close (or
// the keep-alive) ends the wait, which spares a timer per message.
func (c *Conn) ReadMessage(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.batch != nil {
		if err := c.batch.preWait(); err != nil {
			return nil, err
		}
	}
	_, r, err := c.ws.Reader(context.Background())
	if err != nil {
		return nil, c.readErr(err)
	}
	// Read into a buffer kept between calls, then copy out exactly the
	// message: one allocation of the right size per message.
	buf := c.rbuf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, c.readErr(err)
		}
	}
	msg := make([]byte, len(buf))
	copy(msg, buf)
	if cap(buf) <= maxKeptReadBuffer {
		c.rbuf = buf
	} else {
		c.rbuf = nil
	}
	return msg, nil
}

// maxKeptReadBuffer bounds the read buffer a Conn keeps between messages.
const maxKeptReadBuffer = 64 << 10

// InterruptRead implements transport.ReadInterrupter on connections made
// by Accept: a reader waiting for the next message returns
// transport.ErrReadInterrupted.
func (c *Conn) InterruptRead() {
	if c.batch != nil {
		c.batch.interrupt()
	}
}

// WaitInput implements transport.ReadInterrupter: it waits, holding no
// buffer, until the next message starts to arrive.
func (c *Conn) WaitInput() error {
	if c.batch == nil || c.batch.br == nil || c.batch.br.Buffered() > 0 {
		return nil
	}
	return c.batch.rd.Wait()
}

// readErr maps a read error to the transport's errors.
func (c *Conn) readErr(err error) error {
	switch {
	case c.closed.Load():
		return transport.ErrClosed
	case errors.Is(err, websocket.ErrMessageTooBig):
		return &transport.TooLargeError{Limit: c.opts.MaxMessageBytes}
	}
	switch websocket.CloseStatus(err) {
	case websocket.StatusNormalClosure, websocket.StatusGoingAway:
		return io.EOF
	}
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return io.EOF
	}
	return fmt.Errorf("ws: read: %w", err)
}

// WriteMessage sends msg as one text frame. A peer that does not take it
// within WriteTimeout is disconnected (a frame may be half written). On a
// connection made by Accept or Dial the frame is queued and written,
// with others, by a flusher (see batchConn); ctx is checked first.
func (c *Conn) WriteMessage(ctx context.Context, msg []byte) error {
	if c.closed.Load() {
		return transport.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var err error
	if c.batch != nil {
		// The flusher bounds the system call; no timer per message.
		c.wmu.Lock()
		err = c.ws.Write(context.Background(), websocket.MessageText, msg)
		c.wmu.Unlock()
		if err == nil {
			return nil
		}
		_ = c.ws.CloseNow()
		if c.batch.timedOut() {
			return fmt.Errorf("ws: write: peer did not take messages within %v: %w", c.opts.WriteTimeout, context.DeadlineExceeded)
		}
	} else {
		wctx, cancel := context.WithTimeout(ctx, c.opts.WriteTimeout)
		err = c.ws.Write(wctx, websocket.MessageText, msg)
		expired := wctx.Err() != nil && ctx.Err() == nil
		cancel()
		if err == nil {
			return nil
		}
		if expired {
			c.timedOut.Store(true)
			return fmt.Errorf("ws: write: peer did not take the message within %v: %w", c.opts.WriteTimeout, context.DeadlineExceeded)
		}
	}
	if c.closed.Load() {
		return transport.ErrClosed
	}
	return fmt.Errorf("ws: write: %w", err)
}

// Close sends a normal close frame and closes the connection. A peer that
// does not answer the close frame within a second is cut off.
func (c *Conn) Close() error {
	return c.CloseWith(websocket.StatusNormalClosure, "")
}

// CloseWith closes the connection with the given status and reason (at
// most 123 bytes). Only the first Close or CloseWith has an effect.
func (c *Conn) CloseWith(code websocket.StatusCode, reason string) error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		if c.batch != nil {
			c.batch.closeWaits()
		}
		c.pmu.Lock()
		c.stopped = true
		if c.pingT != nil {
			c.pingT.Stop()
		}
		c.pmu.Unlock()
		cut := time.AfterFunc(closeGrace, func() { _ = c.ws.CloseNow() })
		// An error here means the peer went first or did not answer the
		// close frame; either way the connection is gone, which is the goal.
		_ = c.ws.Close(code, reason)
		cut.Stop()
		c.pinger.Wait()
	})
	return nil
}

// ping sends one keep-alive ping and cuts the connection when its pong
// does not come back within PongTimeout; otherwise it sets the timer for
// the next one.
func (c *Conn) ping() {
	c.pmu.Lock()
	if c.stopped {
		c.pmu.Unlock()
		return
	}
	c.pinger.Add(1)
	c.pmu.Unlock()
	defer c.pinger.Done()
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.PongTimeout)
	err := c.ws.Ping(ctx)
	cancel()
	if err != nil {
		if !c.closed.Load() {
			c.timedOut.Store(true)
			_ = c.ws.CloseNow()
		}
		return
	}
	c.pmu.Lock()
	if !c.stopped {
		c.pingT.Reset(c.opts.PingInterval)
	}
	c.pmu.Unlock()
}
