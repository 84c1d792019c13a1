package grpcserve

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/connlimit"
	"github.com/ahp-go/ahp/transport/grpctransport"
	ahpv1 "github.com/ahp-go/ahp/transport/grpctransport/proto/ahp/v1"
)

// Defaults of ServerOptions.
const (
	DefaultMaxHeaderListBytes = 64 << 10
	DefaultMaxStreams         = 1024
	DefaultShutdownTimeout    = 10 * time.Second
)

// ServiceName is the name under which the health service reports the
// Harness service.
const ServiceName = "ahp.v1.Harness"

// ServerOptions configure a Server: the Service options and those of the
// gRPC server around it.
type ServerOptions struct {
	Options
	// TLS, when set, serves TLS (see auth.ServerTLSConfig); with ClientCAs
	// and RequireAndVerifyClientCert it is mutual TLS, and the verified
	// certificate authenticates the agent. Failed handshakes over a client
	// certificate are counted as refusals (reason tls_handshake).
	TLS *tls.Config
	// MaxConcurrentStreams bounds the streams and calls of one HTTP/2
	// connection (DefaultMaxStreams when 0).
	MaxConcurrentStreams uint32
	// ShutdownTimeout is how long Serve waits for calls in flight when its
	// context ends before it cuts them off (DefaultShutdownTimeout when 0).
	ShutdownTimeout time.Duration
	// GRPCOptions are appended to the server options this package sets.
	GRPCOptions []grpc.ServerOption
	// Limiter, when set, counts the connections against a limit shared
	// with the harness's other listeners: calls on a connection past it
	// fail with RESOURCE_EXHAUSTED and the connection is closed soon after.
	Limiter *connlimit.Limiter
	// Name labels the listener in metrics and logs (the listen address).
	Name string
}

// Server is a grpc.Server holding the Harness service and the standard
// health service (grpc.health.v1.Health, which answers without
// credentials: it tells only whether the harness serves).
type Server struct {
	// GRPC is the underlying server; register more services before Serve
	// if needed.
	GRPC    *grpc.Server
	Service *Service
	Health  *health.Server
	timeout time.Duration
	lim     *connlimit.Limiter
	name    string
}

// NewServer returns a Server for srv.
func NewServer(srv *server.Server, o ServerOptions) (*Server, error) {
	svc, err := NewService(srv, o.Options)
	if err != nil {
		return nil, err
	}
	if o.MaxConcurrentStreams == 0 {
		o.MaxConcurrentStreams = DefaultMaxStreams
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	max := svc.opts.MaxMessageBytes + grpctransport.MessageOverhead
	opts := []grpc.ServerOption{
		grpc.ForceServerCodecV2(grpctransport.Codec),
		grpc.MaxRecvMsgSize(max),
		grpc.MaxSendMsgSize(max),
		grpc.MaxHeaderListSize(DefaultMaxHeaderListBytes),
		grpc.MaxConcurrentStreams(o.MaxConcurrentStreams),
		grpc.InitialWindowSize(grpctransport.WindowSize),
		grpc.InitialConnWindowSize(grpctransport.WindowSize),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		// Connections read through a pooled buffer (see quietListener), so
		// gRPC needs none of its own for the life of each connection.
		grpc.ReadBufferSize(0),
		// Streams read by their handler's goroutine (see StreamTap).
		grpc.InTapHandle(StreamTap),
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := refusal(ctx, o.Limiter); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := refusal(ss.Context(), o.Limiter); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	}
	if o.TLS != nil {
		opts = append(opts, grpc.Creds(&countingCreds{TransportCredentials: credentials.NewTLS(o.TLS), guard: svc.guard}))
	}
	gs := grpc.NewServer(append(opts, o.GRPCOptions...)...)
	ahpv1.RegisterHarnessServer(gs, svc)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	return &Server{GRPC: gs, Service: svc, Health: hs, timeout: o.ShutdownTimeout, lim: o.Limiter, name: o.Name}, nil
}

// refusal returns RESOURCE_EXHAUSTED for a call on a connection that came
// past the connection limit.
func refusal(ctx context.Context, lim *connlimit.Limiter) error {
	p, ok := peer.FromContext(ctx)
	if !ok || !lim.RefusedAddr(p.LocalAddr, p.Addr) {
		return nil
	}
	return status.Error(codes.ResourceExhausted, "ahp: "+connlimit.Message(lim.Max()))
}

// quietListener hands gRPC connections that read through a pooled
// buffer, given back while the connection is quiet.
type quietListener struct{ net.Listener }

func (l quietListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &quietConn{Conn: c, rd: transport.NewQuietReader(c)}, nil
}

type quietConn struct {
	net.Conn
	rd *transport.QuietReader
}

func (c *quietConn) Read(p []byte) (int, error) { return c.rd.Read(p) }

// Serve accepts connections on l until ctx ends, then shuts down: health
// turns NOT_SERVING, open streams end with status Unavailable, calls in
// flight get up to ShutdownTimeout to finish. It returns nil after a
// shutdown caused by ctx.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	name := s.name
	if name == "" {
		name = l.Addr().String()
	}
	l = quietListener{s.lim.Listener(l, connlimit.ListenerOptions{Transport: "grpc", Name: name, KeepAlive: &connlimit.DefaultKeepAlive})}
	errc := make(chan error, 1)
	go func() { errc <- s.GRPC.Serve(l) }()
	select {
	case err := <-errc:
		s.Service.Close()
		return err
	case <-ctx.Done():
	}
	s.Health.Shutdown()
	s.Service.Close()
	stopped := make(chan struct{})
	go func() {
		s.GRPC.GracefulStop()
		close(stopped)
	}()
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
		s.GRPC.Stop()
		<-stopped
	}
	if err := <-errc; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}

// countingCreds counts TLS handshakes that failed over the client
// certificate (missing, expired, from an unknown authority) as refusals.
type countingCreds struct {
	credentials.TransportCredentials
	guard *auth.Guard
}

func (c *countingCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ServerHandshake(raw)
	if err != nil && strings.Contains(err.Error(), "certificate") {
		c.guard.Refused(context.Background(), raw.RemoteAddr().String(), auth.ReasonTLS, err)
	}
	return conn, info, err
}

func (c *countingCreds) Clone() credentials.TransportCredentials {
	return &countingCreds{TransportCredentials: c.TransportCredentials.Clone(), guard: c.guard}
}
