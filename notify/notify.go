package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/harness"
)

// Format is the body a sink is sent.
type Format string

// The formats.
const (
	FormatJSON  Format = "json"  // Message
	FormatSlack Format = "slack" // a Slack incoming-webhook body
)

// Sink is one receiver.
type Sink struct {
	// Name names the sink in logs and metrics; never the URL.
	Name string
	// URL is where bodies are POSTed. It may hold a secret: it is never
	// logged, only its host.
	URL    string
	Format Format
	// Kinds it gets; empty: every kind.
	Kinds []Kind
	// Packs and Rules select approvals by their rule's pack or id; an
	// approval matches when either names it. Both empty: every approval.
	Packs, Rules []string
}

// matches reports whether the sink wants a notice of kind k for the rule
// ruleID of pack.
func (s *Sink) matches(k Kind, ruleID, pack string) bool {
	if len(s.Kinds) > 0 && !slices.Contains(s.Kinds, k) {
		return false
	}
	if len(s.Packs) == 0 && len(s.Rules) == 0 {
		return true
	}
	return (pack != "" && slices.Contains(s.Packs, pack)) || (ruleID != "" && slices.Contains(s.Rules, ruleID))
}

// Options configure a Notifier. Zero values take the defaults given.
type Options struct {
	// Sinks are the receivers; none makes a Notifier that sends nothing.
	Sinks []Sink
	// DashboardURL is the dashboard's external base URL for links to
	// approval cards; empty: bodies say `ahp approvals show ID` instead.
	DashboardURL string
	// QueueSize bounds the notices waiting, in the shared queue and in
	// each sink's (1000).
	QueueSize int
	// Timeout bounds each HTTP request (5s).
	Timeout time.Duration
	// MaxAttempts is how many times a body is tried (6).
	MaxAttempts int
	// BaseBackoff is the wait after the first failed attempt, doubled
	// after each further one up to MaxBackoff (500ms, 30s); each wait is
	// drawn at random between half and all of it.
	BaseBackoff, MaxBackoff time.Duration
	// PackOf returns the built-in pack of a rule ("" for none); nil: no
	// approval has a pack. It is called in the background.
	PackOf func(ruleID string) string
	// Client sends the requests (a client that follows no redirects when
	// nil).
	Client *http.Client
	// Registerer, when set, gets the counters sent, failed, dropped and
	// retries, by sink.
	Registerer prometheus.Registerer
	// Logger gets delivery failures and drops (rate-limited); discarded
	// when nil.
	Logger *slog.Logger
}

// Notifier delivers approval notices to webhooks in the background. It is
// a harness.Notifier; its methods are safe for concurrent use.
type Notifier struct {
	opts   Options
	log    *slog.Logger
	met    *metrics
	queue  chan harness.ApprovalNotice
	sinks  []*sinkQueue
	stop   chan struct{} // closed by Close: stop taking notices
	ctx    context.Context
	cancel context.CancelFunc // aborts requests and back-off waits
	wg     sync.WaitGroup
	closed atomic.Bool
	once   sync.Once

	dropsSinceLog atomic.Int64
	lastDropLog   atomic.Int64 // unix nanoseconds
}

type sinkQueue struct {
	Sink
	host string // scheme://host of URL, for logs
	q    chan job
}

// job is one body to deliver to one sink.
type job struct {
	n    harness.ApprovalNotice
	kind Kind
	pack string
}

// dropLogEvery is the least time between two log lines about drops.
const dropLogEvery = 10 * time.Second

// New checks opts and starts the notifier's goroutines: one that sorts
// notices to sinks and one per sink. Close stops them.
func New(opts Options) (*Notifier, error) {
	if opts.QueueSize <= 0 {
		opts.QueueSize = 1000
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 6
	}
	if opts.BaseBackoff <= 0 {
		opts.BaseBackoff = 500 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	if opts.Client == nil {
		opts.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	met, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	n := &Notifier{opts: opts, log: log, met: met, queue: make(chan harness.ApprovalNotice, opts.QueueSize),
		stop: make(chan struct{})}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	for i, s := range opts.Sinks {
		if s.Name == "" {
			s.Name = fmt.Sprintf("sink-%d", i+1)
		}
		if s.Format != FormatJSON && s.Format != FormatSlack {
			n.cancel()
			return nil, fmt.Errorf("notify: sink %s: format %q is not json or slack", s.Name, s.Format)
		}
		if err := config.CheckNotifyURL(s.URL); err != nil {
			n.cancel()
			return nil, fmt.Errorf("notify: sink %s: url %w", s.Name, err)
		}
		sq := &sinkQueue{Sink: s, host: config.URLHost(s.URL), q: make(chan job, opts.QueueSize)}
		n.sinks = append(n.sinks, sq)
		for _, c := range []*prometheus.CounterVec{met.sent, met.failed, met.dropped, met.retries} {
			c.WithLabelValues(s.Name) // show zeros on /metrics
		}
	}
	met.dropped.WithLabelValues(AllSinks)
	n.wg.Add(1 + len(n.sinks))
	go n.sort()
	for _, sq := range n.sinks {
		go n.deliverAll(sq)
	}
	return n, nil
}

// NotifyApproval queues n for the sinks that want it and returns at once.
// When the queue is full, or the notifier closed, n is dropped and
// counted. It implements harness.Notifier.
func (n *Notifier) NotifyApproval(an harness.ApprovalNotice) {
	if len(n.sinks) == 0 {
		return
	}
	if n.closed.Load() {
		n.drop(AllSinks, "the notifier is closed")
		return
	}
	select {
	case n.queue <- an:
	default:
		n.drop(AllSinks, "the queue is full")
	}
}

// drop counts a dropped notice and logs, at most once every dropLogEvery,
// how many were dropped since the last line.
func (n *Notifier) drop(sink, why string) {
	n.met.dropped.WithLabelValues(sink).Inc()
	n.dropsSinceLog.Add(1)
	now := time.Now().UnixNano()
	last := n.lastDropLog.Load()
	if now-last < int64(dropLogEvery) || !n.lastDropLog.CompareAndSwap(last, now) {
		return
	}
	count := n.dropsSinceLog.Swap(0)
	n.log.Warn("approval notifications dropped", "sink", sink, "why", why, "dropped", count,
		"metric", "ahp_approval_webhooks_dropped_total")
}

// sort hands each queued notice to the queues of the sinks that want it,
// until Close; then it sorts what is still queued and closes the sinks'
// queues.
func (n *Notifier) sort() {
	defer n.wg.Done()
	defer func() {
		for _, sq := range n.sinks {
			close(sq.q)
		}
	}()
	for {
		select {
		case an := <-n.queue:
			n.route(an)
		case <-n.stop:
			for {
				select {
				case an := <-n.queue:
					n.route(an)
				default:
					return
				}
			}
		}
	}
}

// route queues an for each sink that wants it.
func (n *Notifier) route(an harness.ApprovalNotice) {
	k := kindOf(an)
	pack := ""
	if n.opts.PackOf != nil && an.Approval.RuleID != "" {
		pack = n.opts.PackOf(an.Approval.RuleID)
	}
	for _, sq := range n.sinks {
		if !sq.matches(k, an.Approval.RuleID, pack) {
			continue
		}
		select {
		case sq.q <- job{n: an, kind: k, pack: pack}:
		default:
			n.drop(sq.Name, "the sink's queue is full (its receiver is slow or down)")
		}
	}
}

// deliverAll delivers a sink's jobs in order until its queue is closed.
// After Close's deadline, what is left is dropped.
func (n *Notifier) deliverAll(sq *sinkQueue) {
	defer n.wg.Done()
	for j := range sq.q {
		if n.ctx.Err() != nil {
			n.drop(sq.Name, "shutting down")
			continue
		}
		n.deliver(sq, j)
	}
}

// Close stops taking notices, delivers those already queued until ctx
// ends (each tried once more at most after Close was called), then
// aborts what is left, and returns when every goroutine of n has ended.
// It returns ctx's error when deliveries were cut short.
func (n *Notifier) Close(ctx context.Context) error {
	var err error
	n.once.Do(func() {
		n.closed.Store(true)
		close(n.stop)
		done := make(chan struct{})
		go func() { n.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			err = ctx.Err()
			n.cancel()
			<-done
		}
		n.cancel()
	})
	return err
}

// errPermanent marks a failure that retrying cannot fix.
var errPermanent = errors.New("not retried")

// drainLimit bounds the response body read (and thrown away).
const drainLimit = 4 << 10

// discard reads at most drainLimit bytes of r, so that the connection can
// be reused, and returns the first of them for an error message.
func discard(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, drainLimit))
	return cut(string(b), 120)
}
