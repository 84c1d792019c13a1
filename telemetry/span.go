package telemetry

import (
	"context"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/ahp-go/ahp/internal/jsonscan"
	"github.com/ahp-go/ahp/store"
)

// Attributes of a decision span that no semantic convention covers. The
// others are semantic conventions: session.id, gen_ai.agent.id,
// gen_ai.tool.name, security_rule.name (the rule id) and
// security_rule.version (the policy hash).
const (
	AttrEventType      = attribute.Key("ahp.event.type")
	AttrOutcome        = attribute.Key("ahp.decision.outcome")
	AttrLatencyMs      = attribute.Key("ahp.decision.latency_ms")
	AttrTransport      = attribute.Key("ahp.transport")
	AttrAuditID        = attribute.Key("ahp.audit.id")
	AttrRedacted       = attribute.Key("ahp.redacted")
	AttrDescriptorHash = attribute.Key("ahp.descriptor.hash")
	AttrShadowChanged  = attribute.Key("ahp.shadow.changed")
)

// Bounds on what a span takes from a record.
const (
	// maxAttrBytes bounds a string attribute; longer values are cut at a
	// character boundary.
	maxAttrBytes = 1024
	// maxTraceparentBytes and maxTracestateBytes are the W3C Trace Context
	// limits; longer values are ignored.
	maxTraceparentBytes = 55
	maxTracestateBytes  = 512
)

// eventFacts is what a span reads from a recorded (redacted) event.
type eventFacts struct {
	tool                    string
	traceparent, tracestate string
}

// scanEvent reads payload.tool_name and metadata.traceparent/tracestate
// from the JSON of a recorded event.
func scanEvent(ev []byte) eventFacts {
	var f eventFacts
	if len(ev) == 0 {
		return f
	}
	_ = jsonscan.ObjectValid(ev, func(k, v []byte) error {
		switch string(k) {
		case "payload":
			_ = jsonscan.ObjectValid(v, func(pk, pv []byte) error {
				if string(pk) == "tool_name" {
					f.tool, _ = jsonscan.String(pv)
				}
				return nil
			})
		case "metadata":
			_ = jsonscan.ObjectValid(v, func(mk, mv []byte) error {
				switch string(mk) {
				case "traceparent":
					if s, ok := jsonscan.String(mv); ok && len(s) <= maxTraceparentBytes {
						f.traceparent = s
					}
				case "tracestate":
					if s, ok := jsonscan.String(mv); ok && len(s) <= maxTracestateBytes {
						f.tracestate = s
					}
				}
				return nil
			})
		}
		return nil
	})
	return f
}

// export turns the record of a decision into a span: it starts when the
// event arrived and ends when the decision was recorded, and is a child of
// the agent's span when the event's metadata carries a W3C traceparent.
// Everything it holds comes from the record, which the harness redacted.
func (e *Exporter) export(rec *store.AuditRecord) {
	f := scanEvent(rec.Event)
	ctx := context.Background()
	if f.traceparent != "" {
		carrier := propagation.MapCarrier{"traceparent": f.traceparent}
		if f.tracestate != "" {
			carrier["tracestate"] = f.tracestate
		}
		ctx = propagation.TraceContext{}.Extract(ctx, carrier)
	}
	attrs := make([]attribute.KeyValue, 0, 14)
	attrs = append(attrs,
		AttrEventType.String(clip(rec.EventType)),
		AttrOutcome.String(clip(rec.Outcome)),
		AttrLatencyMs.Float64(float64(rec.Latency.Microseconds())/1000),
		AttrAuditID.Int64(rec.ID),
	)
	str := func(kv func(string) attribute.KeyValue, v string) {
		if v != "" {
			attrs = append(attrs, kv(clip(v)))
		}
	}
	str(semconv.SessionID, rec.SessionID)
	str(semconv.GenAIAgentID, rec.AgentID)
	str(semconv.GenAIToolName, f.tool)
	str(semconv.SecurityRuleName, rec.RuleID)
	str(semconv.SecurityRuleVersion, rec.PolicyVersion)
	str(AttrTransport.String, rec.Transport)
	str(AttrDescriptorHash.String, rec.DescriptorHash)
	if len(rec.Redacted) > 0 {
		attrs = append(attrs, AttrRedacted.StringSlice(rec.Redacted))
	}
	if rec.ShadowChanged {
		attrs = append(attrs, AttrShadowChanged.Bool(true))
	}
	_, span := e.tracer.Start(ctx, "decide "+clip(rec.EventType),
		trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(rec.Time), trace.WithAttributes(attrs...))
	if rec.Error != "" {
		span.SetStatus(codes.Error, clip(rec.Error))
	}
	span.End(trace.WithTimestamp(rec.Time.Add(rec.Latency)))
}

// clip bounds s to maxAttrBytes at a character boundary.
func clip(s string) string {
	if len(s) <= maxAttrBytes {
		return s
	}
	cut := maxAttrBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
