package grpctransport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/ahp-go/ahp/transport"
	ahpv1 "github.com/ahp-go/ahp/transport/grpctransport/proto/ahp/v1"
	"github.com/ahp-go/ahp/transport/reconnect"
)

func init() {
	transport.RegisterDialer("grpc", dialer)
	transport.RegisterDialer("grpcs", dialer)
}

// dialer is the transport.Dialer for grpc and grpcs: a reconnecting Conn
// over the Stream RPC.
func dialer(ctx context.Context, scheme, target string, opts transport.DialOptions) (transport.Conn, error) {
	return DialReconnecting(ctx, scheme+":"+target, opts, reconnect.Options{WaitTimeout: opts.Timeout})
}

// DialReconnecting connects like Dial and returns a Conn that opens a new
// stream (and connection) after a loss; see package reconnect. A refusal
// of the credentials while reconnecting ends the retries.
func DialReconnecting(ctx context.Context, addr string, opts transport.DialOptions, ropts reconnect.Options) (*reconnect.Conn, error) {
	return reconnect.Dial(ctx, func(ctx context.Context) (transport.Conn, error) {
		c, err := Dial(ctx, addr, opts)
		if IsRefused(err) {
			return nil, reconnect.Permanent(err)
		}
		return c, err
	}, ropts)
}

// IsRefused reports whether err is the harness refusing the credentials
// (gRPC status Unauthenticated or PermissionDenied).
func IsRefused(err error) bool {
	switch status.Code(err) { // Code looks through wrapping
	case codes.Unauthenticated, codes.PermissionDenied:
		return true
	}
	return false
}

// ClientConn is a gRPC connection to a harness with the options of AHP:
// TLS for grpcs (or when DialOptions.TLS is set), credentials as per-RPC
// metadata, message size limits and keep-alive pings.
type ClientConn struct {
	// GRPC is the underlying connection.
	GRPC *grpc.ClientConn
	addr string // host:port
	tls  bool
	max  int
	opts transport.DialOptions
}

// NewClientConn prepares a connection to addr, written
// grpc://HOST:PORT (plaintext unless opts.TLS is set) or
// grpcs://HOST:PORT (TLS, with the system roots unless opts.TLS says
// otherwise). It does not connect yet. Credentials in opts are sent as
// x-api-key and authorization metadata with every RPC; they are refused
// over plaintext to a host that is not loopback.
func NewClientConn(addr string, opts transport.DialOptions) (*ClientConn, error) {
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("grpc: bad address: %w", errors.Unwrap(err))
	}
	if u.Scheme != "grpc" && u.Scheme != "grpcs" {
		return nil, fmt.Errorf("grpc: address scheme %q is not grpc or grpcs", u.Scheme)
	}
	if u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, errors.New("grpc: want an address of the form grpc://HOST:PORT or grpcs://HOST:PORT")
	}
	if u.Port() == "" {
		return nil, fmt.Errorf("grpc: address %s has no port", u.Host)
	}
	secure := u.Scheme == "grpcs" || opts.TLS != nil
	hasSecret := opts.APIKey != "" || opts.BearerToken != ""
	if !secure && hasSecret && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("grpc: refusing to send credentials in clear text to %s; use grpcs://", u.Host)
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = transport.DefaultMaxMessageBytes
	}
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if secure {
		cfg := opts.TLS
		if cfg == nil {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		creds = credentials.NewTLS(cfg)
	}
	dopts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(
			grpc.ForceCodecV2(Codec),
			grpc.MaxCallRecvMsgSize(opts.MaxMessageBytes+MessageOverhead),
			grpc.MaxCallSendMsgSize(opts.MaxMessageBytes+MessageOverhead),
		),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 10 * time.Second, PermitWithoutStream: true}),
		grpc.WithUserAgent("ahp-go"),
		grpc.WithInitialWindowSize(WindowSize),
		grpc.WithInitialConnWindowSize(WindowSize),
	}
	if hasSecret {
		dopts = append(dopts, grpc.WithPerRPCCredentials(secretCreds{apiKey: opts.APIKey, bearer: opts.BearerToken}))
	}
	cc, err := grpc.NewClient("dns:///"+u.Host, dopts...)
	if err != nil {
		return nil, fmt.Errorf("grpc: %w", err)
	}
	return &ClientConn{GRPC: cc, addr: u.Host, tls: secure, max: opts.MaxMessageBytes, opts: opts}, nil
}

// Close closes the connection and every stream on it.
func (cc *ClientConn) Close() error { return cc.GRPC.Close() }

// OpenStream starts a Stream RPC and waits, until ctx ends, for the
// harness to accept it; a refusal of the credentials comes back as an
// error for which IsRefused is true. The stream lives until the Conn is
// closed; closing the Conn does not close cc.
func (cc *ClientConn) OpenStream(ctx context.Context) (*Conn, error) {
	sctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel) // bound only the set-up by ctx
	s, err := ahpv1.NewHarnessClient(cc.GRPC).Stream(sctx)
	if err == nil {
		// The harness sends headers once it has accepted the credentials;
		// a refusal ends the stream without them, and Recv has the status.
		if md, _ := s.Header(); md == nil {
			_, err = s.Recv()
			if err == nil || errors.Is(err, context.Canceled) {
				err = errors.New("stream ended before the harness accepted it")
			}
		}
	}
	if !stop() || err != nil {
		cancel()
		if err == nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("grpc: open stream to %s: %w", cc.addr, err)
	}
	scheme := "grpc"
	if cc.tls {
		scheme = "grpcs"
	}
	return NewConn(s, StreamOptions{
		MaxMessageBytes: cc.max,
		Abort:           cancel,
		Info:            transport.Info{Transport: scheme, Remote: cc.addr},
	}), nil
}

// Dial connects to addr (see NewClientConn) and returns a Conn over one
// Stream RPC, after the harness accepted the credentials. Closing the
// Conn closes the gRPC connection. It does not reconnect.
func Dial(ctx context.Context, addr string, opts transport.DialOptions) (transport.Conn, error) {
	cc, err := NewClientConn(addr, opts)
	if err != nil {
		return nil, err
	}
	c, err := cc.OpenStream(ctx)
	if err != nil {
		_ = cc.Close()
		return nil, err
	}
	return &ownedConn{Conn: c, cc: cc}, nil
}

// ownedConn closes its gRPC connection with the stream.
type ownedConn struct {
	*Conn
	cc *ClientConn
}

func (o *ownedConn) Close() error {
	err := o.Conn.Close()
	if cerr := o.cc.Close(); err == nil {
		err = cerr
	}
	return err
}

// secretCreds sends the API key and bearer token as metadata of every RPC.
type secretCreds struct{ apiKey, bearer string }

func (s secretCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	md := make(map[string]string, 2)
	if s.apiKey != "" {
		md["x-api-key"] = s.apiKey
	}
	if s.bearer != "" {
		md["authorization"] = "Bearer " + s.bearer
	}
	return md, nil
}

// RequireTransportSecurity is false: NewClientConn already refuses
// secrets over plaintext beyond loopback.
func (secretCreds) RequireTransportSecurity() bool { return false }

// isLoopback reports whether host names only the loopback interface.
func isLoopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
