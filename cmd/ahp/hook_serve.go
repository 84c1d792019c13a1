package main

import (
	"net/http"
	"net/url"
	"time"

	"github.com/ahp-go/ahp/adapters/hooks"
	"github.com/ahp-go/ahp/auth"
)

// The tools' HTTP hooks: POST /hooks/claude-code, /hooks/codex and
// /hooks/gemini on every http(s) listener of ahp serve, with the same
// credentials rule as the AHP endpoint.
func init() {
	httpRouteHooks = append(httpRouteHooks, func(mux *http.ServeMux, env *serveEnv) {
		a, err := netFlags.authenticator(env.log, nil, httpListenHosts(env.opts.cfg.Listen)...)
		if err != nil {
			env.log.Warn("hook endpoints /hooks/* not served", "error", err)
			return
		}
		h := hooks.NewHandler(hooks.ServerHarness{H: env.srv}, hooks.HandlerOptions{Timeout: hookHTTPTimeout(netFlags.writeTimeout)})
		mux.Handle("/hooks/", auth.Middleware(a, auth.MiddlewareOptions{Transport: "http"}, h))
	})
}

// httpListenHosts returns the hosts of the http(s) listeners, so that the
// hook endpoints are open without credentials only where the AHP endpoint
// is (all of them on loopback).
func httpListenHosts(listen []string) []string {
	var hosts []string
	for _, l := range listen {
		if u, err := url.Parse(l); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			hosts = append(hosts, u.Hostname())
		}
	}
	return hosts
}

// hookHTTPTimeout keeps a hook call's wait inside the listener's write
// timeout, so that the deny is written before the connection is cut.
func hookHTTPTimeout(write time.Duration) time.Duration {
	if write > 10*time.Second {
		return write - 5*time.Second
	}
	return write * 3 / 4
}
