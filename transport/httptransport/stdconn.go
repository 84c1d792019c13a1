package httptransport

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"

	"github.com/ahp-go/ahp/transport"
)

// conn is the Conn of NewConn: HTTP POSTs through a caller's
// *http.Client. Its semantics are those of every Conn of this package.
//
// A request is written like a message on a socket: WriteMessage returns
// once the POST has been sent (or failed to be sent: the harness is
// unreachable, TLS failed), and the response body arrives later through
// ReadMessage, in completion order. So the caller's own timeout applies
// as on every other transport, and concurrent requests travel on
// concurrent keep-alive connections (at most DefaultMaxInFlight). An HTTP
// error status (401, 403, 413, 503, ...) is turned into a JSON-RPC error
// response with the request's id and code CodeTransportError, so that the
// caller learns of the refusal at once. A connection that breaks after the
// request left yields no response: the caller's timeout and fail mode
// decide, as when a stream connection is lost.
//
// Notifications are POSTed synchronously: WriteMessage returns when the
// harness has answered 204, so notifications from one goroutine arrive in
// order and an HTTP failure is returned to the caller.
type conn struct {
	url    string
	hc     *http.Client
	header http.Header
	max    int
	info   transport.Info

	ctx       context.Context // cancelled by Close: ends every POST
	cancel    context.CancelFunc
	in        chan []byte
	slots     chan struct{}
	jobs      chan *job // idle workers wait here
	mu        sync.Mutex
	closed    bool // set by Close under mu: no new workers after it
	wg        sync.WaitGroup
	closeOnce sync.Once
}

func newConn(u *url.URL, hc *http.Client, o transport.DialOptions) *conn {
	max := o.MaxMessageBytes
	if max <= 0 {
		max = transport.DefaultMaxMessageBytes
	}
	h := make(http.Header, len(o.Header)+4)
	for k, v := range o.Header {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
	}
	h["Content-Type"] = []string{"application/json"}
	if h.Get("User-Agent") == "" {
		h["User-Agent"] = []string{"ahp-go"}
	}
	if o.APIKey != "" {
		h["X-Api-Key"] = []string{o.APIKey}
	}
	if o.BearerToken != "" {
		h["Authorization"] = []string{"Bearer " + o.BearerToken}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &conn{
		url:    u.String(),
		hc:     hc,
		header: h,
		max:    max,
		info:   transport.Info{Transport: u.Scheme, Remote: u.Host},
		ctx:    ctx,
		cancel: cancel,
		in:     make(chan []byte, DefaultMaxInFlight),
		slots:  make(chan struct{}, DefaultMaxInFlight),
		jobs:   make(chan *job),
	}
}

func (c *conn) Info() transport.Info { return c.info }

// ReadMessage returns the next response body, in the order the POSTs
// completed.
func (c *conn) ReadMessage(ctx context.Context) ([]byte, error) {
	select {
	case b := <-c.in:
		return b, nil
	case <-c.ctx.Done():
		return nil, transport.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// WriteMessage POSTs msg: a request in the background, a notification
// synchronously (see conn).
func (c *conn) WriteMessage(ctx context.Context, msg []byte) error {
	if c.ctx.Err() != nil {
		return transport.ErrClosed
	}
	id, request := classify(msg)
	if !request {
		// Notifications (and anything the harness should judge itself).
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(c.ctx, cancel)
		defer stop()
		body, err := c.post(rctx, msg)
		if err != nil {
			return err
		}
		if body != nil {
			return c.deliver(ctx, body)
		}
		return nil
	}
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return transport.ErrClosed
	}
	// The caller may reuse msg once we return.
	j := &job{msg: append([]byte(nil), msg...), id: append([]byte(nil), id...), sent: make(chan error, 1)}
	j.trace.WroteRequest = j.wrote
	if !c.dispatch(j) {
		<-c.slots
		return transport.ErrClosed
	}
	select {
	case err := <-j.sent:
		if err != nil && !answered(err) {
			return err
		}
		return nil
	case <-ctx.Done():
		// The POST goes on; its answer, if any, is delivered as usual.
		return ctx.Err()
	case <-c.ctx.Done():
		return transport.ErrClosed
	}
}

// job is one request being POSTed.
type job struct {
	msg, id []byte
	sent    chan error // the first outcome: nil once written, or the failure
	trace   httptrace.ClientTrace
}

func (j *job) signal(err error) {
	select {
	case j.sent <- err:
	default: // the first outcome counts
	}
}

func (j *job) wrote(i httptrace.WroteRequestInfo) {
	if i.Err == nil {
		j.signal(nil)
	}
}

// workerIdle is how long a POST worker waits for work before it exits.
const workerIdle = 30 * time.Second

// dispatch hands j to an idle worker or starts one, and reports false
// when the conn is closed. Workers live on between requests so that their
// stacks, grown by net/http, are reused.
func (c *conn) dispatch(j *job) bool {
	select {
	case c.jobs <- j:
		return true
	default:
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go c.worker(j)
	return true
}

func (c *conn) worker(j *job) {
	defer c.wg.Done()
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		c.run(j)
		idle.Reset(workerIdle)
		select {
		case j = <-c.jobs:
		case <-idle.C:
			return
		case <-c.ctx.Done():
			return
		}
	}
}

// run POSTs one request and delivers its answer.
func (c *conn) run(j *job) {
	defer func() { <-c.slots }()
	body, err := c.post(httptrace.WithClientTrace(c.ctx, &j.trace), j.msg)
	j.signal(err)
	switch {
	case err == nil && body != nil:
		_ = c.deliver(c.ctx, body)
	case answered(err):
		_ = c.deliver(c.ctx, errorResponse(j.id, err))
	}
}

func (c *conn) deliver(ctx context.Context, body []byte) error {
	select {
	case c.in <- body:
		return nil
	case <-c.ctx.Done():
		return transport.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// post sends one message and returns the response body (nil for 202/204).
func (c *conn) post(ctx context.Context, msg []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(msg))
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	req.Header = c.requestHeader()
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return c.readBody(resp)
	case http.StatusNoContent, http.StatusAccepted:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return nil, nil
	}
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	return nil, newStatusError(resp, snippet)
}

func (c *conn) readBody(resp *http.Response) ([]byte, error) {
	if resp.ContentLength > int64(c.max) {
		return nil, &transport.TooLargeError{Limit: c.max, Skipped: true}
	}
	var buf []byte
	if resp.ContentLength > 0 {
		buf = make([]byte, resp.ContentLength)
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			return nil, fmt.Errorf("http: reading response: %w", err)
		}
		return buf, nil
	}
	buf, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.max)+1))
	if err != nil {
		return nil, fmt.Errorf("http: reading response: %w", err)
	}
	if len(buf) > c.max {
		return nil, &transport.TooLargeError{Limit: c.max, Skipped: true}
	}
	return buf, nil
}

// requestHeader returns a fresh header map for one request; the value
// slices are shared and never modified.
func (c *conn) requestHeader() http.Header {
	h := make(http.Header, len(c.header))
	for k, v := range c.header {
		h[k] = v[:len(v):len(v)]
	}
	return h
}

// Close cancels the POSTs in flight and waits for their goroutines.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.cancel()
		c.wg.Wait()
	})
	return nil
}
