// Package otlptest is an in-process OTLP receiver for tests: it accepts
// trace and metric exports over HTTP/protobuf or gRPC on a loopback port
// and records what it gets, as the OTLP protobuf messages.
package otlptest

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// MaxRequestBytes bounds one export request the receiver reads.
const MaxRequestBytes = 16 << 20

// Receiver records the OTLP exports it receives. Its methods are safe for
// concurrent use.
type Receiver struct {
	// Endpoint is the base URL an exporter is given
	// (http://127.0.0.1:PORT, for either protocol).
	Endpoint string

	mu      sync.Mutex
	traces  []*colltrace.ExportTraceServiceRequest
	metrics []*collmetrics.ExportMetricsServiceRequest
	notify  chan struct{}
}

func newReceiver() *Receiver { return &Receiver{notify: make(chan struct{}, 1)} }

func (r *Receiver) gotTraces(req *colltrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	r.traces = append(r.traces, req)
	r.mu.Unlock()
	r.poke()
}

func (r *Receiver) gotMetrics(req *collmetrics.ExportMetricsServiceRequest) {
	r.mu.Lock()
	r.metrics = append(r.metrics, req)
	r.mu.Unlock()
	r.poke()
}

func (r *Receiver) poke() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// Spans returns every span received so far, in order.
func (r *Receiver) Spans() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, req := range r.traces {
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				out = append(out, ss.GetSpans()...)
			}
		}
	}
	return out
}

// TraceRequests returns the trace export requests received so far.
func (r *Receiver) TraceRequests() []*colltrace.ExportTraceServiceRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*colltrace.ExportTraceServiceRequest(nil), r.traces...)
}

// Metrics returns every metric received so far, in order.
func (r *Receiver) Metrics() []*metricspb.Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*metricspb.Metric
	for _, req := range r.metrics {
		for _, rm := range req.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				out = append(out, sm.GetMetrics()...)
			}
		}
	}
	return out
}

// WaitSpans waits until at least n spans were received or d passed, and
// returns the spans received.
func (r *Receiver) WaitSpans(n int, d time.Duration) []*tracepb.Span {
	deadline := time.After(d)
	for {
		if s := r.Spans(); len(s) >= n {
			return s
		}
		select {
		case <-r.notify:
		case <-deadline:
			return r.Spans()
		}
	}
}

// NewHTTP starts an OTLP/HTTP (protobuf) receiver on /v1/traces and
// /v1/metrics; it stops when the test ends.
func NewHTTP(t testing.TB) *Receiver {
	r := newReceiver()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var m colltrace.ExportTraceServiceRequest
		if !readProto(w, req, &m) {
			return
		}
		r.gotTraces(&m)
		writeProto(w, &colltrace.ExportTraceServiceResponse{})
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		var m collmetrics.ExportMetricsServiceRequest
		if !readProto(w, req, &m) {
			return
		}
		r.gotMetrics(&m)
		writeProto(w, &collmetrics.ExportMetricsServiceResponse{})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r.Endpoint = srv.URL
	return r
}

func readProto(w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	var body io.Reader = http.MaxBytesReader(w, req.Body, MaxRequestBytes)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		body = io.LimitReader(zr, MaxRequestBytes)
	}
	b, err := io.ReadAll(body)
	if err == nil {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func writeProto(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = io.Copy(w, bytes.NewReader(b))
}

// NewGRPC starts an OTLP/gRPC receiver (plaintext); it stops when the test
// ends.
func NewGRPC(t testing.TB) *Receiver {
	r := newReceiver()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(MaxRequestBytes))
	colltrace.RegisterTraceServiceServer(srv, grpcTraces{r: r})
	collmetrics.RegisterMetricsServiceServer(srv, grpcMetrics{r: r})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	r.Endpoint = "http://" + ln.Addr().String()
	return r
}

type grpcTraces struct {
	colltrace.UnimplementedTraceServiceServer
	r *Receiver
}

func (g grpcTraces) Export(_ context.Context, req *colltrace.ExportTraceServiceRequest) (*colltrace.ExportTraceServiceResponse, error) {
	g.r.gotTraces(req)
	return &colltrace.ExportTraceServiceResponse{}, nil
}

type grpcMetrics struct {
	collmetrics.UnimplementedMetricsServiceServer
	r *Receiver
}

func (g grpcMetrics) Export(_ context.Context, req *collmetrics.ExportMetricsServiceRequest) (*collmetrics.ExportMetricsServiceResponse, error) {
	g.r.gotMetrics(req)
	return &collmetrics.ExportMetricsServiceResponse{}, nil
}
