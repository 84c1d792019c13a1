package harness

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
)

// ShadowPolicy is a candidate policy evaluated beside the live one on
// live traffic. After the live decision, the candidate decides the same
// input; where the two disagree (decision or deciding rule), the
// candidate's verdict goes into the event's audit record. It never changes
// the answer, and a failure of the candidate is recorded, not passed on.
type ShadowPolicy struct {
	// Engine runs the candidate policy. Required. Reload it together with
	// the live engine (see policy.LoadWithShadow).
	Engine *policy.Engine
	// Sample is the fraction of events the candidate decides, in (0, 1];
	// 0 means every event.
	Sample float64
	// Metrics, when set, counts the candidate's evaluations.
	Metrics *ShadowMetrics
}

// maxShadowText bounds each reason and error kept in a shadow verdict.
const maxShadowText = 1 << 10

// ShadowVerdicts is the JSON of store.AuditRecord.Shadow: the live policy's
// verdict, then what its shadow rules and the shadow policy would have
// decided instead (docs/shadow.md).
type ShadowVerdicts struct {
	// Live is the live policy's decision (before any human approval).
	Live ShadowVerdict `json:"live"`
	// Rules are the shadow rules that matched, in priority order.
	Rules []ShadowVerdict `json:"rules,omitempty"`
	// Policy is the shadow policy's verdict when it disagrees with Live.
	Policy *ShadowVerdict `json:"policy,omitempty"`
}

// ShadowVerdict is one rule's or policy's verdict on an event.
type ShadowVerdict struct {
	// RuleID is the deciding rule, "" for a default outcome.
	RuleID string `json:"rule_id"`
	// Pack is the rule's built-in pack, if any.
	Pack     string `json:"pack,omitempty"`
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
	// Changes reports that this verdict, enforced, would have changed the
	// decision of the event.
	Changes bool `json:"changes,omitempty"`
	// PolicyVersion is the shadow policy's version (Policy only).
	PolicyVersion string `json:"policy_version,omitempty"`
	// Error is why evaluating failed (the verdict is then a fail-closed
	// block).
	Error string `json:"error,omitempty"`
}

// shadowPolicy runs the shadow policy, if any, on in after the live
// decision and adds its verdict to live.Shadow when the two disagree.
func (h *Harness) shadowPolicy(in *policy.Input, live *policy.Result) {
	sp := h.opts.Shadow
	if sp == nil || sp.Engine == nil {
		return
	}
	if sp.Sample > 0 && sp.Sample < 1 && rand.Float64() >= sp.Sample {
		sp.Metrics.skipped()
		return
	}
	start := time.Now()
	set := sp.Engine.Set()
	cand, err := evaluateCandidate(set, in)
	took := time.Since(start)
	if err != nil {
		live.Shadow = append(live.Shadow, policy.ShadowMatch{Decision: protocol.DecisionBlock,
			Reason: "the shadow policy failed", Err: err, Policy: set.Version()})
		sp.Metrics.evaluated("failed", "", "", took)
		h.log.Warn("shadow policy evaluation failed; the live decision stands", "error", err)
		return
	}
	if cand.Decision.Kind == live.Decision.Kind && cand.RuleID == live.RuleID {
		sp.Metrics.evaluated("agree", "", "", took)
		return
	}
	live.Shadow = append(live.Shadow, policy.ShadowMatch{
		RuleID: cand.RuleID, Pack: cand.Pack, Decision: cand.Decision.Kind, Reason: cand.Decision.Reason,
		Changes: cand.Decision.Kind != live.Decision.Kind, Err: cand.Err, Policy: set.Version(),
	})
	sp.Metrics.evaluated("disagree", live.Decision.Kind, cand.Decision.Kind, took)
}

// evaluateCandidate evaluates set, turning a panic into an error.
func evaluateCandidate(set *policy.Set, in *policy.Input) (res policy.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("shadow policy: evaluation panicked: %v", p)
		}
	}()
	return set.Evaluate(in), nil
}

// shadowRecord returns the shadow verdicts of res as stored (redacted with
// the event), and whether one would have changed the outcome; nil when
// nothing ran in shadow.
func (h *Harness) shadowRecord(se *sealed, res *policy.Result) (json.RawMessage, bool) {
	if res == nil || len(res.Shadow) == 0 {
		return nil, false
	}
	v := ShadowVerdicts{Live: ShadowVerdict{RuleID: res.RuleID, Decision: string(res.Decision.Kind)}}
	changed := false
	for i := range res.Shadow {
		m := &res.Shadow[i]
		sv := ShadowVerdict{RuleID: m.RuleID, Pack: m.Pack, Decision: string(m.Decision),
			Reason: clipShadow(m.Reason), Changes: m.Changes, PolicyVersion: m.Policy}
		if m.Err != nil {
			sv.Error = clipShadow(m.Err.Error())
		}
		changed = changed || m.Changes
		if m.Policy != "" {
			v.Policy = &sv
		} else {
			v.Rules = append(v.Rules, sv)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	out, k := se.r.JSON(b)
	se.kinds.Merge(k)
	return out, changed
}

// clipShadow shortens s to maxShadowText bytes, on a rune boundary.
func clipShadow(s string) string {
	if len(s) <= maxShadowText {
		return s
	}
	n := maxShadowText
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// ShadowMetrics are the shadow policy's Prometheus measurements. A nil
// *ShadowMetrics records nothing. (What shadow rules would have decided is
// counted by the policy engine, as ahp_shadow_decisions_total.)
type ShadowMetrics struct {
	evals     *prometheus.CounterVec
	disagree  *prometheus.CounterVec
	skips     prometheus.Counter
	durations prometheus.Histogram
}

// NewShadowMetrics registers the shadow policy metrics on reg.
func NewShadowMetrics(reg prometheus.Registerer) (*ShadowMetrics, error) {
	m := &ShadowMetrics{
		evals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ahp_shadow_policy_evaluations_total",
			Help: "Events the shadow policy decided, by result: agree, disagree (decision or rule) or failed.",
		}, []string{"result"}),
		disagree: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ahp_shadow_policy_disagreements_total",
			Help: "Events the shadow policy would have decided differently, by live and candidate decision.",
		}, []string{"live", "candidate"}),
		skips: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ahp_shadow_policy_skipped_total",
			Help: "Events the shadow policy did not decide because of sampling.",
		}),
		durations: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ahp_shadow_policy_duration_seconds",
			Help:    "Time the shadow policy took to decide one event (added to the live answer's latency).",
			Buckets: []float64{.000001, .0000025, .000005, .00001, .000025, .00005, .0001, .00025, .001, .01},
		}),
	}
	for _, c := range []prometheus.Collector{m.evals, m.disagree, m.skips, m.durations} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *ShadowMetrics) evaluated(result string, live, cand protocol.DecisionKind, d time.Duration) {
	if m == nil {
		return
	}
	m.evals.WithLabelValues(result).Inc()
	if result == "disagree" && live != cand {
		m.disagree.WithLabelValues(string(live), string(cand)).Inc()
	}
	m.durations.Observe(d.Seconds())
}

func (m *ShadowMetrics) skipped() {
	if m != nil {
		m.skips.Inc()
	}
}
