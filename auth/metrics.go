package auth

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts refused peers. One Metrics may be shared by all
// transports of a process; NewMetrics on a registry that already holds the
// counter reuses it, so each transport may call it on its own.
type Metrics struct {
	refusals *prometheus.CounterVec
}

// NewMetrics registers ahp_auth_refusals_total{transport,reason} on reg,
// or reuses the counter already registered there. With a nil reg the
// counter works but is not exported.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	cv := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ahp_auth_refusals_total",
		Help: "Peers refused by authentication or authorization, by transport and reason.",
	}, []string{"transport", "reason"})
	if reg != nil {
		if err := reg.Register(cv); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, fmt.Errorf("auth: registering metrics: %w", err)
			}
			existing, ok := are.ExistingCollector.(*prometheus.CounterVec)
			if !ok {
				return nil, fmt.Errorf("auth: registering metrics: %w", err)
			}
			cv = existing
		}
	}
	return &Metrics{refusals: cv}, nil
}

// Refused counts one refusal. A nil *Metrics counts nothing.
func (m *Metrics) Refused(transport, reason string) {
	if m == nil {
		return
	}
	m.refusals.WithLabelValues(transport, reason).Inc()
}
