// Package connlimit bounds the connections a harness holds open across
// all its listeners, and keeps accepting after the process runs out of
// file descriptors. A Limiter counts the open connections; each listener
// wraps its net.Listener with Limiter.Listener, which takes a slot per
// accepted connection and gives it back on Close. A connection past the
// limit is refused at once, in the words of its transport (a JSON-RPC
// error on Unix sockets, 503 on HTTP, RESOURCE_EXHAUSTED on gRPC), with a
// warning at most once every 10 seconds and Prometheus counters.
package connlimit

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// LogEvery is the shortest time between two warnings about refused
// connections, and between two about accept failing.
const LogEvery = 10 * time.Second

// MaxRefusing bounds the connections past the limit that are still being
// answered (HTTP and gRPC answer them through their server, which takes a
// moment); more are closed without an answer.
const MaxRefusing = 256

// RefuseTimeout bounds the life of a connection past the limit.
const RefuseTimeout = 5 * time.Second

// Options configure a Limiter.
type Options struct {
	// Logger receives the warnings (discarded when nil).
	Logger *slog.Logger
	// Registerer receives ahp_connections_open and
	// ahp_connections_refused_total (not exported when nil).
	Registerer prometheus.Registerer
}

// Limiter counts open connections against a maximum shared by every
// listener that uses it. Its methods are safe for concurrent use. A nil
// *Limiter has no maximum: its listeners only back off when accept fails.
type Limiter struct {
	max      int64
	open     atomic.Int64
	refusing atomic.Int64
	over     sync.Map // addrKey of connections past the limit, being refused
	log      *slog.Logger
	gauge    *prometheus.GaugeVec
	refused  *prometheus.CounterVec

	refusedLog rateLog
	acceptLog  rateLog
}

// New returns a Limiter allowing max connections at once (max >= 1).
func New(max int, o Options) (*Limiter, error) {
	if max < 1 {
		return nil, fmt.Errorf("connlimit: maximum %d: want at least 1", max)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	l := &Limiter{max: int64(max), log: log}
	l.gauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ahp_connections_open",
		Help: "Agent connections open, by listener.",
	}, []string{"transport", "listener"})
	l.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ahp_connections_refused_total",
		Help: "Agent connections refused because the harness was at its connection limit (reason connection_limit), by listener.",
	}, []string{"transport", "listener", "reason"})
	if o.Registerer != nil {
		var err error
		if l.gauge, err = register(o.Registerer, l.gauge); err != nil {
			return nil, err
		}
		if l.refused, err = register(o.Registerer, l.refused); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// register registers c on reg, or returns the collector already there.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, fmt.Errorf("connlimit: registering metrics: %w", err)
	}
	return c, nil
}

// Max returns the most connections allowed at once (0 for a nil Limiter).
func (l *Limiter) Max() int {
	if l == nil {
		return 0
	}
	return int(l.max)
}

// Open returns the number of connections open now.
func (l *Limiter) Open() int {
	if l == nil {
		return 0
	}
	return int(l.open.Load())
}

// acquire takes a slot; false at the limit.
func (l *Limiter) acquire() bool {
	if l == nil {
		return true
	}
	if l.open.Add(1) > l.max {
		l.open.Add(-1)
		return false
	}
	return true
}

func (l *Limiter) release() {
	if l != nil {
		l.open.Add(-1)
	}
}

// noteRefused counts a refusal and warns, at most once every LogEvery.
func (l *Limiter) noteRefused(transport, listener string) {
	l.refused.WithLabelValues(transport, listener, ReasonLimit).Inc()
	if n, ok := l.refusedLog.due(); ok {
		l.log.Warn("connections refused: the harness is at its connection limit (raise --max-connections and the file limit, see docs/transports.md)",
			"listener", listener, "max_connections", l.max, "refused", n)
	}
}

// ReasonLimit is the reason label of refusals at the connection limit.
const ReasonLimit = "connection_limit"

// Message is the refusal every transport gives, with the limit.
func Message(max int) string {
	return fmt.Sprintf("the harness is at its connection limit (%d connections); retry later or use another harness", max)
}

// rateLog lets one log line through per LogEvery and counts the events
// it held back.
type rateLog struct {
	mu    sync.Mutex
	last  time.Time
	count int64
}

// due counts an event and reports whether to log now, with the number of
// events since the last line (this one included).
func (r *rateLog) due() (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count++
	now := time.Now()
	if !r.last.IsZero() && now.Sub(r.last) < LogEvery {
		return 0, false
	}
	n := r.count
	r.last, r.count = now, 0
	return n, true
}
