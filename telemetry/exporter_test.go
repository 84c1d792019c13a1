package telemetry_test

import (
	"context"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/telemetry"
	"github.com/ahp-go/ahp/telemetry/otlptest"
)

const (
	agentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	agentSpan  = "00f067aa0ba902b7"
)

// noEnv isolates a test from the OTEL_* variables of the machine.
func noEnv(string) string { return "" }

// envOf returns a Getenv reading m.
func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// attrs returns a span's attributes as strings (lists joined by ",").
func attrs(s *tracepb.Span) map[string]string {
	out := map[string]string{}
	for _, kv := range s.GetAttributes() {
		out[kv.GetKey()] = anyString(kv.GetValue())
	}
	return out
}

func anyString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, anyString(e))
		}
		return strings.Join(parts, ",")
	}
	return ""
}

// decision is the record of a blocked pre_action as the harness stores it:
// the event's secret already replaced by a marker.
func decision(metadata string) *store.AuditRecord {
	ev := `{"event_type":"pre_action","session_id":"sess-1","agent_id":"coder","timestamp":"2026-11-21T10:00:00Z","depth":0,` +
		`"payload":{"tool_name":"Bash","arguments":{"command":"curl -H 'Authorization: [REDACTED:github_token:1a2b3c4d]' https://x"}}`
	if metadata != "" {
		ev += `,"metadata":` + metadata
	}
	ev += `}`
	return &store.AuditRecord{
		ID: 42, Time: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC), SessionID: "sess-1", AgentID: "coder",
		EventType: "pre_action", Blocking: true, Event: []byte(ev),
		Decision: []byte(`{"decision":"block","reason":"secret in tool arguments"}`), Outcome: "block",
		RuleID: "secrets.in_tool_arguments", PolicyVersion: "sha256:abc", Transport: "unix",
		Latency: 2500 * time.Microsecond, Redacted: []string{"github_token"},
	}
}

func newExporter(t *testing.T, o telemetry.Options) *telemetry.Exporter {
	t.Helper()
	if o.Getenv == nil {
		o.Getenv = noEnv
	}
	e, err := telemetry.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if e == nil {
		t.Fatal("New returned no exporter with export on")
	}
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	return e
}

// TestDecisionSpan: a decision becomes one span, over both protocols, with
// the semantic-convention attributes, its latency as duration, and the
// agent's traceparent as parent; the harness's metrics go along.
func TestDecisionSpan(t *testing.T) {
	for _, proto := range []string{telemetry.ProtocolHTTP, telemetry.ProtocolGRPC} {
		t.Run(proto, func(t *testing.T) {
			recv := otlptest.NewHTTP(t)
			if proto == telemetry.ProtocolGRPC {
				recv = otlptest.NewGRPC(t)
			}
			reg := prometheus.NewRegistry()
			c := prometheus.NewCounter(prometheus.CounterOpts{Name: "ahp_decisions_total", Help: "test"})
			reg.MustRegister(c)
			c.Add(3)
			e := newExporter(t, telemetry.Options{Enabled: true, Endpoint: recv.Endpoint, Protocol: proto,
				Gatherer: reg, ServiceName: "ahp-test", ServiceVersion: "1.2.3"})
			e.Recorded(decision(`{"traceparent":"00-` + agentTrace + `-` + agentSpan + `-01","tracestate":"vendor=x"}`))
			e.Recorded(&store.AuditRecord{EventType: "post_action", SessionID: "sess-1"}) // a notification: no span
			if err := e.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			spans := recv.Spans()
			if len(spans) != 1 {
				t.Fatalf("got %d spans, want 1 (the decision only)", len(spans))
			}
			s := spans[0]
			if got := hex.EncodeToString(s.GetTraceId()); got != agentTrace {
				t.Errorf("trace id %s, want the agent's %s", got, agentTrace)
			}
			if got := hex.EncodeToString(s.GetParentSpanId()); got != agentSpan {
				t.Errorf("parent span id %s, want the agent's %s", got, agentSpan)
			}
			if s.GetTraceState() != "vendor=x" {
				t.Errorf("trace state %q, want vendor=x", s.GetTraceState())
			}
			if s.GetName() != "decide pre_action" || s.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
				t.Errorf("span %q kind %v", s.GetName(), s.GetKind())
			}
			rec := decision("")
			if s.GetStartTimeUnixNano() != uint64(rec.Time.UnixNano()) || s.GetEndTimeUnixNano()-s.GetStartTimeUnixNano() != uint64(rec.Latency) {
				t.Errorf("span from %d to %d, want the event's arrival and its latency %v", s.GetStartTimeUnixNano(), s.GetEndTimeUnixNano(), rec.Latency)
			}
			want := map[string]string{
				"session.id": "sess-1", "gen_ai.agent.id": "coder", "gen_ai.tool.name": "Bash",
				"security_rule.name": "secrets.in_tool_arguments", "security_rule.version": "sha256:abc",
				"ahp.event.type": "pre_action", "ahp.decision.outcome": "block", "ahp.decision.latency_ms": "2.5",
				"ahp.transport": "unix", "ahp.audit.id": "42", "ahp.redacted": "github_token",
			}
			got := attrs(s)
			for k, v := range want {
				if got[k] != v {
					t.Errorf("attribute %s = %q, want %q", k, got[k], v)
				}
			}
			for k, v := range got {
				if strings.Contains(v, "Authorization") || strings.Contains(v, "curl") {
					t.Errorf("attribute %s carries the payload: %q", k, v)
				}
			}
			res := map[string]string{}
			for _, kv := range recv.TraceRequests()[0].GetResourceSpans()[0].GetResource().GetAttributes() {
				res[kv.GetKey()] = anyString(kv.GetValue())
			}
			if res["service.name"] != "ahp-test" || res["service.version"] != "1.2.3" {
				t.Errorf("resource %v, want service.name ahp-test and service.version 1.2.3", res)
			}
			var found bool
			for _, m := range recv.Metrics() {
				if m.GetName() == "ahp_decisions_total" {
					found = true
					if v := m.GetSum().GetDataPoints()[0].GetAsDouble(); v != 3 {
						t.Errorf("ahp_decisions_total = %v, want 3", v)
					}
				}
			}
			if !found {
				t.Error("the Prometheus metrics were not exported")
			}
		})
	}
}

// TestNoTraceparent: without (or with a malformed) traceparent the
// decision span starts a trace of its own.
func TestNoTraceparent(t *testing.T) {
	recv := otlptest.NewHTTP(t)
	e := newExporter(t, telemetry.Options{Enabled: true, Endpoint: recv.Endpoint})
	e.Recorded(decision(""))
	e.Recorded(decision(`{"traceparent":"00-not-a-trace-01"}`))
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := recv.Spans()
	if len(spans) != 2 {
		t.Fatalf("got %d spans, want 2", len(spans))
	}
	for _, s := range spans {
		if len(s.GetParentSpanId()) != 0 || hex.EncodeToString(s.GetTraceId()) == agentTrace {
			t.Errorf("span has a parent %x in trace %x, want a root span", s.GetParentSpanId(), s.GetTraceId())
		}
	}
	e.Recorded(decision("")) // after Shutdown: ignored, no panic
}

// TestOnOff: export is off unless configured or an OTLP endpoint is in the
// environment; OTEL_SDK_DISABLED and the per-signal "none" switch it off.
func TestOnOff(t *testing.T) {
	reg := prometheus.NewRegistry()
	for _, c := range []struct {
		name string
		o    telemetry.Options
		on   bool
	}{
		{"default", telemetry.Options{Getenv: noEnv, Gatherer: reg}, false},
		{"config", telemetry.Options{Enabled: true, Getenv: noEnv}, true},
		{"env endpoint", telemetry.Options{Getenv: envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})}, true},
		{"env traces endpoint", telemetry.Options{Getenv: envOf(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"})}, true},
		{"sdk disabled", telemetry.Options{Enabled: true, Getenv: envOf(map[string]string{"OTEL_SDK_DISABLED": "true"})}, false},
		{"both signals none", telemetry.Options{Enabled: true, Gatherer: reg, Getenv: envOf(map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"})}, false},
		{"traces off, no gatherer", telemetry.Options{Enabled: true, NoTraces: true, Getenv: noEnv}, false},
	} {
		if got := c.o.On(); got != c.on {
			t.Errorf("%s: On() = %v, want %v", c.name, got, c.on)
		}
		e, err := telemetry.New(context.Background(), c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if (e != nil) != c.on {
			t.Errorf("%s: New returned %v, want an exporter %v", c.name, e, c.on)
		}
		if e != nil {
			_ = e.Shutdown(context.Background())
		}
	}
}

// TestBadSettings: an unsupported protocol or a bad endpoint is a clear
// error, whether it comes from the options or the environment.
func TestBadSettings(t *testing.T) {
	for _, o := range []telemetry.Options{
		{Enabled: true, Protocol: "http/json", Getenv: noEnv},
		{Enabled: true, Getenv: envOf(map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"})},
		{Enabled: true, Endpoint: "collector:4318", Getenv: noEnv},
	} {
		e, err := telemetry.New(context.Background(), o)
		if err == nil || e != nil {
			t.Errorf("%+v: got %v, %v; want an error", o, e, err)
			continue
		}
		if !strings.Contains(err.Error(), "telemetry:") {
			t.Errorf("error %q does not say where it comes from", err)
		}
	}
}
