package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/service"
)

// BenchmarkServiceDecision measures one decision of the harness that
// service.New builds from the default configuration (default packs,
// SQLite audit log, no OTEL_* variables: telemetry off), called directly
// on the harness. It uses only what existed before telemetry, so the same
// file measures a tree without it (bench/README.md, "OpenTelemetry").
func BenchmarkServiceDecision(b *testing.B) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		b.Setenv(k, "")
	}
	c := config.Default()
	c.DataDir = filepath.Join(b.TempDir(), "data")
	c.Listen, c.Admin = nil, ""
	benchDecisions(b, c)
}

// benchDecisions decides pre_action events on the harness c builds.
func benchDecisions(b *testing.B, c config.Config) {
	svc, err := service.New(c, service.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	events := make([]*protocol.Event, 64)
	for i := range events {
		p, _ := json.Marshal(map[string]any{"tool_name": "Bash", "arguments": map[string]string{"command": fmt.Sprintf("ls -la src/%d", i)}})
		events[i] = &protocol.Event{EventType: protocol.EventPreAction, SessionID: fmt.Sprintf("s%d", i%8), AgentID: "coder",
			Timestamp: "2026-11-21T10:00:00Z", Payload: p,
			Metadata: json.RawMessage(`{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`)}
	}
	h, ctx := svc.Harness(), context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := h.HandleEvent(ctx, events[i%len(events)]); err != nil {
			b.Fatal(err)
		}
	}
}
