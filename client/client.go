// Package client is the agent side of AHP 2.4: it performs the handshake,
// sends events, batches and queries to a harness over any transport, and
// matches responses to requests by id so that many goroutines can share
// one Client. It enforces the client rules of the protocol.
//
// Request ids are JSON strings of decimal digits ("1", "2", ...): the
// servers of the a3s-ahp 2.4 crate read string ids only. An answer is
// matched whether the harness echoes its id as that string or as a number.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
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
	said      *jsonrpc.Error // the last error the harness sent for no call (id null)
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
		if de == nil && m.Error != nil && (len(rawID) == 0 || string(rawID) == "null") {
			// An error about the connection rather than a call (the
			// harness at its connection limit, a message it could not
			// read): told with the loss of the connection that follows.
			c.mu.Lock()
			c.said = boundError(m.Error)
			c.mu.Unlock()
			continue
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

// parseID reads the id of a response as the number of the call it answers.
// The client sends the id as a JSON string of decimal digits ("7"); a
// harness may write it back as sent, escaped differently ("\u0037") or
// turned into a JSON number (7, 7.0): all of these match. Anything else
// matches no call.
func parseID(raw json.RawMessage) (uint64, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	if raw[0] != '"' {
		if n, ok := parseDigits(raw); ok {
			return n, true
		}
		// A number written in another form, such as 7.0 or 7e0, by a
		// harness that decoded the id as a float.
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f < 1 || f > 1<<53 || f != math.Trunc(f) {
			return 0, false
		}
		return uint64(f), true
	}
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return 0, false
	}
	digits := raw[1 : len(raw)-1]
	if bytes.IndexByte(digits, '\\') >= 0 {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, false
		}
		digits = []byte(s)
	}
	return parseDigits(digits)
}

// parseDigits reads a non-empty run of ASCII decimal digits that fits in a
// uint64, without allocating.
func parseDigits(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

func (c *Client) failAll(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		err = ErrClosed
	}
	if c.said != nil && !c.closed {
		c.readErr = fmt.Errorf("client: %w: the harness said %w; then: %w", errConnLost, c.said, err)
	} else {
		c.readErr = fmt.Errorf("client: %w: %w", errConnLost, err)
	}
	for id, ch := range c.pending {
		ch <- response{err: c.readErr}
		delete(c.pending, id)
	}
}

// sendError describes a failed write. A harness that refuses a connection
// (at its connection limit, say) writes why and closes it, and the write
// can fail before that answer is read: it is waited for, briefly, and told.
func (c *Client) sendError(err error) error {
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
	}
	c.mu.Lock()
	said := c.said
	c.mu.Unlock()
	if said != nil {
		return fmt.Errorf("client: send: %w; the harness said %w", err, said)
	}
	return fmt.Errorf("client: send: %w", err)
}

// maxSaidBytes bounds the message of a connection error the harness sent
// that the client repeats in its own errors.
const maxSaidBytes = 512

// boundError returns e with its message cut to maxSaidBytes and without
// its data.
func boundError(e *jsonrpc.Error) *jsonrpc.Error {
	msg := e.Message
	if len(msg) > maxSaidBytes {
		msg = strings.ToValidUTF8(msg[:maxSaidBytes], "") + "…"
	}
	return &jsonrpc.Error{Code: e.Code, Message: msg}
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
		return nil, &notSentError{err}
	}
	c.pending[id] = ch
	c.mu.Unlock()

	// The id goes out as a JSON string of decimal digits: every JSON-RPC
	// peer accepts it, and the a3s-ahp 2.4 crate's servers accept nothing
	// else (they drop a request with a number id without answering).
	var idBuf [22]byte
	idRaw := append(strconv.AppendUint(append(idBuf[:0], '"'), id, 10), '"')
	msg := jsonrpc.AppendRequest(make([]byte, 0, len(params)+64), idRaw, method, params)
	timer := time.NewTimer(c.opts.Timeout)
	defer timer.Stop()
	if err := c.conn.WriteMessage(ctx, msg); err != nil {
		c.forget(id)
		return nil, &notSentError{c.sendError(err)}
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
		return &notSentError{rerr}
	}
	msg := jsonrpc.AppendRequest(make([]byte, 0, len(params)+48), nil, method, params)
	if err := c.conn.WriteMessage(ctx, msg); err != nil {
		return &notSentError{fmt.Errorf("client: send: %w", err)}
	}
	return nil
}

// Ping checks that the harness answers; it works before the handshake.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.call(ctx, jsonrpc.MethodPing, []byte("{}"))
	return err
}
