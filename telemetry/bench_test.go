package telemetry_test

import (
	"context"
	"testing"

	"github.com/ahp-go/ahp/telemetry"
	"github.com/ahp-go/ahp/telemetry/otlptest"
)

// BenchmarkRecorded is what export adds to a decision on the agent's path
// when it is on: Exporter.Recorded queues the record (the span is built on
// the exporter's goroutine). The queue is large enough here that nothing
// is dropped: this is the cost of a send.
func BenchmarkRecorded(b *testing.B) {
	recv := otlptest.NewHTTP(b)
	e, err := telemetry.New(context.Background(), telemetry.Options{Enabled: true, Endpoint: recv.Endpoint, Getenv: noEnv, QueueSize: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Shutdown(context.Background())
	rec := decision(`{"traceparent":"00-` + agentTrace + `-` + agentSpan + `-01"}`)
	b.ReportAllocs()
	for b.Loop() {
		e.Recorded(rec)
	}
	b.ReportMetric(float64(e.Dropped()), "dropped")
}
