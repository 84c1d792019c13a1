package service

import (
	"context"
	"net/url"
	"time"

	"github.com/ahp-go/ahp/telemetry"
)

// telemetryFlushTimeout bounds the last export at Close.
const telemetryFlushTimeout = 5 * time.Second

// startTelemetry builds the OTLP exporter when the configuration or the
// standard OTEL_* environment asks for one, and makes it an observer of
// the decisions. When export is off nothing is built and the decision path
// is unchanged.
func (s *Service) startTelemetry() error {
	tc := s.cfg.Telemetry
	o := telemetry.Options{
		Enabled: tc.Enabled, Endpoint: tc.Endpoint, Protocol: tc.Protocol,
		NoTraces: !tc.Traces, NoMetrics: !tc.Metrics, MetricsInterval: tc.MetricsInterval.D(),
		ServiceName: s.cfg.Harness.Name, ServiceVersion: s.opts.version(), Logger: s.log,
	}
	if s.reg != nil {
		o.Gatherer, o.Registerer = s.reg, s.reg
	}
	if !o.On() {
		return nil
	}
	if s.h == nil {
		s.log.Warn("telemetry is configured but --protocol-only records nothing: no export")
		return nil
	}
	tel, err := telemetry.New(context.Background(), o)
	if err != nil {
		return err
	}
	s.tel = tel
	s.obs.add(tel)
	endpoint := "from OTEL_EXPORTER_OTLP_* or the SDK default"
	if u, err := url.Parse(tc.Endpoint); err == nil && tc.Endpoint != "" {
		endpoint = u.Redacted()
	}
	s.log.Info("OpenTelemetry export on", "endpoint", endpoint, "traces", tc.Traces, "metrics", tc.Metrics && s.reg != nil)
	return nil
}

// stopTelemetry turns the decisions still queued into spans and flushes
// spans and metrics to the collector, within telemetryFlushTimeout.
func (s *Service) stopTelemetry() {
	if s.tel == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), telemetryFlushTimeout)
	defer cancel()
	if err := s.tel.Shutdown(ctx); err != nil {
		s.log.Warn("telemetry not flushed", "error", err)
	}
}
