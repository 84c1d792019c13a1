// Package grpcserve serves AHP over gRPC: the ahp.v1.Harness service
// (Stream → server.ServeConn, Call → server.HandleMessage) behind
// authentication by metadata or client certificate, plus a ready-made
// grpc.Server with the health service, message size limits, keep-alive
// and TLS. It is apart from grpctransport because it depends on the server
// and auth packages, which agents that only dial do not need.
package grpcserve

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/grpctransport"
	ahpv1 "github.com/ahp-go/ahp/transport/grpctransport/proto/ahp/v1"
)

// Options configure a Service (and a Server).
type Options struct {
	// Authenticator decides who may call; required. Credentials are read
	// from the x-api-key and "authorization: Bearer" metadata and from the
	// verified client certificate of a mutual TLS connection. Callers must
	// hold auth.RoleAgent. auth.InsecureNoAuth{} accepts everyone.
	Authenticator auth.Authenticator
	// MaxMessageBytes bounds one JSON message (the server's
	// MaxMessageBytes when 0); gRPC refuses larger messages with
	// ResourceExhausted.
	MaxMessageBytes int
	// WriteTimeout cuts off a stream whose peer does not take a message in
	// time (grpctransport.DefaultWriteTimeout when 0).
	WriteTimeout time.Duration
	// Logger receives refusals and stream events (discarded when nil).
	Logger *slog.Logger
	// Registerer receives ahp_auth_refusals_total, unless AuthMetrics is set.
	Registerer prometheus.Registerer
	// AuthMetrics is a refusal counter shared with other transports.
	AuthMetrics *auth.Metrics
}

// Service implements ahpv1.HarnessServer on a server.Server.
type Service struct {
	ahpv1.UnimplementedHarnessServer

	srv   *server.Server
	opts  Options
	log   *slog.Logger
	guard *auth.Guard

	life    context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup // ServeConn goroutines, which may outlive their handler
	streams atomic.Int64

	mu     sync.Mutex
	closed bool
	open   map[*grpctransport.Conn]struct{} // the streams being served, for Close
}

// NewService returns the Harness service for srv.
func NewService(srv *server.Server, opts Options) (*Service, error) {
	if srv == nil {
		return nil, errors.New("grpcserve: no server")
	}
	if opts.Authenticator == nil {
		return nil, errors.New("grpcserve: no Authenticator (use auth.InsecureNoAuth{} to accept everyone)")
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = srv.Options().MaxMessageBytes
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Service{srv: srv, opts: opts, log: log}
	s.guard = auth.NewGuard(opts.Authenticator, auth.MiddlewareOptions{
		Transport: "grpc", RequireRole: auth.RoleAgent,
		Logger: log, Registerer: opts.Registerer, Metrics: opts.AuthMetrics,
	})
	s.life, s.stop = context.WithCancel(context.Background())
	return s, nil
}

// Guard returns the guard that authenticates calls; Server uses it to
// count failed TLS handshakes.
func (s *Service) Guard() *auth.Guard { return s.guard }

// Streams returns the number of Stream RPCs being served.
func (s *Service) Streams() int { return int(s.streams.Load()) }

// Close ends every open stream (their agents see status Unavailable) and
// waits until they are served no more. Later streams are refused.
func (s *Service) Close() {
	s.stop()
	s.mu.Lock()
	s.closed = true
	open := make([]*grpctransport.Conn, 0, len(s.open))
	for c := range s.open {
		open = append(open, c)
	}
	s.mu.Unlock()
	for _, c := range open {
		_ = c.Close()
	}
	s.wg.Wait()
}

// abortKey is the context key under which StreamTap keeps the function
// that cancels a Stream RPC's context.
type abortKey struct{}

// StreamTap is the gRPC tap (grpc.InTapHandle) that Server installs: it
// gives each Stream RPC a context the Service can cancel, which ends the
// stream even while its handler waits in RecvMsg. With it, the handler's
// goroutine reads the stream itself and an idle stream keeps no goroutine
// of the harness waiting; without it (a Service registered on another
// grpc.Server, or another tap installed), each stream is read by a
// goroutine of the server's. It costs one context per Stream RPC and nothing
// for other calls.
func StreamTap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if info.FullMethodName != ahpv1.Harness_Stream_FullMethodName {
		return ctx, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	return context.WithValue(ctx, abortKey{}, cancel), nil
}

// Stream serves one agent connection: the messages of the stream go to
// server.ServeConn. Credentials are checked before anything is read.
func (s *Service) Stream(stream ahpv1.Harness_StreamServer) error {
	ctx := stream.Context()
	info, err := s.authenticate(ctx)
	if err != nil {
		return err
	}
	if s.life.Err() != nil {
		return status.Error(codes.Unavailable, "ahp: server shutting down")
	}
	s.streams.Add(1)
	defer s.streams.Add(-1)
	// Headers tell the client that its credentials were accepted.
	if err := stream.SendHeader(metadata.Pairs("ahp-principal", info.Principal.ID)); err != nil {
		return err
	}
	// With StreamTap, this handler's goroutine receives the messages
	// (Conn.Pump) and the server's workers take them, so that a quiet
	// stream is waited on by this goroutine alone (transport.InputWatcher);
	// Abort cancels the stream's context, which makes a blocked receive
	// return. Without it, the server's reader receives, and the stream
	// ends when this handler returns: blocked Send and Recv calls are
	// released by returning once the Conn is aborted, not by waiting. What
	// the stream had queued stays in the HTTP/2 layer, bounded by flow
	// control, until the peer reads it or the connection closes.
	abort, pumped := ctx.Value(abortKey{}).(context.CancelFunc)
	c := grpctransport.NewConn(stream, grpctransport.StreamOptions{
		MaxMessageBytes: s.opts.MaxMessageBytes,
		WriteTimeout:    s.opts.WriteTimeout,
		Abort:           abort,
		Info:            info,
		Pumped:          pumped,
	})
	if !s.track(c) {
		_ = c.Close()
		return status.Error(codes.Unavailable, "ahp: server shutting down")
	}
	defer s.untrack(c)
	done := make(chan error, 1)
	s.wg.Add(1)
	// Served without a goroutine of its own waiting for it (server.Start):
	// this handler's goroutine waits instead.
	s.srv.Start(ctx, c, func(err error) {
		done <- err
		s.wg.Done()
	})
	if pumped {
		_ = c.Pump() // how the input ended reaches the server through c
	}
	select {
	case err := <-done:
		return s.ended(info, c, err)
	case <-c.Aborted():
		select {
		case err := <-done: // served to the end already
			return s.ended(info, c, err)
		default:
		}
		return s.ended(info, c, nil)
	}
}

// track registers an open stream's Conn for Close; it reports false once
// the Service is closed.
func (s *Service) track(c *grpctransport.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.open == nil {
		s.open = map[*grpctransport.Conn]struct{}{}
	}
	s.open[c] = struct{}{}
	return true
}

func (s *Service) untrack(c *grpctransport.Conn) {
	s.mu.Lock()
	delete(s.open, c)
	s.mu.Unlock()
}

// ended logs how a stream ended and returns its final status.
func (s *Service) ended(info transport.Info, c *grpctransport.Conn, err error) error {
	var tl *transport.TooLargeError
	switch {
	case c.TimedOut():
		s.log.Info("grpc stream dropped: peer did not read in time", "remote", info.Remote, "principal", info.Principal.ID)
		return status.Error(codes.DeadlineExceeded, "ahp: responses were not read in time")
	case s.life.Err() != nil:
		return status.Error(codes.Unavailable, "ahp: server shutting down")
	case errors.As(err, &tl):
		s.log.Warn("grpc stream closed: message over the size limit", "remote", info.Remote, "principal", info.Principal.ID, "limit", tl.Limit)
		return status.Errorf(codes.ResourceExhausted, "ahp: message larger than %d bytes", tl.Limit)
	case err != nil:
		s.log.Debug("grpc stream ended", "remote", info.Remote, "principal", info.Principal.ID, "error", err)
		return nil
	}
	return nil
}

// Call handles one JSON-RPC message; a notification gets an empty Message.
func (s *Service) Call(ctx context.Context, in *ahpv1.Message) (*ahpv1.Message, error) {
	info, err := s.authenticate(ctx)
	if err != nil {
		return nil, err
	}
	if len(in.GetJson()) > s.opts.MaxMessageBytes {
		return nil, status.Errorf(codes.ResourceExhausted, "ahp: message larger than %d bytes", s.opts.MaxMessageBytes)
	}
	out := s.srv.HandleMessage(server.WithPeer(ctx, info), in.GetJson())
	return &ahpv1.Message{Json: out}, nil
}

// authenticate checks the credentials of the RPC in ctx and returns the
// peer's connection info, or an Unauthenticated/PermissionDenied status.
func (s *Service) authenticate(ctx context.Context) (transport.Info, error) {
	remote := ""
	var creds auth.Credentials
	if p, ok := peer.FromContext(ctx); ok {
		if p.Addr != nil {
			remote = p.Addr.String()
		}
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.VerifiedChains) > 0 {
			creds.PeerCertificates = ti.State.VerifiedChains[0]
		}
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if v := first(md, "x-api-key"); v != "" {
		creds.APIKey = bound(strings.TrimSpace(v))
	}
	if v := first(md, "authorization"); v != "" {
		scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " ")
		if ok && strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(tok) != "" {
			creds.Bearer = bound(strings.TrimSpace(tok))
		}
	}
	p, err := s.guard.Check(ctx, remote, creds)
	if err != nil {
		code := codes.Unauthenticated
		if errors.Is(err, auth.ErrForbidden) {
			code = codes.PermissionDenied
		} else if !errors.Is(err, auth.ErrUnauthenticated) {
			code = codes.Internal
		}
		return transport.Info{}, status.Error(code, "ahp: "+auth.ReasonOf(err))
	}
	return transport.Info{Transport: "grpc", Remote: remote, Principal: p}, nil
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// maxSecretBytes bounds a presented secret, as package auth does for HTTP:
// a longer one is cut to one byte over, which matches nothing.
const maxSecretBytes = 4096

func bound(s string) string {
	if len(s) > maxSecretBytes {
		return s[:maxSecretBytes+1]
	}
	return s
}
