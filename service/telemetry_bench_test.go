package service_test

import (
	"path/filepath"
	"testing"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/telemetry/otlptest"
)

// BenchmarkServiceDecisionOTLP is BenchmarkServiceDecision with telemetry
// on, exporting every decision to an in-process OTLP/HTTP receiver: the
// cost of export when it is on.
func BenchmarkServiceDecisionOTLP(b *testing.B) {
	recv := otlptest.NewHTTP(b)
	c := config.Default()
	c.DataDir = filepath.Join(b.TempDir(), "data")
	c.Listen, c.Admin = nil, ""
	c.Telemetry.Enabled, c.Telemetry.Endpoint = true, recv.Endpoint
	benchDecisions(b, c)
}
