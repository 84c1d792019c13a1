package notify

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// AllSinks is the sink label of notices dropped before they were sorted to
// sinks (the shared queue was full, or the notifier was closed).
const AllSinks = "*"

// metrics are the notifier's Prometheus counters, by sink name.
type metrics struct {
	sent, failed, dropped, retries *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	vec := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"sink"})
	}
	m := &metrics{
		sent:    vec("ahp_approval_webhooks_sent_total", "Approval notifications a webhook accepted (2xx)."),
		failed:  vec("ahp_approval_webhooks_failed_total", "Approval notifications given up after their attempts, or refused by the receiver (4xx)."),
		dropped: vec("ahp_approval_webhooks_dropped_total", "Approval notifications dropped unsent: queue full or shutting down (sink \"*\": before sorting)."),
		retries: vec("ahp_approval_webhooks_retries_total", "Approval notification attempts after a first failed one."),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.sent, m.failed, m.dropped, m.retries} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("notify: metrics: %w", err)
		}
	}
	return m, nil
}
