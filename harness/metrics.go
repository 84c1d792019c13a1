package harness

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/protocol"
)

// Metrics are the harness's Prometheus measurements. A nil *Metrics
// records nothing.
type Metrics struct {
	decisions     *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	notifications *prometheus.CounterVec
	rejectedC     prometheus.Counter
	pending       prometheus.Gauge
}

// NewMetrics registers the harness metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ahp_decisions_total", Help: "Decisions returned, by event type, outcome and rule.",
		}, []string{"event_type", "outcome", "rule"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ahp_decision_duration_seconds", Help: "Time from an event's arrival to its recorded decision.",
			Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .05, .25, 1, 10, 60, 600},
		}, []string{"event_type"}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ahp_notifications_total", Help: "Fire-and-forget events received, by event type.",
		}, []string{"event_type"}),
		rejectedC: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ahp_events_rejected_total", Help: "Events refused by the protocol rules without an answer.",
		}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ahp_approvals_pending", Help: "Requests waiting for a human approval.",
		}),
	}
	for _, c := range []prometheus.Collector{m.decisions, m.latency, m.notifications, m.rejectedC, m.pending} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) decided(t protocol.EventType, outcome any, rule string, d time.Duration) {
	if m == nil {
		return
	}
	o := ""
	switch v := outcome.(type) {
	case protocol.DecisionKind:
		o = string(v)
	case string:
		o = v
	}
	m.decisions.WithLabelValues(string(t), o, rule).Inc()
	m.latency.WithLabelValues(string(t)).Observe(d.Seconds())
}

func (m *Metrics) notified(t protocol.EventType) {
	if m != nil {
		m.notifications.WithLabelValues(string(t)).Inc()
	}
}

func (m *Metrics) rejected() {
	if m != nil {
		m.rejectedC.Inc()
	}
}

func (m *Metrics) pendingChanged(delta float64) {
	if m != nil {
		m.pending.Add(delta)
	}
}
