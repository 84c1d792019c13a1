package config

import (
	"strings"
	"testing"
	"time"
)

func TestTelemetrySettings(t *testing.T) {
	if d := Default().Telemetry; d.Enabled || !d.Traces || !d.Metrics {
		t.Fatalf("default telemetry %+v, want off with both signals ready", d)
	}
	c := Default()
	text := "telemetry:\n  enabled: true\n  endpoint: http://127.0.0.1:4317\n  protocol: grpc\n  metrics: false\n  metrics_interval: 15s\n"
	if err := Parse([]byte(text), &c); err != nil {
		t.Fatal(err)
	}
	tc := c.Telemetry
	if !tc.Enabled || tc.Endpoint != "http://127.0.0.1:4317" || tc.Protocol != "grpc" || !tc.Traces || tc.Metrics || tc.MetricsInterval.D() != 15*time.Second {
		t.Fatalf("parsed %+v", tc)
	}
	if err := ValidateYAML([]byte(text)); err != nil {
		t.Fatalf("schema: %v", err)
	}
	for text, want := range map[string]string{
		"telemetry:\n  protocol: http/json\n":      `telemetry.protocol: "http/json" is not one of http/protobuf, grpc`,
		"telemetry:\n  endpoint: collector:4318\n": `telemetry.endpoint: "collector:4318" is not an http:// or https:// URL with a host`,
	} {
		c := Default()
		if err := Parse([]byte(text), &c); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %s", text, err, want)
		}
		if ValidateYAML([]byte(text)) == nil {
			t.Errorf("%q: the schema accepts it", text)
		}
	}
}
