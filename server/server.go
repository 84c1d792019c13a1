// Package server dispatches AHP 2.4 messages to a Handler over any
// transport. It enforces the server rules of the protocol (depth limit,
// request vs notification, run contract validation, batch limits, error
// codes) so that handlers see only well-formed events.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
)

// Options configure a Server. The zero value is usable: it announces the
// 2.4 defaults.
type Options struct {
	Name         string   // harness name in the handshake ("ahp" when empty)
	Version      string   // harness version in the handshake
	Capabilities []string // announced capabilities (protocol.DefaultCapabilities when nil)

	TimeoutMs uint64 // announced client timeout (protocol.DefaultTimeoutMs when 0)
	BatchSize int    // most events in one batch (protocol.DefaultBatchSize when 0)
	MaxDepth  uint32 // deepest allowed event (protocol.DefaultMaxDepth when 0)

	MaxMessageBytes int           // largest message read (transport.DefaultMaxMessageBytes when 0)
	MaxInFlight     int           // concurrent requests per connection (256 when 0)
	HandlerTimeout  time.Duration // deadline for one handler call (none when 0)

	Logger *slog.Logger // where refusals and failures are logged (discarded when nil)
}

// Server serves one Handler on any number of connections.
type Server struct {
	h       Handler
	opts    Options
	log     *slog.Logger
	hsResp  protocol.HandshakeResponse
	hsBytes []byte
	rejObs  RejectionObserver
	hsObs   HandshakeHandler
	connObs ConnObserver
	hsSeq   atomic.Uint64 // numbers the session ids given to handshakes without one
	quiet   quietWatcher  // moves the readers of quiet connections to small stacks
	moves   atomic.Int64  // readers moved so far
	refused refusedLog    // rate of "notification refused" log lines
}

// New returns a Server for h.
func New(h Handler, opts Options) *Server {
	if opts.Name == "" {
		opts.Name = "ahp"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Capabilities == nil {
		opts.Capabilities = protocol.DefaultCapabilities
	}
	if opts.TimeoutMs == 0 {
		opts.TimeoutMs = protocol.DefaultTimeoutMs
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = protocol.DefaultBatchSize
	}
	if opts.MaxDepth == 0 {
		opts.MaxDepth = protocol.DefaultMaxDepth
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = transport.DefaultMaxMessageBytes
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 256
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{h: h, opts: opts, log: log}
	s.quiet.every = quietAfter
	s.rejObs, _ = h.(RejectionObserver)
	s.hsObs, _ = h.(HandshakeHandler)
	s.connObs, _ = h.(ConnObserver)
	timeout, batch, depth := opts.TimeoutMs, uint64(opts.BatchSize), opts.MaxDepth
	s.hsResp = protocol.HandshakeResponse{
		ProtocolVersion: protocol.Version,
		HarnessInfo:     protocol.HarnessInfo{Name: opts.Name, Version: opts.Version, Capabilities: opts.Capabilities},
		Config:          &protocol.HarnessConfig{TimeoutMs: &timeout, BatchSize: &batch, MaxDepth: &depth},
	}
	s.hsBytes, _ = json.Marshal(s.hsResp)
	return s
}

// Options returns the effective options (defaults filled in).
func (s *Server) Options() Options { return s.opts }

// Serve accepts connections from l and serves each until ctx is done or l
// is closed. It closes l when ctx is done, then waits for the connections
// it started to finish.
func (s *Server) Serve(ctx context.Context, l transport.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		_ = l.Close()
	}()
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, transport.ErrClosed) {
				return nil
			}
			s.log.Warn("accept failed", "error", err)
			select {
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		conns.Add(1)
		// No goroutine waits for the connection: its last worker ends it
		// (an idle connection costs one small goroutine, see quiet.go).
		s.startConn(ctx, c, func(err error) {
			if err != nil {
				s.log.Debug("connection ended", "transport", c.Info().Transport, "error", err)
			}
			conns.Done()
		})
	}
}

// ServeConn serves one connection until the peer closes it or ctx is done,
// then closes it. Requests are handled concurrently (at most MaxInFlight at
// a time); notifications are handled in order, one after the other.
// It returns nil when the peer closed the connection normally.
func (s *Server) ServeConn(ctx context.Context, c transport.Conn) error {
	done := make(chan error, 1)
	s.startConn(ctx, c, func(err error) { done <- err })
	return <-done
}

// Start serves c like ServeConn but returns at once: ended is called,
// once, when the connection has ended and is closed, with what ServeConn
// would return. No goroutine waits for the connection meanwhile, so an
// idle connection costs only the one that waits for its input.
func (s *Server) Start(ctx context.Context, c transport.Conn, ended func(error)) {
	s.startConn(ctx, c, ended)
}

// startConn starts serving c and returns; ended is called once the
// connection has ended and is closed, with what ServeConn returns.
func (s *Server) startConn(ctx context.Context, c transport.Conn, ended func(error)) {
	ctx = WithPeer(ctx, c.Info())
	var sessions *connSessions
	if s.connObs != nil {
		sessions = &connSessions{}
		ctx = context.WithValue(ctx, connSessionsKey{}, sessions)
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	cs := &connServer{
		s: s, c: c, ctx: ctx, cancel: cancel, max: s.opts.MaxInFlight,
		turn: make(chan struct{}), done: make(chan struct{}),
		// Unless the agent may still read after closing its end (stdio),
		// a read that ends means it is gone, and handlers still running
		// (say, waiting for a human) are cancelled.
		halfClose: c.Info().HalfClose,
	}
	cs.bw, _ = c.(bufferedWriter)
	cs.ri, _ = c.(transport.ReadInterrupter)
	cs.finish = func() {
		_ = c.Close()
		stop()
		cancel()
		s.quiet.remove(cs)
		if sessions != nil {
			s.connObs.ConnEnded(context.WithoutCancel(ctx), sessions.list(), cs.err)
		}
		ended(cs.err)
	}
	cs.started = 1
	cs.live.Store(1)
	s.quiet.add(cs)
	go cs.worker(true)
}

// readRequest reads until a request arrives, handling everything else
// (notifications, pings, malformed messages) on the way. It returns false
// when the connection has ended.
func (cs *connServer) readRequest() (jsonrpc.Message, bool) {
	s, c, ctx := cs.s, cs.c, cs.ctx
	for {
		if !cs.buffered() {
			// About to wait for input: nothing may stay unsent meanwhile.
			cs.readerIdle.Store(true)
			cs.flushPending()
		}
		cs.waits.Add(1)
		cs.waiting.Store(true)
		msg, err := c.ReadMessage(ctx)
		cs.waiting.Store(false)
		if err == transport.ErrReadInterrupted {
			// The connection is quiet: wait on a fresh goroutine, whose
			// stack is small, and let this one (grown by the requests it
			// answered) go.
			cs.moved = true
			return jsonrpc.Message{}, false
		}
		cs.readerIdle.Store(false)
		cs.moreInput.Store(cs.buffered())
		if err != nil {
			cs.readerIdle.Store(true)
			cs.flushPending()
			var tl *transport.TooLargeError
			if errors.As(err, &tl) {
				s.log.Warn("message over the size limit refused", "transport", c.Info().Transport, "limit", tl.Limit)
				_ = c.WriteMessage(ctx, tooLargeResponse(tl.Limit))
				if tl.Skipped {
					continue
				}
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, transport.ErrClosed) && ctx.Err() == nil {
				cs.err = err
			}
			cs.end()
			return jsonrpc.Message{}, false
		}
		m, derr := jsonrpc.Decode(msg)
		if derr != nil {
			if resp := s.refuse(ctx, msg, derr); resp != nil {
				_ = c.WriteMessage(ctx, resp)
			}
			continue
		}
		switch m.Kind {
		case jsonrpc.KindNotification:
			// Notifications run in order, by whoever holds the reading
			// turn; problems with them are logged, because a notification
			// gets no answer.
			s.handleNotification(ctx, &m, msg)
			continue
		case jsonrpc.KindResponse:
			s.log.Debug("unexpected response from the agent ignored")
			continue
		}
		if m.Method == jsonrpc.MethodPing {
			buf := s.handleRequest(ctx, &m, getBuf())
			_ = c.WriteMessage(ctx, buf)
			putBuf(buf)
			continue
		}
		return m, true
	}
}
