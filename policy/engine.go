package policy

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/protocol"
)

// Engine holds the active policy Set and swaps it atomically. Evaluate may
// run concurrently with Load and Swap: each evaluation uses the set that was
// active when it started. A Load that fails leaves the active set in place,
// which is what a hot reload needs (the caller watches files or SIGHUP and
// calls Load).
type Engine struct {
	opts    Options
	set     atomic.Pointer[Set]
	metrics *metrics
	loaded  atomic.Int64 // Unix nanoseconds when the active set was installed
	loads   atomic.Int64 // sets installed so far, the first included
}

// NewEngine compiles the sources with opts and returns an engine running
// them. With no sources only the enabled packs apply. When
// opts.Registerer is set, the engine's metrics are registered on it.
func NewEngine(opts Options, sources ...Source) (*Engine, error) {
	set, err := Compile(opts, sources...)
	if err != nil {
		return nil, err
	}
	e := &Engine{opts: opts}
	if opts.Registerer != nil {
		m, err := newMetrics(opts.Registerer)
		if err != nil {
			return nil, err
		}
		e.metrics = m
	}
	e.install(set)
	return e, nil
}

// Load compiles sources with the engine's options and, if they compile,
// makes them the active set. On error the active set keeps running and the
// error (a *LoadError for policy problems) says why the new one was refused.
func (e *Engine) Load(sources ...Source) error {
	set, err := Compile(e.opts, sources...)
	if err != nil {
		e.metrics.load(false)
		return err
	}
	e.install(set)
	e.metrics.load(true)
	return nil
}

// LoadFiles reads and loads policy files (see Load).
func (e *Engine) LoadFiles(paths ...string) error {
	srcs, err := ReadFiles(paths...)
	if err != nil {
		e.metrics.load(false)
		return err
	}
	return e.Load(srcs...)
}

// Swap makes set the active set and returns the previous one. Use it to
// install a set compiled with other options.
func (e *Engine) Swap(set *Set) (*Set, error) {
	if set == nil {
		return nil, errors.New("policy: cannot install a nil set")
	}
	old := e.set.Swap(set)
	e.installed()
	e.metrics.rules(set)
	return old, nil
}

func (e *Engine) install(set *Set) {
	e.set.Store(set)
	e.installed()
	e.metrics.rules(set)
}

func (e *Engine) installed() {
	e.loaded.Store(time.Now().UnixNano())
	e.loads.Add(1)
}

// LoadedAt returns when the active set was installed (by NewEngine, a
// successful Load or Swap).
func (e *Engine) LoadedAt() time.Time { return time.Unix(0, e.loaded.Load()) }

// Loads returns how many sets the engine has installed, the first one
// included: 1 means the policy was never reloaded.
func (e *Engine) Loads() int64 { return e.loads.Load() }

// Set returns the active set.
func (e *Engine) Set() *Set { return e.set.Load() }

// Version returns the active set's version.
func (e *Engine) Version() string { return e.set.Load().Version() }

// Evaluate decides on one event with the active set.
func (e *Engine) Evaluate(in *Input) Result {
	res := e.set.Load().Evaluate(in)
	e.metrics.decision(&res)
	return res
}

// metrics are the engine's Prometheus metrics; a nil *metrics records
// nothing.
type metrics struct {
	decisions  map[protocol.DecisionKind]prometheus.Counter
	evalErrors prometheus.Counter
	loadsOK    prometheus.Counter
	loadsError prometheus.Counter
	ruleCount  prometheus.Gauge
	shadow     *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	decisions := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ahp_policy_decisions_total",
		Help: "Policy decisions by kind.",
	}, []string{"decision"})
	evalErrors := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ahp_policy_eval_errors_total",
		Help: "Rule evaluations that failed and were answered with a fail-closed block.",
	})
	loads := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ahp_policy_loads_total",
		Help: "Policy loads by result (ok or error); a failed load keeps the previous policy.",
	}, []string{"result"})
	ruleCount := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ahp_policy_rules",
		Help: "Rules in the active policy set, packs included.",
	})
	shadow := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ahp_shadow_decisions_total",
		Help: "What shadow rules would have decided, by rule and decision; never the decision returned.",
	}, []string{"rule", "decision"})
	for _, c := range []prometheus.Collector{decisions, evalErrors, loads, ruleCount, shadow} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	m := &metrics{
		decisions:  map[protocol.DecisionKind]prometheus.Counter{},
		evalErrors: evalErrors,
		loadsOK:    loads.WithLabelValues("ok"),
		loadsError: loads.WithLabelValues("error"),
		ruleCount:  ruleCount,
		shadow:     shadow,
	}
	for _, k := range []protocol.DecisionKind{protocol.DecisionAllow, protocol.DecisionBlock,
		protocol.DecisionModify, protocol.DecisionDefer, protocol.DecisionEscalate} {
		m.decisions[k] = decisions.WithLabelValues(string(k))
	}
	return m, nil
}

func (m *metrics) decision(r *Result) {
	if m == nil {
		return
	}
	if c := m.decisions[r.Decision.Kind]; c != nil {
		c.Inc()
	}
	if r.Err != nil {
		m.evalErrors.Inc()
	}
	for i := range r.Shadow {
		m.shadow.WithLabelValues(r.Shadow[i].RuleID, string(r.Shadow[i].Decision)).Inc()
	}
}

func (m *metrics) load(ok bool) {
	if m == nil {
		return
	}
	if ok {
		m.loadsOK.Inc()
	} else {
		m.loadsError.Inc()
	}
}

func (m *metrics) rules(s *Set) {
	if m != nil {
		m.ruleCount.Set(float64(len(s.rules)))
	}
}
