package runs

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Reducer's counters.
type metrics struct {
	events    *prometheus.CounterVec // by kind and outcome
	conflicts prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ahp_runs_events_total",
			Help: "Run events reduced (run contract events, and the harness's connection_ended), by kind and outcome (applied, duplicate, out_of_order, illegal_transition, rejected, ignored, error).",
		}, []string{"kind", "outcome"}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ahp_runs_update_conflicts_total",
			Help: "Run record updates retried because the record changed concurrently.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.events, m.conflicts} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("runs: register metrics: %w", err)
		}
	}
	return m, nil
}
