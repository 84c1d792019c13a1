package authtest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Refusals returns the value of ahp_auth_refusals_total{transport, reason}
// in g, or 0 when that series does not exist.
func Refusals(t testing.TB, g prometheus.Gatherer, transport, reason string) float64 {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "ahp_auth_refusals_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["transport"] == transport && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
