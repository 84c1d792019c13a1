// Package client is the agent side of AHP 2.4: it performs the handshake,
// sends events, batches and queries to a harness over any transport, and
// matches responses to requests by id so that many goroutines can share
// one Client. It enforces the client rules of the protocol.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
)

// FailMode says what a blocking generic event yields when the harness cannot
// be reached or does not answer in time.
type FailMode int

const (
	// FailClosed (the default) turns the failure into a block decision whose
	// reason says what went wrong; the call returns no error.
	FailClosed FailMode = iota
	// FailOpen turns the failure into an allow decision carrying
	// {"ahp_fail_open": true, "reason": ...} as metadata. Use it only where
	// supervision is not critical.
	FailOpen
	// FailError returns the failure as an error, leaving the choice to the
	// caller.
	FailError
)

// Options configure a Client.
type Options struct {
	// Timeout bounds every wait for a response, on every transport
	// (10 s when 0).
	Timeout time.Duration
	// FailMode applies to Event and SendEvent of generic blocking events.
	FailMode FailMode
	// Agent identity used by Handshake and by the convenience calls.
	SessionID string
	AgentID   string
	Framework string // agent_info.framework ("ahp-go" when empty)
	Version   string // agent_info.version
	// Capabilities announced in the handshake.
	Capabilities []string
}

// Errors returned by the client.
var (
	ErrNoHandshake = errors.New("client: handshake not completed")
	ErrClosed      = errors.New("client: closed")
	ErrTimeout     = errors.New("client: timed out waiting for the harness")
)

// Client talks to one harness over one connection.
type Client struct {
	conn transport.Conn
	opts Options

	nextID    atomic.Uint64
	mu        sync.Mutex
	pending   map[uint64]chan response
	closed    bool
	readErr   error
	done      chan struct{}
	handshake atomic.Pointer[protocol.HandshakeResponse]
	closeOnce sync.Once
}

type response struct {
	result json.RawMessage
	err    error
}

// New returns a Client on conn and starts reading responses. Call
// Handshake before sending events.
func New(conn transport.Conn, opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = time.Duration(protocol.DefaultTimeoutMs) * time.Millisecond
	}
	if opts.Framework == "" {
		opts.Framework = "ahp-go"
	}
	c := &Client{conn: conn, opts: opts, pending: make(map[uint64]chan response), done: make(chan struct{})}
	go c.readLoop()
	return c
}

// Dial connects to addr (see transport.Dial) and returns a Client. It does
// not perform the handshake.
func Dial(ctx context.Context, addr string, dopts transport.DialOptions, opts Options) (*Client, error) {
	conn, err := transport.Dial(ctx, addr, dopts)
	if err != nil {
		return nil, err
	}
	return New(conn, opts), nil
}

// Close closes the connection; calls in flight fail with ErrClosed.
func (c *Client) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		err = c.conn.Close()
		<-c.done
	})
	return err
}

func (c *Client) readLoop() {
	defer close(c.done)
	ctx := context.Background()
	for {
		msg, err := c.conn.ReadMessage(ctx)
		if err != nil {
			var tl *transport.TooLargeError
			if errors.As(err, &tl) && tl.Skipped {
				continue
			}
			c.failAll(err)
			return
		}
		m, err := jsonrpc.Decode(msg)
		var de *jsonrpc.DecodeError
		if err != nil && (!errors.As(err, &de) || de.ID == nil) {
			continue // nothing tells which call this was for
		}
		if err == nil && m.Kind != jsonrpc.KindResponse {
			continue // not a response: nothing waits for it
		}
		rawID := m.ID
		if de != nil {
			rawID = de.ID
		}
		id, ok := parseID(rawID)
		if !ok {
			continue
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch == nil {
			continue // late answer to a call that timed out
		}
		switch {
		case de != nil:
			ch <- response{err: fmt.Errorf("client: invalid response: %s", de.Msg)}
		case m.Error != nil:
			ch <- response{err: m.Error}
		case m.Result == nil:
			ch <- response{err: errors.New("client: response has neither result nor error")}
		default:
			ch <- response{result: m.Result}
		}
	}
}

func parseID(raw json.RawMessage) (uint64, bool) {
	n, err := strconv.ParseUint(string(raw), 10, 64)
	return n, err == nil
}

func (c *Client) failAll(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		err = ErrClosed
	}
	c.readErr = fmt.Errorf("client: connection lost: %w", err)
	for id, ch := range c.pending {
		ch <- response{err: c.readErr}
		delete(c.pending, id)
	}
}

var chanPool = sync.Pool{New: func() any { return make(chan response, 1) }}

// call sends a request and waits for its result.
func (c *Client) call(ctx context.Context, method string, params []byte) (json.RawMessage, error) {
	id := c.nextID.Add(1)
	ch := chanPool.Get().(chan response)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		chanPool.Put(ch)
		return nil, ErrClosed
	}
	if c.readErr != nil {
		err := c.readErr
		c.mu.Unlock()
		chanPool.Put(ch)
		return nil, err
	}
	c.pending[id] = ch
	c.mu.Unlock()

	var idBuf [20]byte
	idRaw := strconv.AppendUint(idBuf[:0], id, 10)
	msg := jsonrpc.AppendRequest(make([]byte, 0, len(params)+64), idRaw, method, params)
	timer := time.NewTimer(c.opts.Timeout)
	defer timer.Stop()
	if err := c.conn.WriteMessage(ctx, msg); err != nil {
		c.forget(id)
		return nil, fmt.Errorf("client: send: %w", err)
	}
	select {
	case r := <-ch:
		chanPool.Put(ch)
		return r.result, r.err
	case <-timer.C:
		c.forget(id)
		return nil, ErrTimeout
	case <-ctx.Done():
		c.forget(id)
		return nil, ctx.Err()
	}
}

// forget drops a pending call. The channel is not reused: a late response
// may still be sent to it.
func (c *Client) forget(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// notify sends a notification.
func (c *Client) notify(ctx context.Context, method string, params []byte) error {
	c.mu.Lock()
	closed, rerr := c.closed, c.readErr
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if rerr != nil {
		return rerr
	}
	msg := jsonrpc.AppendRequest(make([]byte, 0, len(params)+48), nil, method, params)
	if err := c.conn.WriteMessage(ctx, msg); err != nil {
		return fmt.Errorf("client: send: %w", err)
	}
	return nil
}

// Ping checks that the harness answers; it works before the handshake.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.call(ctx, jsonrpc.MethodPing, []byte("{}"))
	return err
}
