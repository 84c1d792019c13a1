// Package reconnect keeps an agent's connection to a harness usable across
// network failures. A Conn wraps a dial function: when the connection in
// use is lost, the requests still waiting for an answer fail at once with a
// JSON-RPC error, a new connection is dialled in the background with capped
// exponential backoff, the last handshake is replayed on it, and later
// calls go through it. The WebSocket and gRPC dialers use it.
package reconnect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-go/ahp/transport"
)

// DialFunc opens one connection. It is called once by Dial and again after
// every loss, with a context bounded by Options.DialTimeout.
type DialFunc func(ctx context.Context) (transport.Conn, error)

// Options configure a Conn. The zero value is usable.
type Options struct {
	MinBackoff  time.Duration // wait before the first reconnection attempt (100 ms when 0)
	MaxBackoff  time.Duration // cap of the doubling wait between attempts (10 s when 0)
	DialTimeout time.Duration // bound of one reconnection attempt, handshake replay included (10 s when 0)
	// WaitTimeout bounds how long WriteMessage waits for a connection while
	// reconnecting (10 s when 0); the caller's context may end it sooner.
	WaitTimeout time.Duration
	Logger      *slog.Logger // reconnection progress (discarded when nil)
}

func (o *Options) fill() {
	if o.MinBackoff <= 0 {
		o.MinBackoff = 100 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 10 * time.Second
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = o.MinBackoff
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 10 * time.Second
	}
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

// ErrDisconnected is returned by WriteMessage when no connection came back
// within Options.WaitTimeout.
var ErrDisconnected = errors.New("reconnect: not connected to the harness")

// permanentError marks a dial failure that retrying cannot fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as a failure that reconnecting cannot fix, such as
// refused credentials: a DialFunc returns it so that the Conn gives up
// instead of retrying. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err was marked by Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// Conn is a transport.Conn that redials when its connection is lost. It
// tracks the ids of requests in flight so that it can answer them with a
// JSON-RPC error (CodeTransportError) when their connection goes: the client then
// fails those calls promptly instead of waiting for its timeout.
type Conn struct {
	dial DialFunc
	opts Options

	life     context.Context // ends with Close; bounds reconnection
	stopLife context.CancelFunc
	wg       sync.WaitGroup

	mu        sync.Mutex
	cur       transport.Conn // nil while disconnected
	gen       uint64         // generation of cur
	ready     chan struct{}  // closed when cur is set again, or on fatal/close
	pending   map[string]uint64
	synth     [][]byte // error responses for requests whose connection was lost
	handshake []byte   // the last handshake request sent, replayed after a reconnect
	info      transport.Info
	closed    bool
	fatal     error

	reconnects atomic.Int64
}

// Dial opens the first connection with ctx (an error is returned as is)
// and returns a Conn that redials after losses until Close.
func Dial(ctx context.Context, dial DialFunc, opts Options) (*Conn, error) {
	opts.fill()
	first, err := dial(ctx)
	if err != nil {
		return nil, err
	}
	life, stop := context.WithCancel(context.Background())
	c := &Conn{
		dial: dial, opts: opts, life: life, stopLife: stop,
		cur: first, gen: 1, ready: make(chan struct{}),
		pending: make(map[string]uint64), info: first.Info(),
	}
	close(c.ready)
	return c, nil
}

// Info describes the current (or, while reconnecting, the last) connection.
func (c *Conn) Info() transport.Info {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

// Reconnects returns how many times a lost connection was replaced.
func (c *Conn) Reconnects() int64 { return c.reconnects.Load() }

// Connected reports whether a connection is in use right now.
func (c *Conn) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur != nil
}

// ReadMessage returns the next message from the current connection, or a
// JSON-RPC error response for a request whose connection was lost. While
// reconnecting it waits. It returns transport.ErrClosed after Close, and
// the dial error after reconnection was given up (see Permanent).
func (c *Conn) ReadMessage(ctx context.Context) ([]byte, error) {
	for {
		c.mu.Lock()
		if len(c.synth) > 0 {
			m := c.synth[0]
			c.synth[0] = nil
			c.synth = c.synth[1:]
			c.mu.Unlock()
			return m, nil
		}
		if c.closed {
			c.mu.Unlock()
			return nil, transport.ErrClosed
		}
		if c.fatal != nil {
			err := c.fatal
			c.mu.Unlock()
			return nil, err
		}
		cur, gen, ready := c.cur, c.gen, c.ready
		c.mu.Unlock()
		if cur == nil {
			select {
			case <-ready:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		msg, err := cur.ReadMessage(ctx)
		if err == nil {
			c.received(msg)
			return msg, nil
		}
		var tl *transport.TooLargeError
		if (errors.As(err, &tl) && tl.Skipped) || ctx.Err() != nil {
			return nil, err
		}
		c.lost(gen, err)
	}
}

// WriteMessage sends msg on the current connection. While reconnecting it
// waits for the new connection up to Options.WaitTimeout (or ctx), then
// fails with ErrDisconnected.
func (c *Conn) WriteMessage(ctx context.Context, msg []byte) error {
	id, method, isReq := peek(msg)
	var timer *time.Timer
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return transport.ErrClosed
		}
		if c.fatal != nil {
			err := c.fatal
			c.mu.Unlock()
			return err
		}
		cur, gen, ready := c.cur, c.gen, c.ready
		if cur != nil {
			if isReq {
				c.pending[id] = gen
				if method == methodHandshake {
					c.handshake = append(c.handshake[:0:0], msg...)
				}
			}
			c.mu.Unlock()
			err := cur.WriteMessage(ctx, msg)
			if err != nil && isReq {
				c.mu.Lock()
				if g, ok := c.pending[id]; ok && g == gen {
					delete(c.pending, id)
				}
				c.mu.Unlock()
			}
			return err
		}
		c.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(c.opts.WaitTimeout)
			defer timer.Stop()
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrDisconnected, ctx.Err())
		case <-timer.C:
			return fmt.Errorf("%w after waiting %v", ErrDisconnected, c.opts.WaitTimeout)
		}
	}
}

// Close closes the connection and stops reconnecting. Calls in flight and
// later calls fail with transport.ErrClosed.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	cur := c.cur
	c.cur = nil
	if cur == nil && c.fatal == nil {
		close(c.ready) // wake readers and writers waiting for a reconnection
	}
	c.mu.Unlock()
	c.stopLife()
	var err error
	if cur != nil {
		err = cur.Close()
	}
	c.wg.Wait()
	return err
}

// lost retires the connection of generation gen after a read error: its
// pending requests get error responses and reconnection starts.
func (c *Conn) lost(gen uint64, cause error) {
	c.mu.Lock()
	if c.closed || c.cur == nil || c.gen != gen {
		c.mu.Unlock()
		return
	}
	old := c.cur
	c.cur = nil
	c.ready = make(chan struct{})
	failed := 0
	for id, g := range c.pending {
		if g == gen {
			c.synth = append(c.synth, lostResponse(id))
			delete(c.pending, id)
			failed++
		}
	}
	c.wg.Add(1)
	c.mu.Unlock()
	_ = old.Close()
	c.opts.Logger.Warn("connection to the harness lost; reconnecting",
		"transport", c.info.Transport, "remote", c.info.Remote, "failed_requests", failed, "cause", cause.Error())
	go c.reconnect()
}

// reconnect dials with capped, jittered exponential backoff until it gets
// a connection, the Conn is closed, or the dial fails permanently.
func (c *Conn) reconnect() {
	defer c.wg.Done()
	wait := c.opts.MinBackoff
	for attempt := 1; ; attempt++ {
		// Jitter: between 80% and 120% of the nominal wait.
		d := wait - wait/5 + time.Duration(rand.Int64N(int64(wait)/5*2+1))
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-c.life.Done():
			t.Stop()
			return
		}
		conn, err := c.attempt()
		if err == nil {
			c.mu.Lock()
			if c.closed {
				c.mu.Unlock()
				_ = conn.Close()
				return
			}
			c.cur = conn
			c.gen++
			c.info = conn.Info()
			close(c.ready)
			c.mu.Unlock()
			c.reconnects.Add(1)
			c.opts.Logger.Info("reconnected to the harness", "transport", c.info.Transport, "remote", c.info.Remote, "attempts", attempt)
			return
		}
		if c.life.Err() != nil {
			return
		}
		if IsPermanent(err) {
			c.mu.Lock()
			if !c.closed {
				c.fatal = fmt.Errorf("reconnect: giving up: %w", err)
				close(c.ready)
			}
			c.mu.Unlock()
			c.opts.Logger.Error("cannot reconnect to the harness; giving up", "transport", c.info.Transport, "error", err.Error())
			return
		}
		c.opts.Logger.Warn("reconnection attempt failed", "transport", c.info.Transport, "attempt", attempt, "next_in", min(2*wait, c.opts.MaxBackoff), "error", err.Error())
		wait = min(2*wait, c.opts.MaxBackoff)
	}
}

// attempt dials once and replays the last handshake on the new connection.
func (c *Conn) attempt() (transport.Conn, error) {
	ctx, cancel := context.WithTimeout(c.life, c.opts.DialTimeout)
	defer cancel()
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	hs := c.handshake
	c.mu.Unlock()
	if hs != nil {
		if err := replayHandshake(ctx, conn, hs, c.reconnects.Load()+1); err != nil {
			_ = conn.Close()
			return nil, err
		}
	}
	return conn, nil
}
