package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	promb "go.opentelemetry.io/contrib/bridges/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/store"
)

// ScopeName is the instrumentation scope of the decision spans.
const ScopeName = "github.com/ahp-go/ahp/harness"

// defaultQueueSize bounds the decisions waiting to become spans.
const defaultQueueSize = 4096

// Exporter sends decisions as spans and the harness's metrics over OTLP.
// It implements harness.Observer: Recorded only queues the record (or
// drops it when the queue is full), and a goroutine turns records into
// spans, which the SDK batches and sends. Shutdown flushes.
type Exporter struct {
	log    *slog.Logger
	tp     *sdktrace.TracerProvider // nil when traces are off
	mp     *sdkmetric.MeterProvider // nil when metrics are off
	tracer trace.Tracer

	queue   chan *store.AuditRecord
	stop    chan struct{}
	done    chan struct{}
	closed  atomic.Bool
	dropped atomic.Uint64

	shutdownOnce sync.Once
	shutdownErr  error
}

// New returns an Exporter for o, or nil and no error when o says export
// is off (see Options.On). Nothing is sent until a decision is recorded
// or a metric export is due; a collector that is down only costs failed
// exports, logged, never a failed start.
func New(ctx context.Context, o Options) (*Exporter, error) {
	if !o.On() {
		return nil, nil
	}
	if err := CheckEndpoint(o.Endpoint); err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	name := o.ServiceName
	if name == "" {
		name = "ahp"
	}
	attrs := []resource.Option{resource.WithAttributes(semconv.ServiceName(name)), resource.WithTelemetrySDK(),
		resource.WithHost(), resource.WithProcessPID(), resource.WithFromEnv()}
	if o.ServiceVersion != "" {
		attrs = append(attrs, resource.WithAttributes(semconv.ServiceVersion(o.ServiceVersion)))
	}
	res, err := resource.New(ctx, attrs...)
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	// The SDK reports failed exports here; the error names the endpoint,
	// never the headers.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("telemetry export failed", "error", err) }))
	e := &Exporter{log: log, stop: make(chan struct{}), done: make(chan struct{})}
	if o.traces() {
		exp, err := traceExporter(ctx, &o)
		if err != nil {
			return nil, err
		}
		e.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		e.tracer = e.tp.Tracer(ScopeName)
	}
	if o.metrics() {
		exp, err := metricExporter(ctx, &o)
		if err != nil {
			_ = e.shutdownProviders(ctx)
			return nil, err
		}
		ropts := []sdkmetric.PeriodicReaderOption{sdkmetric.WithProducer(promb.NewMetricProducer(promb.WithGatherer(o.Gatherer)))}
		if o.MetricsInterval > 0 {
			ropts = append(ropts, sdkmetric.WithInterval(o.MetricsInterval))
		}
		e.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, ropts...)), sdkmetric.WithResource(res))
	}
	if o.Registerer != nil {
		c := prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "ahp_telemetry_spans_dropped_total",
			Help: "Decisions not exported as spans because the telemetry queue was full.",
		}, func() float64 { return float64(e.dropped.Load()) })
		if err := o.Registerer.Register(c); err != nil {
			_ = e.shutdownProviders(ctx)
			return nil, fmt.Errorf("telemetry: %w", err)
		}
	}
	n := o.QueueSize
	if n <= 0 {
		n = defaultQueueSize
	}
	e.queue = make(chan *store.AuditRecord, n)
	go e.run()
	return e, nil
}

// Recorded implements harness.Observer: a decision (a blocking event's
// record) is queued to become a span; other records are ignored. It never
// blocks: when the queue is full the decision is dropped and counted.
func (e *Exporter) Recorded(rec *store.AuditRecord) {
	if !rec.Blocking || e.tracer == nil || e.closed.Load() {
		return
	}
	select {
	case e.queue <- rec:
	default:
		e.dropped.Add(1)
	}
}

// ApprovalChanged implements harness.Observer; the decision span that
// waited for the approval already covers it.
func (e *Exporter) ApprovalChanged(store.Approval) {}

// Dropped returns how many decisions were not exported because the queue
// was full.
func (e *Exporter) Dropped() uint64 { return e.dropped.Load() }

// run turns queued records into spans until Shutdown, then drains the
// queue.
func (e *Exporter) run() {
	defer close(e.done)
	for {
		select {
		case rec := <-e.queue:
			e.export(rec)
		case <-e.stop:
			for {
				select {
				case rec := <-e.queue:
					e.export(rec)
				default:
					return
				}
			}
		}
	}
}

// Shutdown stops taking decisions, turns those queued into spans, and
// flushes spans and a last metrics export to the collector, within ctx.
// Later calls return the first one's result.
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.shutdownOnce.Do(func() {
		e.closed.Store(true)
		close(e.stop)
		select {
		case <-e.done:
		case <-ctx.Done():
		}
		e.shutdownErr = e.shutdownProviders(ctx)
	})
	return e.shutdownErr
}

func (e *Exporter) shutdownProviders(ctx context.Context) error {
	var errs []error
	if e.tp != nil {
		if err := e.tp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: flushing spans: %w", err))
		}
	}
	if e.mp != nil {
		if err := e.mp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: flushing metrics: %w", err))
		}
	}
	return errors.Join(errs...)
}

// CheckEndpoint reports an error when ep is neither empty nor an http://
// or https:// URL with a host.
func CheckEndpoint(ep string) error {
	if ep == "" {
		return nil
	}
	u, err := url.Parse(ep)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("telemetry: endpoint %q is not an http:// or https:// URL with a host", ep)
	}
	return nil
}

// signalURL appends an OTLP/HTTP signal path to a base endpoint.
func signalURL(base, path string) string { return strings.TrimRight(base, "/") + path }

func traceExporter(ctx context.Context, o *Options) (sdktrace.SpanExporter, error) {
	p, err := o.protocol(envTracesProtocol)
	if err != nil {
		return nil, err
	}
	var exp sdktrace.SpanExporter
	if p == ProtocolGRPC {
		var opts []otlptracegrpc.Option
		if o.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(o.Endpoint))
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	} else {
		var opts []otlptracehttp.Option
		if o.Endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(signalURL(o.Endpoint, "/v1/traces")))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: trace exporter: %w", err)
	}
	return exp, nil
}

func metricExporter(ctx context.Context, o *Options) (sdkmetric.Exporter, error) {
	p, err := o.protocol(envMetricsProtocol)
	if err != nil {
		return nil, err
	}
	var exp sdkmetric.Exporter
	if p == ProtocolGRPC {
		var opts []otlpmetricgrpc.Option
		if o.Endpoint != "" {
			opts = append(opts, otlpmetricgrpc.WithEndpointURL(o.Endpoint))
		}
		exp, err = otlpmetricgrpc.New(ctx, opts...)
	} else {
		var opts []otlpmetrichttp.Option
		if o.Endpoint != "" {
			opts = append(opts, otlpmetrichttp.WithEndpointURL(signalURL(o.Endpoint, "/v1/metrics")))
		}
		exp, err = otlpmetrichttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: metric exporter: %w", err)
	}
	return exp, nil
}
