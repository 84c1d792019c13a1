package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
)

// ErrNoHarness is wrapped by the error of a Failover call that no endpoint
// answered.
var ErrNoHarness = errors.New("client: no harness endpoint answered")

// errConnLost marks the failure of calls whose connection was lost after
// they were written: the harness may or may not have seen them.
var errConnLost = errors.New("connection lost")

// notSentError is the failure of a call that never left the client (the
// connection was already lost, or writing failed): no harness saw it.
type notSentError struct{ err error }

func (e *notSentError) Error() string { return e.err.Error() }
func (e *notSentError) Unwrap() error { return e.err }

// noHarnessError lists what each endpoint tried by one call answered.
type noHarnessError struct{ errs []error }

func (e *noHarnessError) Error() string {
	var b strings.Builder
	b.WriteString(ErrNoHarness.Error())
	for i, err := range e.errs {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

func (e *noHarnessError) Unwrap() []error { return append([]error{ErrNoHarness}, e.errs...) }

// Failover is a client of a harness run as several replicas: it talks to
// one endpoint at a time and moves to the next one, in the order given,
// when the current one cannot be reached or its connection is lost. It is
// safe for concurrent use.
//
// A call goes to each endpoint at most once. It is sent again to the next
// endpoint only where that is safe:
//
//   - always, when it never left the client (connecting, the handshake or
//     writing failed, or the connection was already known to be lost);
//   - when the connection was lost after it was written but before the
//     answer came, only for calls that the harness may see twice: the
//     handshake, ping, queries and blocking events (pre_action, pre_prompt
//     and the typed blocking events). The agent has not acted on them yet;
//     the next replica decides again, and both attempts may be in the
//     audit log under the same event. Notifications and batches are not
//     sent again (a replica may have counted them already).
//
// A timeout, a cancelled context or an answer from the harness (even a
// JSON-RPC error) is never retried: the harness may still be working on
// the call (for example waiting for a human's approval), and a Timeout
// bounds each call. When no endpoint answers a blocking generic event,
// Options.FailMode applies as for a Client: with FailClosed, the default,
// the answer is a block that names every endpoint's failure.
type Failover struct {
	addrs []string
	dopts transport.DialOptions
	opts  Options // of the per-endpoint clients (FailError)
	mode  FailMode

	mu     sync.Mutex
	cur    *Client
	gen    uint64 // incremented at every new connection
	idx    int    // endpoint of cur, or the next to try
	hs     *protocol.HandshakeRequest
	closed bool
}

// DialAny connects to the first endpoint of addrs that answers (see
// transport.Dial for the address forms) and returns a Failover over all of
// them. It does not perform the handshake. It fails, listing each
// endpoint's error, when none can be reached.
func DialAny(ctx context.Context, addrs []string, dopts transport.DialOptions, opts Options) (*Failover, error) {
	if len(addrs) == 0 {
		return nil, errors.New("client: DialAny needs at least one address")
	}
	f := &Failover{addrs: append([]string(nil), addrs...), dopts: dopts, mode: opts.FailMode}
	f.opts = opts
	f.opts.FailMode = FailError
	err := f.do(ctx, true, func(*Client) error { return nil })
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Addr returns the address of the endpoint in use, or "" when none is
// connected.
func (f *Failover) Addr() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur == nil {
		return ""
	}
	return f.addrs[f.idx]
}

// Close closes the connection in use; later calls fail with ErrClosed.
func (f *Failover) Close() error {
	f.mu.Lock()
	c := f.cur
	f.cur, f.closed = nil, true
	f.mu.Unlock()
	if c != nil {
		return c.Close()
	}
	return nil
}

// current returns the connection in use, connecting (and repeating the
// handshake) to the endpoint whose turn it is when there is none. A failed
// attempt moves the turn to the next endpoint.
func (f *Failover) current(ctx context.Context) (*Client, uint64, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, 0, "", ErrClosed
	}
	addr := f.addrs[f.idx]
	if f.cur != nil {
		return f.cur, f.gen, addr, nil
	}
	c, err := Dial(ctx, addr, f.dopts, f.opts)
	if err == nil && f.hs != nil {
		if _, err = c.HandshakeWith(ctx, f.hs); err != nil {
			_ = c.Close()
			err = fmt.Errorf("handshake: %w", err)
		}
	}
	if err != nil {
		f.idx = (f.idx + 1) % len(f.addrs)
		return nil, 0, addr, err
	}
	f.gen++
	f.cur = c
	return c, f.gen, addr, nil
}

// drop abandons the connection of generation gen (if it is still the one
// in use) and gives the turn to the next endpoint.
func (f *Failover) drop(gen uint64) {
	f.mu.Lock()
	var c *Client
	if f.cur != nil && f.gen == gen {
		c, f.cur = f.cur, nil
		f.idx = (f.idx + 1) % len(f.addrs)
	}
	f.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// do runs op on the endpoint in use and, when the harness could not be
// reached, on the next ones (each at most once). seenTwiceOK says whether
// op may be sent again after a connection was lost with op written.
func (f *Failover) do(ctx context.Context, seenTwiceOK bool, op func(*Client) error) error {
	var errs []error
	for range len(f.addrs) {
		c, gen, addr, err := f.current(ctx)
		if err == nil {
			err = op(c)
			if err == nil || !f.retryable(ctx, err, seenTwiceOK) {
				return err
			}
			f.drop(gen)
		} else if errors.Is(err, ErrClosed) || ctx.Err() != nil {
			return err
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
	}
	return &noHarnessError{errs: errs}
}

// retryable reports whether err, the failure of a call, lets the call go
// to the next endpoint.
func (f *Failover) retryable(ctx context.Context, err error, seenTwiceOK bool) bool {
	if ctx.Err() != nil || errors.Is(err, ErrTimeout) {
		return false
	}
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if closed {
		return false
	}
	var ns *notSentError
	if errors.As(err, &ns) {
		return true
	}
	if !seenTwiceOK {
		return false
	}
	// Lost after writing: by the read loop, by a concurrent call that
	// abandoned this connection (ErrClosed), or reported by a network
	// transport as a JSON-RPC error of its own.
	if errors.Is(err, errConnLost) || errors.Is(err, ErrClosed) {
		return true
	}
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeTransportError
}

// Handshake negotiates the protocol with the identity in Options; the same
// handshake is repeated on every endpoint the Failover moves to.
func (f *Failover) Handshake(ctx context.Context) (*protocol.HandshakeResponse, error) {
	return f.HandshakeWith(ctx, handshakeRequest(f.opts))
}

// HandshakeWith sends the given handshake request, and sends it again on
// every endpoint the Failover moves to.
func (f *Failover) HandshakeWith(ctx context.Context, req *protocol.HandshakeRequest) (*protocol.HandshakeResponse, error) {
	f.mu.Lock()
	f.hs = req
	f.mu.Unlock()
	var resp *protocol.HandshakeResponse
	err := f.do(ctx, true, func(c *Client) error {
		if r := c.HandshakeResponse(); r != nil {
			resp = r // this connection was made after f.hs was set
			return nil
		}
		var err error
		resp, err = c.HandshakeWith(ctx, req)
		return err
	})
	return resp, err
}

// NewEvent builds an event of type t with the Failover's session and agent
// ids, as Client.NewEvent does.
func (f *Failover) NewEvent(t protocol.EventType, payload any) (*protocol.Event, error) {
	return (&Client{opts: f.opts}).NewEvent(t, payload)
}

// Event sends a generic event built from the Failover's identity (see
// Client.Event).
func (f *Failover) Event(ctx context.Context, t protocol.EventType, payload any) (protocol.Decision, error) {
	ev, err := f.NewEvent(t, payload)
	if err != nil {
		return protocol.Decision{}, err
	}
	return f.SendEvent(ctx, ev)
}

// SendEvent sends a full event as given (see Client.SendEvent). A blocking
// event that no endpoint answers yields what Options.FailMode says: a
// block by default.
func (f *Failover) SendEvent(ctx context.Context, ev *protocol.Event) (protocol.Decision, error) {
	blocking := ev.EventType.Blocking()
	var d protocol.Decision
	err := f.do(ctx, blocking, func(c *Client) error {
		var err error
		d, err = c.SendEvent(ctx, ev)
		return err
	})
	if err == nil {
		return d, nil
	}
	if !blocking || errors.Is(err, ErrNoHandshake) || errors.Is(err, ErrClosed) {
		return protocol.Decision{}, err
	}
	return failWith(f.mode, err)
}

// Notify sends a fire-and-forget event built from the Failover's identity.
func (f *Failover) Notify(ctx context.Context, t protocol.EventType, payload any) error {
	ev, err := f.NewEvent(t, payload)
	if err != nil {
		return err
	}
	return f.NotifyEvent(ctx, ev)
}

// NotifyEvent sends a full fire-and-forget event. It goes to the next
// endpoint only when it could not be written.
func (f *Failover) NotifyEvent(ctx context.Context, ev *protocol.Event) error {
	return f.do(ctx, false, func(c *Client) error { return c.NotifyEvent(ctx, ev) })
}

// SendTyped sends a full typed event and decodes its decision into out
// (see Client.SendTyped).
func (f *Failover) SendTyped(ctx context.Context, ev *protocol.Event, out any) error {
	return f.do(ctx, true, func(c *Client) error { return c.SendTyped(ctx, ev, out) })
}

// Batch sends events in one ahp/batch request (see Client.Batch). It goes
// to the next endpoint only when it could not be written.
func (f *Failover) Batch(ctx context.Context, events []protocol.Event) ([]protocol.Decision, error) {
	var ds []protocol.Decision
	err := f.do(ctx, false, func(c *Client) error {
		var err error
		ds, err = c.Batch(ctx, events)
		return err
	})
	return ds, err
}

// Query sends ahp/query with the Failover's identity (see Client.Query).
func (f *Failover) Query(ctx context.Context, queryType string, payload any) (*protocol.QueryResponse, error) {
	var qr *protocol.QueryResponse
	err := f.do(ctx, true, func(c *Client) error {
		var err error
		qr, err = c.Query(ctx, queryType, payload)
		return err
	})
	return qr, err
}

// Ping checks that an endpoint answers; it works before the handshake.
func (f *Failover) Ping(ctx context.Context) error {
	return f.do(ctx, true, func(c *Client) error { return c.Ping(ctx) })
}
