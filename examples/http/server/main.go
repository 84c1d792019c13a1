// Command server is a minimal AHP harness served over HTTP: it blocks
// pre_action events whose command mentions "rm -rf" and allows the rest.
// It shows how to mount the AHP endpoint next to routes of your own and
// how to require API keys from a credentials file.
//
//	go run ./examples/http/server -addr 127.0.0.1:8080                       # loopback, no keys
//	go run ./examples/http/server -addr 127.0.0.1:8080 -credentials creds.yaml
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport/httpserver"
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
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	creds := flag.String("credentials", "", "credentials file (docs/security.md); without it only loopback addresses are served")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))

	var a auth.Authenticator
	switch {
	case *creds != "":
		st, err := auth.LoadFile(*creds)
		if err != nil {
			fatal(log, err)
		}
		for _, w := range st.Warnings() {
			log.Warn("credentials", "warning", w)
		}
		a = st
	case auth.IsLoopbackAddr(*addr):
		log.Warn("no credentials: every local process may send events")
		a = auth.InsecureNoAuth{}
	default:
		fatal(log, errNeedCredentials)
	}

	srv := server.New(guard{}, server.Options{Name: "example-http-harness", Logger: log})
	endpoint, err := httpserver.New(srv, httpserver.Options{Authenticator: a, Logger: log})
	if err != nil {
		fatal(log, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ahp", endpoint)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })

	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fatal(log, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Info("serving", "url", "http://"+l.Addr().String()+"/ahp")
	hs := httpserver.NewServer(mux, httpserver.ServerOptions{Logger: log, Guard: endpoint.Guard()})
	if err := hs.Serve(ctx, l); err != nil {
		fatal(log, err)
	}
}

var errNeedCredentials = errors.New("a non-loopback address needs -credentials")

func fatal(log *slog.Logger, err error) {
	log.Error("example server", "error", err)
	os.Exit(1)
}
