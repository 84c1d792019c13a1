package telemetry

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Protocols an Exporter speaks (the values of OTEL_EXPORTER_OTLP_PROTOCOL
// that the Go SDK implements).
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Standard OpenTelemetry environment variables read by this package (the
// SDK's exporters read the other OTEL_EXPORTER_OTLP_* variables: headers,
// timeouts, compression, certificates).
const (
	envEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envMetricsEndpoint = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
	envProtocol        = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol  = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envMetricsProtocol = "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"
	envSDKDisabled     = "OTEL_SDK_DISABLED"
	envTracesExporter  = "OTEL_TRACES_EXPORTER"
	envMetricsExporter = "OTEL_METRICS_EXPORTER"
)

// Options configure an Exporter. Empty fields fall back to the standard
// OTEL_* environment variables, then to the SDK's defaults.
type Options struct {
	// Enabled turns export on. Export is also on when an OTLP endpoint is
	// set in the environment (OTEL_EXPORTER_OTLP_ENDPOINT or its _TRACES_
	// or _METRICS_ variant); OTEL_SDK_DISABLED=true turns it off whatever
	// else says.
	Enabled bool
	// Endpoint is the collector's base URL (http://collector:4318 for
	// HTTP, http://collector:4317 for gRPC; https:// for TLS). Empty: the
	// environment, else the SDK default on localhost. For HTTP the signal
	// paths /v1/traces and /v1/metrics are appended.
	Endpoint string
	// Protocol is http/protobuf or grpc. Empty: OTEL_EXPORTER_OTLP_*_PROTOCOL,
	// else http/protobuf.
	Protocol string
	// NoTraces and NoMetrics switch one signal off (as do
	// OTEL_TRACES_EXPORTER=none and OTEL_METRICS_EXPORTER=none).
	NoTraces, NoMetrics bool
	// MetricsInterval is the period of metric exports (0:
	// OTEL_METRIC_EXPORT_INTERVAL, else 60s).
	MetricsInterval time.Duration
	// ServiceName and ServiceVersion describe the resource (service.name
	// defaults to "ahp"; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// override both).
	ServiceName, ServiceVersion string
	// Gatherer holds the metrics to export (none when nil).
	Gatherer prometheus.Gatherer
	// Registerer, when set, receives the exporter's own counters (spans
	// dropped because the queue was full).
	Registerer prometheus.Registerer
	// QueueSize bounds the decisions waiting to become spans (4096 when 0);
	// beyond it they are dropped and counted, never waited for.
	QueueSize int
	// Logger receives export errors (discarded when nil).
	Logger *slog.Logger
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
}

func (o *Options) getenv(k string) string {
	if o.Getenv != nil {
		return o.Getenv(k)
	}
	return os.Getenv(k)
}

// On reports whether export is on: Enabled, or an OTLP endpoint in the
// environment, and not OTEL_SDK_DISABLED=true, and at least one signal on.
func (o *Options) On() bool {
	if strings.EqualFold(strings.TrimSpace(o.getenv(envSDKDisabled)), "true") {
		return false
	}
	if !o.traces() && !o.metrics() {
		return false
	}
	return o.Enabled || o.getenv(envEndpoint) != "" || o.getenv(envTracesEndpoint) != "" || o.getenv(envMetricsEndpoint) != ""
}

func (o *Options) traces() bool {
	return !o.NoTraces && strings.TrimSpace(o.getenv(envTracesExporter)) != "none"
}

func (o *Options) metrics() bool {
	return !o.NoMetrics && o.Gatherer != nil && strings.TrimSpace(o.getenv(envMetricsExporter)) != "none"
}

// protocol returns the protocol of one signal (signalEnv is its
// OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL variable).
func (o *Options) protocol(signalEnv string) (string, error) {
	p := o.Protocol
	if p == "" {
		p = o.getenv(signalEnv)
	}
	if p == "" {
		p = o.getenv(envProtocol)
	}
	switch p = strings.TrimSpace(p); p {
	case "":
		return ProtocolHTTP, nil
	case ProtocolHTTP, ProtocolGRPC:
		return p, nil
	}
	return "", fmt.Errorf("telemetry: OTLP protocol %q is not supported (want %s or %s)", p, ProtocolHTTP, ProtocolGRPC)
}

// CheckProtocol reports an error when p is neither empty, http/protobuf
// nor grpc.
func CheckProtocol(p string) error {
	o := Options{Protocol: p, Getenv: func(string) string { return "" }}
	_, err := o.protocol("")
	return err
}
