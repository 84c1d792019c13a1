package auth

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/transport"
)

// MiddlewareOptions configure Middleware and Guard.
type MiddlewareOptions struct {
	// Transport names the transport in transport.Info and in the metric's
	// transport label: "http", "ws", "grpc" ("http" when empty).
	Transport string
	// AllowQuery accepts the api_key and token query parameters when no
	// header carries a secret (the 2.4 WebSocket client's form). A warning
	// is logged once per principal that uses them.
	AllowQuery bool
	// RequireRole is the role the principal must hold (none when empty).
	// The AHP endpoint requires RoleAgent.
	RequireRole string
	// Realm goes into WWW-Authenticate ("ahp" when empty).
	Realm string
	// Logger receives refusals (rate-limited) and query-string warnings.
	// Discarded when nil. Secrets are never logged.
	Logger *slog.Logger
	// Registerer receives ahp_auth_refusals_total when Metrics is nil.
	Registerer prometheus.Registerer
	// Metrics, when set, is used instead of registering on Registerer.
	Metrics *Metrics
}

// Guard applies an Authenticator for one transport: it checks the required
// role, counts refusals, rate-limits refusal logs and warns once per
// principal about secrets sent in a URL query. Transports that are not
// plain HTTP (gRPC interceptors, for example) call Check directly; HTTP
// handlers use Middleware. A Guard is safe for concurrent use.
type Guard struct {
	a         Authenticator
	opts      MiddlewareOptions
	log       *slog.Logger
	metrics   *Metrics
	warned    sync.Map // principal ID → struct{}: query-string warning logged
	lastLog   atomic.Int64
	suppressd atomic.Int64
}

// NewGuard returns a Guard for a. A metrics registration problem is logged
// and leaves the counter unexported; it never disables authentication.
func NewGuard(a Authenticator, opts MiddlewareOptions) *Guard {
	if opts.Transport == "" {
		opts.Transport = "http"
	}
	if opts.Realm == "" {
		opts.Realm = "ahp"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m := opts.Metrics
	if m == nil {
		var err error
		if m, err = NewMetrics(opts.Registerer); err != nil {
			log.Warn("auth metrics not exported", "error", err)
			m, _ = NewMetrics(nil)
		}
	}
	return &Guard{a: a, opts: opts, log: log, metrics: m}
}

// Transport returns the transport name the Guard reports.
func (g *Guard) Transport() string { return g.opts.Transport }

// Check authenticates c and checks the required role. The error wraps
// ErrUnauthenticated or ErrForbidden (see HTTPStatus); an Authenticator
// failure of another kind is returned wrapped and also refuses the peer.
// remote (the peer address) is only used in logs.
func (g *Guard) Check(ctx context.Context, remote string, c Credentials) (*transport.Principal, error) {
	p, err := g.a.Authenticate(ctx, c)
	if err == nil && p == nil {
		err = refuse(ReasonInvalid, "authenticator returned no principal")
	}
	if err == nil {
		err = Require(p, g.opts.RequireRole)
	}
	if err != nil {
		g.Refused(ctx, remote, ReasonOf(err), err)
		return nil, err
	}
	if c.FromQuery {
		if _, dup := g.warned.LoadOrStore(p.ID, struct{}{}); !dup {
			g.log.Warn("credentials sent in the URL query string are accepted for 2.4 compatibility but deprecated: URLs end up in proxy and access logs; send the X-API-Key or Authorization header instead",
				"transport", g.opts.Transport, "principal", p.ID)
		}
	}
	return p, nil
}

// Refused counts a refusal found outside Check (a failed TLS handshake,
// for example) and logs it, at most once per second per Guard.
func (g *Guard) Refused(ctx context.Context, remote, reason string, err error) {
	g.metrics.Refused(g.opts.Transport, reason)
	now := time.Now().UnixNano()
	last := g.lastLog.Load()
	if now-last < int64(time.Second) || !g.lastLog.CompareAndSwap(last, now) {
		g.suppressd.Add(1)
		return
	}
	attrs := []any{"transport", g.opts.Transport, "remote", remote, "reason", reason}
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	if n := g.suppressd.Swap(0); n > 0 {
		attrs = append(attrs, "refusals_not_logged", n)
	}
	g.log.WarnContext(ctx, "peer refused", attrs...)
}

// Metrics returns the refusal counter the Guard uses.
func (g *Guard) Metrics() *Metrics { return g.metrics }
