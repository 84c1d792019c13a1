package httpserver

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/transport/connlimit"
)

// Defaults of ServerOptions.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 10 * time.Minute // an escalation may wait this long for a human
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultMaxConns          = 4096
	DefaultShutdownTimeout   = 10 * time.Second
)

type overLimitKey struct{}

// markOverLimit notes in a connection's context that it came past the
// connection limit.
func markOverLimit(ctx context.Context, c net.Conn) context.Context {
	if connlimit.Refused(c) {
		return context.WithValue(ctx, overLimitKey{}, connlimit.Max(c))
	}
	return ctx
}

// refuseOverLimit answers every request on a connection past the limit
// with 503, Retry-After and a JSON body naming the limit, and closes the
// connection; other requests go to h.
func refuseOverLimit(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		max, over := r.Context().Value(overLimitKey{}).(int)
		if !over {
			h.ServeHTTP(w, r)
			return
		}
		hd := w.Header()
		hd.Set("Connection", "close")
		hd.Set("Retry-After", "5")
		hd.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":"connection_limit","message":"`+connlimit.Message(max)+`","max_connections":`+strconv.Itoa(max)+"}\n")
	})
}

// ServerOptions configure a Server. Zero fields take the defaults above.
type ServerOptions struct {
	// ReadHeaderTimeout bounds reading the request line and headers; it
	// cuts off clients that send them slowly (slowloris).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included.
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of the request headers to
	// the end of the response, so it must exceed the longest decision
	// (an escalation awaiting approval).
	WriteTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request headers.
	MaxHeaderBytes int
	// MaxConns bounds the connections open at once when no Limiter is
	// given; a connection past it is answered 503 with Retry-After.
	MaxConns int
	// Limiter, when set, counts the connections instead, with a limit
	// shared with the harness's other listeners.
	Limiter *connlimit.Limiter
	// Name labels the listener in metrics and logs (the listen address).
	Name string
	// KeepAlive is the TCP keep-alive of accepted connections: an agent
	// whose machine vanished is noticed after Idle + Interval*Count
	// (connlimit.DefaultKeepAlive when nil).
	KeepAlive *net.KeepAliveConfig
	// ShutdownTimeout is how long Serve waits for requests in flight when
	// its context ends before it closes their connections.
	ShutdownTimeout time.Duration
	// TLS, when set, serves HTTPS (see auth.ServerTLSConfig).
	TLS *tls.Config
	// Logger receives server errors (discarded when nil).
	Logger *slog.Logger
	// Guard, when set, counts TLS handshakes that failed over a client
	// certificate as refusals (reason tls_handshake).
	Guard *auth.Guard
}

// Server is an http.Server set up for AHP.
type Server struct {
	// HTTP is the underlying server; adjust it before Serve if needed.
	HTTP *http.Server
	opts ServerOptions
}

// NewServer returns a Server for h (an AHP Handler or a mux holding one).
func NewServer(h http.Handler, o ServerOptions) *Server {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&o.ReadTimeout, DefaultReadTimeout)
	def(&o.WriteTimeout, DefaultWriteTimeout)
	def(&o.IdleTimeout, DefaultIdleTimeout)
	def(&o.ShutdownTimeout, DefaultShutdownTimeout)
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Limiter == nil {
		o.Limiter, _ = connlimit.New(o.MaxConns, connlimit.Options{Logger: o.Logger})
	}
	if o.KeepAlive == nil {
		ka := connlimit.DefaultKeepAlive
		o.KeepAlive = &ka
	}
	hs := &http.Server{
		Handler:           refuseOverLimit(h),
		ConnContext:       markOverLimit,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
		TLSConfig:         o.TLS,
		ErrorLog:          log.New(&errorLog{log: o.Logger, guard: o.Guard}, "", 0),
	}
	return &Server{HTTP: hs, opts: o}
}

// Serve accepts connections on l until ctx ends, then shuts down: it stops
// accepting, waits up to ShutdownTimeout for requests in flight and closes
// what is left. It serves TLS when the options hold a TLS config. It
// returns nil after a shutdown caused by ctx.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	name := s.opts.Name
	if name == "" {
		name = l.Addr().String()
	}
	l = s.opts.Limiter.Listener(l, connlimit.ListenerOptions{Transport: "http", Name: name, KeepAlive: s.opts.KeepAlive})
	errc := make(chan error, 1)
	go func() {
		if s.HTTP.TLSConfig != nil {
			errc <- s.HTTP.ServeTLS(l, "", "")
		} else {
			errc <- s.HTTP.Serve(l)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	if err := s.HTTP.Shutdown(sctx); err != nil {
		_ = s.HTTP.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
