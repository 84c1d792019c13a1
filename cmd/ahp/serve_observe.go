package main

import (
	"context"
	"log/slog"
	"net/http"
	"sync"

	"github.com/spf13/pflag"

	"github.com/ahp-go/ahp/admin"
	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/observe"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/store"
)

// observeFlags are the flags of the observer channels and the dashboard.
var observeFlags struct {
	onListeners bool // serve /observe and the dashboard on http(s) listeners too
	ring        int  // actions kept in memory for replay
	queue       int  // per-observer queue bound
}

// observeSet is the observer hub of a running harness and its endpoint.
type observeSet struct {
	hub  *observe.Hub
	log  *slog.Logger
	once sync.Once
}

// activeObserve is the hub of this process, for the http(s) listeners.
var activeObserve *observeSet

func init() {
	serveFlagHooks = append(serveFlagHooks, func(f *pflag.FlagSet) {
		f.BoolVar(&observeFlags.onListeners, "observe-on-listeners", false, "serve the observer protocol (/observe) and the dashboard on the http(s) listeners too (needs --credentials)")
		f.IntVar(&observeFlags.ring, "observe-ring", 4096, "observer actions kept in memory for replay (older ones are rebuilt from the store)")
		f.IntVar(&observeFlags.queue, "observe-queue", 1024, "messages queued per observer before it is disconnected as too slow")
		_ = f.MarkHidden("observe-ring")
		_ = f.MarkHidden("observe-queue")
	})
	httpRouteHooks = append(httpRouteHooks, mountObserveOnListener)
}

// newObserve builds the observer hub and fills it with the recent records
// of the store.
func newObserve(ctx context.Context, log *slog.Logger, db store.Store, engine *policy.Engine) (*observeSet, error) {
	hub, err := observe.New(observe.Options{
		Store: db, Logger: log, ServerName: "ahp", ServerVersion: buildVersion(),
		PolicyVersion: engine.Version, PolicyRules: func() []string { return engine.Set().RuleIDs() },
		RingSize: observeFlags.ring, QueueSize: observeFlags.queue,
	})
	if err != nil {
		return nil, err
	}
	if err := hub.Load(ctx, 10000); err != nil {
		return nil, err
	}
	activeObserve = &observeSet{hub: hub, log: log}
	return activeObserve, nil
}

// observer returns what the harness publishes to (nil without a hub).
func (s *observeSet) observer() harness.Observer {
	if s == nil {
		return nil
	}
	return s.hub
}

// attach gives the hub the harness that answers approvals and reports
// every policy reload to it.
func (s *observeSet) attach(hs *harnessSet) {
	if s == nil {
		return
	}
	s.hub.SetDecider(hs.h)
	if next := hs.reload; next != nil {
		hs.reload = func() error {
			err := next()
			s.hub.PolicyReloaded(err)
			return err
		}
	}
}

// start runs the hub's background work until ctx ends (once).
func (s *observeSet) start(ctx context.Context) {
	if s == nil {
		return
	}
	s.once.Do(func() { go s.hub.Run(ctx) })
}

// mount serves /observe and the dashboard next to the admin API.
func (s *observeSet) mount(adminH http.Handler, a auth.Authenticator) http.Handler {
	if s == nil {
		return adminH
	}
	oh := observe.NewHandler(s.hub, observe.HandlerOptions{Auth: a})
	mux := http.NewServeMux()
	for _, p := range oh.Routes() {
		mux.Handle(p, oh)
	}
	mux.Handle("/", adminH)
	return mux
}

// adminAuth is the authenticator of the admin API (the local token, then
// the credentials file), shared with the dashboard.
func adminAuth(tok string, next auth.Authenticator) auth.Authenticator {
	return admin.TokenAuthenticator(tok, next)
}

// mountObserveOnListener serves /observe and the dashboard on an http(s)
// listener when --observe-on-listeners is set, with the credentials file.
func mountObserveOnListener(mux *http.ServeMux, env *serveEnv) {
	s := activeObserve
	if s == nil || !observeFlags.onListeners {
		return
	}
	if netFlags.credentials == "" {
		env.log.Warn("--observe-on-listeners needs --credentials: observers are not served on the network listeners")
		return
	}
	st, err := netFlags.loadStore(env.log)
	if err != nil {
		env.log.Warn("observers are not served on the network listeners", "error", err)
		return
	}
	oh := observe.NewHandler(s.hub, observe.HandlerOptions{Auth: st, Secure: netFlags.tlsCert != ""})
	for _, p := range oh.Routes() {
		mux.Handle(p, oh)
	}
}
