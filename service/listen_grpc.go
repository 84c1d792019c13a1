package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/transport/grpctransport/grpcserve"
)

// serveGRPC serves AHP over gRPC: grpc://HOST:PORT (plaintext) or
// grpcs://HOST:PORT (TLS; mutual TLS with a client CA). Authentication
// follows the rule of every network listener (netAuth.authenticator); the
// gRPC health service answers without credentials.
func (s *Service) serveGRPC(ctx context.Context, scheme, target string, ready func(string, string)) error {
	u, err := url.Parse(scheme + ":" + target)
	if err != nil || u.Host == "" || u.Port() == "" || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("--listen %s:%s: want %s://HOST:PORT, as in %s://127.0.0.1:9090", scheme, target, scheme, scheme)
	}
	tlsCfg, err := s.net.serverTLS()
	if err != nil {
		return err
	}
	switch {
	case scheme == "grpcs" && tlsCfg == nil:
		return errors.New("--listen grpcs:// needs --tls-cert and --tls-key")
	case scheme == "grpc" && tlsCfg != nil:
		return errors.New("--tls-cert is set: listen on grpcs:// instead of grpc://")
	}
	host := u.Hostname()
	a, err := s.net.authenticator(s.log, true, host)
	if err != nil {
		return err
	}
	if scheme == "grpc" && !auth.IsLoopbackHost(host) {
		if _, open := a.(auth.InsecureNoAuth); !open {
			s.log.Warn("API keys and bearer tokens cross the network in clear text on grpc://; use grpcs:// with --tls-cert and --tls-key", "listen", u.Host)
		}
	}
	metrics, err := s.net.authMetrics()
	if err != nil {
		return err
	}
	gs, err := grpcserve.NewServer(s.srv, grpcserve.ServerOptions{
		Options: grpcserve.Options{
			Authenticator:   a,
			MaxMessageBytes: s.cfg.Harness.MaxMessageBytes,
			Logger:          s.log,
			AuthMetrics:     metrics,
		},
		TLS:     tlsCfg,
		Limiter: s.lim,
		Name:    scheme + "://" + u.Host,
	})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", u.Host)
	if err != nil {
		return err
	}
	addr := scheme + "://" + l.Addr().String()
	ready(addr, fmt.Sprintf("ahp: harness listening on %s\nahp: try: ahp send --connect %s pre_action '{\"tool_name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}'", addr, addr))
	return gs.Serve(ctx, l)
}
