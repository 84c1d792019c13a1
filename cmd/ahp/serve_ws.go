package main

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ahp-go/ahp/transport/wstransport"
	"github.com/ahp-go/ahp/transport/wstransport/wsserve"
)

// wsFlags are the WebSocket settings of ahp serve. WebSocket is served on
// the AHP path of every http(s) listener: GET with an upgrade goes to the
// WebSocket handler, after the same authentication as a POST (credentials
// may also come in the api_key and token query parameters, as 2.4 clients
// send them).
var wsFlags struct {
	pingInterval time.Duration
	writeTimeout time.Duration
	origins      []string
}

func init() {
	httpWebSocketHook = newWebSocketHandler
	// ws:// and wss:// name the same listener as http:// and https://.
	registerListen("ws", serveWebSocket)
	registerListen("wss", serveWebSocket)
	serveFlagHooks = append(serveFlagHooks, func(f *pflag.FlagSet) {
		f.DurationVar(&wsFlags.pingInterval, "ws-ping-interval", wstransport.DefaultPingInterval, "WebSocket keep-alive: ping every agent this often and drop it when the pong is "+wstransport.DefaultPongTimeout.String()+" late (0 turns pings off)")
		f.DurationVar(&wsFlags.writeTimeout, "ws-write-timeout", wstransport.DefaultWriteTimeout, "drop a WebSocket agent that does not take a message within this time (it stopped reading)")
		f.StringSliceVar(&wsFlags.origins, "ws-origin", nil, "browser origins (host patterns) allowed to open WebSocket connections; agents send no Origin and are always allowed")
	})
}

// newWebSocketHandler is the WebSocket handler of the http(s) listeners.
// Its connections are closed when the listener shuts down.
func newWebSocketHandler(env *serveEnv) (http.Handler, error) {
	ping := wsFlags.pingInterval
	if ping == 0 {
		ping = -1 // wsserve: negative turns pings off, zero means the default
	}
	return wsserve.NewHandler(env.srv, wsserve.Options{
		MaxMessageBytes: env.opts.maxMessageBytes,
		WriteTimeout:    wsFlags.writeTimeout,
		PingInterval:    ping,
		OriginPatterns:  wsFlags.origins,
		Logger:          env.log,
	}), nil
}

// serveWebSocket serves --listen ws://HOST:PORT[/PATH] and wss://...: the
// http(s) listener, which takes WebSocket upgrades and POSTs alike.
func serveWebSocket(ctx context.Context, env *serveEnv, scheme, target string, ready func(string)) error {
	httpScheme := "http"
	if scheme == "wss" {
		httpScheme = "https"
	}
	return serveHTTP(ctx, env, httpScheme, target, func(hint string) {
		ready(strings.ReplaceAll(hint, httpScheme+"://", scheme+"://"))
	})
}
