package service_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/telemetry/otlptest"
)

// Secrets the built-in detectors find; they must reach no span.
const (
	telAWSKey = "AKIAIOSFODNN7EXAMPLE"
	telGHTok  = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
)

// clearOTELEnv keeps the machine's OTEL_* variables out of a test.
func clearOTELEnv(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
		"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER"} {
		t.Setenv(k, "")
	}
}

// telConfig is the default configuration in a temporary directory, with
// no listener and no admin API: the test calls the harness directly.
func telConfig(t *testing.T) config.Config {
	c := config.Default()
	c.DataDir = filepath.Join(t.TempDir(), "data")
	c.Listen, c.Admin = nil, ""
	return c
}

// recordKeeper keeps the decision records the harness stored.
type recordKeeper struct {
	mu   sync.Mutex
	recs []*store.AuditRecord
}

func (k *recordKeeper) Recorded(r *store.AuditRecord) {
	if r.Blocking {
		k.mu.Lock()
		k.recs = append(k.recs, r)
		k.mu.Unlock()
	}
}
func (k *recordKeeper) ApprovalChanged(store.Approval) {}

// secretEvent is a tool call carrying secrets in its arguments and in its
// session id, and the agent's trace context in its metadata.
func secretEvent(traceparent string) *protocol.Event {
	payload, _ := json.Marshal(map[string]any{"tool_name": "Bash",
		"arguments": map[string]any{"command": "aws s3 ls --key " + telAWSKey + " && curl -H 'Authorization: token " + telGHTok + "' https://api.github.com"}})
	md, _ := json.Marshal(map[string]string{"traceparent": traceparent})
	return &protocol.Event{EventType: protocol.EventPreAction, SessionID: "sess-" + telGHTok, AgentID: "coder",
		Timestamp: time.Now().UTC().Format(time.RFC3339), Payload: payload, Metadata: md}
}

// TestTelemetryExportsDecisions: with telemetry on, a decision of the
// running harness reaches an OTLP receiver as a span in the agent's trace,
// with the session, tool, rule and outcome of the stored record, nothing of
// the payload and no secret; Close flushes it, and the metrics go along.
func TestTelemetryExportsDecisions(t *testing.T) {
	clearOTELEnv(t)
	for _, proto := range []string{"http/protobuf", "grpc"} {
		t.Run(proto, func(t *testing.T) {
			recv := otlptest.NewHTTP(t)
			if proto == "grpc" {
				recv = otlptest.NewGRPC(t)
			}
			c := telConfig(t)
			c.Telemetry.Enabled, c.Telemetry.Endpoint, c.Telemetry.Protocol = true, recv.Endpoint, proto
			keep := &recordKeeper{}
			svc, err := service.New(c, service.Options{Observers: []harness.Observer{keep}})
			if err != nil {
				t.Fatal(err)
			}
			const trace, parent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
			d, err := svc.Harness().HandleEvent(context.Background(), secretEvent("00-"+trace+"-"+parent+"-01"))
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Close(); err != nil {
				t.Fatal(err)
			}
			spans := recv.Spans()
			if len(spans) != 1 || len(keep.recs) != 1 {
				t.Fatalf("%d spans for %d decision records, want 1 and 1", len(spans), len(keep.recs))
			}
			s, rec := spans[0], keep.recs[0]
			if got := hex.EncodeToString(s.GetTraceId()); got != trace {
				t.Errorf("span in trace %s, want the agent's trace %s", got, trace)
			}
			if got := hex.EncodeToString(s.GetParentSpanId()); got != parent {
				t.Errorf("span's parent %s, want the agent's span %s", got, parent)
			}
			attrs := map[string]string{}
			for _, kv := range s.GetAttributes() {
				attrs[kv.GetKey()] = valueText(kv.GetValue())
			}
			want := map[string]string{
				"session.id": rec.SessionID, "gen_ai.agent.id": "coder", "gen_ai.tool.name": "Bash",
				"security_rule.name": rec.RuleID, "ahp.decision.outcome": string(d.Kind), "ahp.event.type": "pre_action",
			}
			for k, v := range want {
				if attrs[k] != v || v == "" {
					t.Errorf("attribute %s = %q, want %q (from the stored record)", k, attrs[k], v)
				}
			}
			if rec.RuleID != "secrets.in_tool_arguments" || d.Kind != protocol.DecisionBlock {
				t.Errorf("decided %s by %q, want a block by secrets.in_tool_arguments", d.Kind, rec.RuleID)
			}
			if !strings.Contains(attrs["ahp.redacted"], "aws_access_key") {
				t.Errorf("ahp.redacted = %q, want the kinds redacted", attrs["ahp.redacted"])
			}
			if d := time.Duration(s.GetEndTimeUnixNano() - s.GetStartTimeUnixNano()); d != rec.Latency {
				t.Errorf("span lasts %v, want the decision's latency %v", d, rec.Latency)
			}
			for k, v := range attrs {
				for _, secret := range []string{telAWSKey, telGHTok, "aws s3 ls", "Authorization"} {
					if strings.Contains(v, secret) {
						t.Errorf("attribute %s = %q carries %q", k, v, secret)
					}
				}
			}
			var metric bool
			for _, m := range recv.Metrics() {
				metric = metric || m.GetName() == "ahp_decisions_total"
			}
			if !metric {
				t.Error("ahp_decisions_total was not exported")
			}
		})
	}
}

// TestTelemetryOffByDefault: with the default configuration and no OTEL_*
// endpoint nothing of the exporter exists; an endpoint in the standard
// environment variable turns it on without a configuration change.
func TestTelemetryOffByDefault(t *testing.T) {
	clearOTELEnv(t)
	svc, err := service.New(telConfig(t), service.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hasMetric(t, svc, "ahp_telemetry_spans_dropped_total") {
		t.Error("the exporter was built with telemetry off")
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}

	recv := otlptest.NewHTTP(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.Endpoint)
	svc, err = service.New(telConfig(t), service.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasMetric(t, svc, "ahp_telemetry_spans_dropped_total") {
		t.Error("OTEL_EXPORTER_OTLP_ENDPOINT did not turn telemetry on")
	}
	if _, err := svc.Harness().HandleEvent(context.Background(), secretEvent("")); err != nil {
		t.Fatal(err)
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(recv.Spans()); n != 1 {
		t.Errorf("%d spans exported, want 1", n)
	}
}

func hasMetric(t *testing.T, svc *service.Service, name string) bool {
	t.Helper()
	mfs, err := svc.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return true
		}
	}
	return false
}

// valueText renders an OTLP attribute value (lists joined by ",").
func valueText(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, valueText(e))
		}
		return strings.Join(parts, ",")
	}
	return v.String()
}
