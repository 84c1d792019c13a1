// Command server is a minimal AHP harness served over WebSocket: it blocks
// pre_action events whose command mentions "rm -rf" and allows the rest.
// Agents connect to ws://ADDR/ahp with an X-API-Key or Authorization:
// Bearer header, or (as the 2.4 client does) ?api_key= or ?token= in the
// URL. The connection is kept alive with pings and dropped when the agent
// stops reading.
//
//	go run ./examples/websocket/server -addr 127.0.0.1:8081                       # loopback, no keys
//	go run ./examples/websocket/server -addr 127.0.0.1:8081 -credentials creds.yaml
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
	"time"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport/wstransport/wsserve"
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
	addr := flag.String("addr", "127.0.0.1:8081", "address to listen on")
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
		a = st
	case auth.IsLoopbackAddr(*addr):
		log.Warn("no credentials: every local process may send events")
		a = auth.InsecureNoAuth{}
	default:
		fatal(log, errors.New("a non-loopback address needs -credentials"))
	}

	srv := server.New(guard{}, server.Options{Name: "example-ws-harness", Logger: log})
	ws := wsserve.NewHandler(srv, wsserve.Options{
		Authenticator: a,
		PingInterval:  15 * time.Second, // keep-alive; a silent agent is dropped
		Logger:        log,
	})
	mux := http.NewServeMux()
	mux.Handle("/ahp", ws)

	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fatal(log, err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Info("harness listening", "url", "ws://"+l.Addr().String()+"/ahp")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx) // also closes the WebSocket connections (status 1001)
		_ = ws.Close()
	}()
	if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fatal(log, err)
	}
}

func fatal(log *slog.Logger, err error) {
	log.Error("server", "error", err)
	os.Exit(1)
}
