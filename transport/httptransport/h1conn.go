package httptransport

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-go/ahp/transport"
)

// Tuning of h1Conn.
const (
	h1WriteTimeout = 30 * time.Second // a harness that does not read a request for this long is dropped
	h1IdleTimeout  = 50 * time.Second // idle connections older than this are not reused (servers close them)
	h1DialTimeout  = 30 * time.Second // when DialOptions.Timeout is 0
)

// h1Conn is the Conn that Dial returns: HTTP/1.1 over a pool of keep-alive
// connections that it manages itself, because a request maps onto a
// connection exactly: the caller writes the request (one system call) and
// returns, and the connection's reader delivers the response when it comes
// (see conn for the semantics, which are the same). Responses are parsed
// by net/http's ReadResponse.
type h1Conn struct {
	addr   string // host:port to dial
	host   string // server name for TLS
	tls    *tls.Config
	prefix []byte // request line and fixed headers, up to "Content-Length: "
	max    int
	dialTO time.Duration // bounds connecting and the TLS handshake
	info   transport.Info

	ctx    context.Context
	cancel context.CancelFunc
	in     chan []byte
	slots  chan struct{}

	mu     sync.Mutex
	idle   []*h1Link
	all    map[*h1Link]struct{}
	closed bool
	wg     sync.WaitGroup
	once   sync.Once
}

// h1Link is one TCP (or TLS) connection of the pool.
type h1Link struct {
	c      *h1Conn
	nc     net.Conn
	br     *bufio.Reader
	bw     *bufio.Writer
	idleAt time.Time

	// refs counts the parties still using the link for the current job:
	// the writer until its flush returns, the reader until the response is
	// read. The last one returns the link to the idle pool.
	refs atomic.Int32

	mu   sync.Mutex
	job  *h1Job // the request whose response is awaited
	dead bool
}

// release drops one reference; the last makes the link idle again.
func (l *h1Link) release() {
	if l.refs.Add(-1) == 0 {
		l.c.putIdle(l)
	}
}

// h1Job is one message sent on a link. Whoever claims it first (the
// writer, when writing failed; the link's reader, when a response or a
// failure came) finishes it: frees its slot and reports its outcome.
type h1Job struct {
	id      []byte     // request id; nil for a notification
	done    chan error // notifications: the outcome; nil for requests
	claimed atomic.Bool
}

func (j *h1Job) claim() bool { return j.claimed.CompareAndSwap(false, true) }

func newH1Conn(u *url.URL, o transport.DialOptions) (*h1Conn, error) {
	max := o.MaxMessageBytes
	if max <= 0 {
		max = transport.DefaultMaxMessageBytes
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	c := &h1Conn{
		addr:  net.JoinHostPort(u.Hostname(), port),
		host:  u.Hostname(),
		max:   max,
		info:  transport.Info{Transport: u.Scheme, Remote: u.Host},
		in:    make(chan []byte, DefaultMaxInFlight),
		slots: make(chan struct{}, DefaultMaxInFlight),
		all:   map[*h1Link]struct{}{},
	}
	c.dialTO = o.Timeout
	if c.dialTO <= 0 {
		c.dialTO = h1DialTimeout
	}
	if u.Scheme == "https" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if o.TLS != nil {
			cfg = o.TLS.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = c.host
		}
		cfg.NextProtos = []string{"http/1.1"}
		c.tls = cfg
	}
	prefix, err := requestPrefix(u, o)
	if err != nil {
		return nil, err
	}
	c.prefix = prefix
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// requestPrefix renders the request line and the headers every request
// carries, refusing values that could split a header.
func requestPrefix(u *url.URL, o transport.DialOptions) ([]byte, error) {
	b := []byte("POST " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\n")
	add := func(k, v string) error {
		if !validHeader(k, v) {
			return fmt.Errorf("http: header %q has a character not allowed in HTTP headers", k)
		}
		b = append(b, k...)
		b = append(b, ": "...)
		b = append(b, v...)
		b = append(b, "\r\n"...)
		return nil
	}
	ua := "ahp-go"
	for k, vs := range o.Header {
		ck := http.CanonicalHeaderKey(k)
		switch ck {
		case "Host", "Content-Length", "Content-Type", "Transfer-Encoding", "Connection":
			continue // ours
		case "User-Agent":
			if len(vs) > 0 {
				ua = vs[0]
			}
			continue
		}
		for _, v := range vs {
			if err := add(ck, v); err != nil {
				return nil, err
			}
		}
	}
	if err := add("User-Agent", ua); err != nil {
		return nil, err
	}
	if o.APIKey != "" {
		if err := add("X-Api-Key", o.APIKey); err != nil {
			return nil, err
		}
	}
	if o.BearerToken != "" {
		if err := add("Authorization", "Bearer "+o.BearerToken); err != nil {
			return nil, err
		}
	}
	b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
	return b, nil
}

func validHeader(k, v string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		ch := k[i]
		if ch <= ' ' || ch >= 0x7f || ch == ':' {
			return false
		}
	}
	for i := 0; i < len(v); i++ {
		if ch := v[i]; ch == '\r' || ch == '\n' || ch == 0 {
			return false
		}
	}
	return true
}

func (c *h1Conn) Info() transport.Info { return c.info }

// ReadMessage returns the next response body, in completion order.
func (c *h1Conn) ReadMessage(ctx context.Context) ([]byte, error) {
	select {
	case b := <-c.in:
		return b, nil
	case <-c.ctx.Done():
		return nil, transport.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// WriteMessage sends msg on an idle (or new) connection. A request returns
// once written; a notification waits for the harness's 204.
func (c *h1Conn) WriteMessage(ctx context.Context, msg []byte) error {
	if c.ctx.Err() != nil {
		return transport.ErrClosed
	}
	id, request := classify(msg)
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return transport.ErrClosed
	}
	j := &h1Job{}
	if request {
		j.id = append([]byte(nil), id...)
	} else {
		j.done = make(chan error, 1)
	}
	done := j.done
	if err := c.send(ctx, j, msg); err != nil {
		<-c.slots
		return err
	}
	if done == nil {
		return nil
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return transport.ErrClosed
	}
}

// send writes msg for j, retrying once on a fresh connection when writing
// on a reused one fails (the harness may have closed it while idle). An
// error means the job is the caller's to finish; nil means it was written,
// or that the connection's reader finished it.
func (c *h1Conn) send(ctx context.Context, j *h1Job, msg []byte) error {
	for attempt := 0; ; attempt++ {
		l, reused, err := c.link(ctx)
		if err != nil {
			return fmt.Errorf("http: %w", err)
		}
		err = l.write(j, msg)
		if err == nil {
			return nil
		}
		if !j.claim() {
			return nil // the reader finished it (for example with the harness's error status)
		}
		if !reused || attempt > 0 {
			return fmt.Errorf("http: %w", err)
		}
		j = &h1Job{id: j.id, done: j.done} // the old link may still refer to the claimed job
	}
}

// link returns an idle connection, or dials one.
func (c *h1Conn) link(ctx context.Context) (*h1Link, bool, error) {
	c.mu.Lock()
	for len(c.idle) > 0 {
		l := c.idle[len(c.idle)-1]
		c.idle = c.idle[:len(c.idle)-1]
		l.mu.Lock()
		dead := l.dead
		l.mu.Unlock()
		if dead || time.Since(l.idleAt) > h1IdleTimeout {
			_ = l.nc.Close() // its reader removes it
			continue
		}
		c.mu.Unlock()
		return l, true, nil
	}
	c.mu.Unlock()
	l, err := c.dial(ctx)
	return l, false, err
}

func (c *h1Conn) dial(ctx context.Context) (*h1Link, error) {
	ctx, cancel := context.WithTimeout(ctx, c.dialTO)
	defer cancel()
	d := net.Dialer{KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return nil, err
	}
	if c.tls != nil {
		tc := tls.Client(nc, c.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			return nil, err
		}
		nc = tc
	}
	l := &h1Link{c: c, nc: nc, br: bufio.NewReaderSize(nc, 8<<10), bw: bufio.NewWriterSize(nc, 8<<10)}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = nc.Close()
		return nil, transport.ErrClosed
	}
	c.all[l] = struct{}{}
	c.wg.Add(1)
	c.mu.Unlock()
	go l.readLoop()
	return l, nil
}

// write sends one request on l, which the caller holds exclusively.
func (l *h1Link) write(j *h1Job, msg []byte) error {
	l.mu.Lock()
	if l.dead {
		l.mu.Unlock()
		return net.ErrClosed
	}
	l.job = j
	l.refs.Store(2)
	l.mu.Unlock()
	_ = l.nc.SetWriteDeadline(time.Now().Add(h1WriteTimeout))
	_, _ = l.bw.Write(l.c.prefix)
	var num [20]byte
	_, _ = l.bw.Write(strconv.AppendInt(num[:0], int64(len(msg)), 10))
	_, _ = l.bw.WriteString("\r\n\r\n")
	_, _ = l.bw.Write(msg)
	err := l.bw.Flush()
	if err == nil {
		l.release()
		return nil
	}
	l.mu.Lock()
	if l.job == j {
		l.job = nil
	}
	l.dead = true
	l.mu.Unlock()
	_ = l.nc.Close()
	return err
}

// readLoop reads the response to each request written on l and delivers
// it; it ends when the connection fails or is closed.
func (l *h1Link) readLoop() {
	c := l.c
	defer c.wg.Done()
	defer l.close()
	for {
		// Wait for the first byte (or for the harness closing an idle
		// connection) before looking at the job: the writer sets the job
		// before it writes, so a response implies a job.
		if _, err := l.br.Peek(1); err != nil {
			l.fail(err)
			return
		}
		l.mu.Lock()
		j := l.job
		l.mu.Unlock()
		if j == nil {
			l.fail(fmt.Errorf("http: unsolicited response from %s", c.addr))
			return
		}
		body, reuse, err := l.readResponse()
		failed := err != nil && !answered(err)
		l.mu.Lock()
		if l.job == j {
			l.job = nil
		}
		if failed || !reuse {
			l.dead = true
		}
		l.mu.Unlock()
		if failed {
			c.abandon(j, err) // no response: the caller's timeout and fail mode decide
			return
		}
		if j.claim() {
			c.finish(j, body, err)
		}
		if !reuse {
			return
		}
		l.release()
	}
}

// readResponse reads one response. reuse is false when the connection
// cannot carry another request.
func (l *h1Link) readResponse() (body []byte, reuse bool, err error) {
	resp, err := http.ReadResponse(l.br, nil)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	reuse = !resp.Close
	switch resp.StatusCode {
	case http.StatusOK:
		if resp.ContentLength > int64(l.c.max) {
			return nil, false, &transport.TooLargeError{Limit: l.c.max, Skipped: true}
		}
		var b []byte
		if resp.ContentLength >= 0 {
			b = make([]byte, resp.ContentLength)
			if _, err := io.ReadFull(resp.Body, b); err != nil {
				return nil, false, fmt.Errorf("http: reading response: %w", err)
			}
		} else {
			b, err = io.ReadAll(io.LimitReader(resp.Body, int64(l.c.max)+1))
			if err != nil {
				return nil, false, fmt.Errorf("http: reading response: %w", err)
			}
			if len(b) > l.c.max {
				return nil, false, &transport.TooLargeError{Limit: l.c.max, Skipped: true}
			}
		}
		return b, reuse, nil
	case http.StatusNoContent, http.StatusAccepted:
		return nil, reuse && drain(resp.Body), nil
	}
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	reuse = reuse && drain(resp.Body)
	return nil, reuse, newStatusError(resp, snippet)
}

// drain reads what is left of a small body and reports whether the
// connection is positioned at the next response.
func drain(r io.Reader) bool {
	n, err := io.Copy(io.Discard, io.LimitReader(r, 64<<10))
	return err == nil && n < 64<<10
}

// finish delivers the outcome of a claimed job and frees its slot.
func (c *h1Conn) finish(j *h1Job, body []byte, err error) {
	defer func() { <-c.slots }()
	if body != nil {
		_ = c.deliver(body)
	}
	if j.done != nil {
		j.done <- err
		return
	}
	if err != nil {
		_ = c.deliver(errorResponse(j.id, err))
	}
}

// abandon finishes a job whose connection failed before its response: a
// request gets a -32001 transport error at once (the connection reset or
// closed; the client's fail mode decides, as when a stream connection is
// lost, rather than its timeout), a notification gets the error.
func (c *h1Conn) abandon(j *h1Job, err error) {
	if !j.claim() {
		return
	}
	defer func() { <-c.slots }()
	if j.done != nil {
		if c.ctx.Err() != nil {
			err = transport.ErrClosed
		} else {
			err = fmt.Errorf("http: %w", err)
		}
		j.done <- err
		return
	}
	if c.ctx.Err() == nil {
		_ = c.deliver(errorResponse(j.id, fmt.Errorf("http: connection to the harness lost before its answer: %w", err)))
	}
}

func (c *h1Conn) deliver(body []byte) error {
	select {
	case c.in <- body:
		return nil
	case <-c.ctx.Done():
		return transport.ErrClosed
	}
}

// fail marks l dead and ends the job waiting on it, if any: a TLS alert
// is the harness refusing us (answered at once), anything else abandons
// the job.
func (l *h1Link) fail(err error) {
	l.mu.Lock()
	j := l.job
	l.job = nil
	l.dead = true
	l.mu.Unlock()
	switch {
	case j == nil:
	case answered(err):
		if j.claim() {
			l.c.finish(j, nil, err)
		}
	default:
		l.c.abandon(j, err)
	}
}

func (c *h1Conn) putIdle(l *h1Link) {
	l.mu.Lock()
	dead := l.dead
	l.mu.Unlock()
	if dead {
		return
	}
	l.idleAt = time.Now()
	c.mu.Lock()
	if !c.closed {
		c.idle = append(c.idle, l)
	}
	c.mu.Unlock()
}

func (l *h1Link) close() {
	_ = l.nc.Close()
	c := l.c
	c.mu.Lock()
	delete(c.all, l)
	for i, x := range c.idle {
		if x == l {
			c.idle = append(c.idle[:i], c.idle[i+1:]...)
			break
		}
	}
	c.mu.Unlock()
}

// Close closes every connection and waits for their readers.
func (c *h1Conn) Close() error {
	c.once.Do(func() {
		c.mu.Lock()
		c.closed = true
		links := make([]*h1Link, 0, len(c.all))
		for l := range c.all {
			links = append(links, l)
		}
		c.idle = nil
		c.mu.Unlock()
		c.cancel()
		for _, l := range links {
			_ = l.nc.Close()
		}
		c.wg.Wait()
	})
	return nil
}
