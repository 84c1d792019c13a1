// Command server is a minimal AHP harness served over gRPC (service
// ahp.v1.Harness, plus the standard health service): it blocks pre_action
// events whose command mentions "rm -rf" and allows the rest. Agents
// authenticate with x-api-key or "authorization: Bearer" metadata, or a
// client certificate when TLS with client CAs is configured.
//
//	go run ./examples/grpc/server -addr 127.0.0.1:9090                       # loopback, no keys
//	go run ./examples/grpc/server -addr 127.0.0.1:9090 -credentials creds.yaml
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport/grpctransport/grpcserve"
)

// guard blocks destructive commands; everything else keeps the defaults.
type guard struct{ server.BaseHandler }

func (guard) HandleEvent(ctx context.Context, ev *protocol.Event) (protocol.Decision, error) {
	var p struct {
		Arguments struct {
			Command string `json:"command"`
		} `json:"arguments"`
	}
	_ = json.Unmarshal(ev.Payload, &p)
	if strings.Contains(p.Arguments.Command, "rm -rf") {
		who := "anonymous"
		if pr := server.PeerFromContext(ctx).Principal; pr != nil {
			who = pr.ID
		}
		return protocol.Block("recursive delete refused for " + who), nil
	}
	return protocol.Allow(), nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9090", "address to listen on")
	creds := flag.String("credentials", "", "credentials file (docs/security.md); without it only loopback addresses are served")
	certFile := flag.String("tls-cert", "", "PEM certificate: serve TLS (grpcs://)")
	keyFile := flag.String("tls-key", "", "PEM key of -tls-cert")
	clientCA := flag.String("client-ca", "", "PEM CA bundle: require client certificates (mutual TLS)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))

	var a auth.Authenticator
	switch {
	case *creds != "":
		st, err := auth.LoadFile(*creds)
		if err != nil {
			fatal(log, err)
		}
		a = st
	case auth.IsLoopbackAddr(*addr):
		log.Warn("no credentials: every local process may send events")
		a = auth.InsecureNoAuth{}
	default:
		fatal(log, errors.New("a non-loopback address needs -credentials"))
	}
	o := grpcserve.ServerOptions{Options: grpcserve.Options{Authenticator: a, Logger: log}}
	scheme := "grpc"
	if *certFile != "" {
		cfg, err := auth.ServerTLSConfig(*certFile, *keyFile, *clientCA)
		if err != nil {
			fatal(log, err)
		}
		o.TLS, scheme = cfg, "grpcs"
	}

	srv := server.New(guard{}, server.Options{Name: "example-grpc-harness", Logger: log})
	gs, err := grpcserve.NewServer(srv, o)
	if err != nil {
		fatal(log, err)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fatal(log, err)
	}
	log.Info("harness listening", "address", scheme+"://"+l.Addr().String())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := gs.Serve(ctx, l); err != nil {
		fatal(log, err)
	}
}

func fatal(log *slog.Logger, err error) {
	log.Error("server", "error", err)
	os.Exit(1)
}
