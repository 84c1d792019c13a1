package observe

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// The hand-written encoding of ahp/recorded gives, byte for byte, what
// encoding/json gives for the same action, for entries with every field
// set or empty, strings that need escaping, floats in both notations and
// events with white space; the lean form is the same without the event.
func TestEncodeRecordedMatchesEncodingJSON(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 6, 4, 26, 123456789, time.UTC)
	full := Entry{AuditID: 42, Time: t0, EventType: "pre_action", AgentID: "agent-1", Depth: 3, Blocking: true,
		Outcome: "block", RuleID: "destructive.rm_root", Reason: "rm -rf / <b>&</b> \"quoted\" \\ \u2028 é \x01",
		LatencyMs: 0.123, PolicyVersion: "sha256:abc", Principal: "agent-key", Transport: "unix",
		Redacted: []string{"payload.arguments.env.TOKEN", "x<y"}, Error: "e", ToolName: "bash", ToolCallID: "tc-1",
		ApprovalID: "ap1", ApprovalStatus: "approved", DecidedBy: "alice", ApprovalReason: "ok", Framework: "claude-code",
		RunID: "run-1", EventBytes: 77, Event: json.RawMessage("{ \"payload\" : {\"tool_name\":\"bash\",\n \"arguments\":{\"command\":\"ls <x> & y\"}} }")}
	cases := []Entry{
		full,
		{Time: t0, EventType: "handshake"},
		{AuditID: -1, Time: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), LatencyMs: 1e-7},
		{AuditID: 1, Time: t0.Add(time.Hour), LatencyMs: 1e21, AgentID: "bad \xff utf8"},
		{AuditID: 1, Time: t0, LatencyMs: 123456.789, Event: json.RawMessage(`"a string event"`), EventBytes: 16},
		{AuditID: 1, Time: t0, LatencyMs: math.Copysign(0, -1), Redacted: []string{}},
		{AuditID: 1, Time: t0, LatencyMs: 2.5e-300},
		{AuditID: 1, Time: t0, Event: json.RawMessage("{\"a\": \"\u2026 \u2028 \u2029 é\"}"), EventBytes: 20},
	}
	for i, e := range cases {
		for _, ch := range []string{SessionChannel("s"), SessionChannel("a b/ü")} {
			op := op{kind: opRecorded, entry: &e}
			wantParams, want := encodeAction(ch, op.build(ch), 1764310000000000+uint64(i), nil)
			got, ok := encodeRecorded(ch, &e, 1764310000000000+uint64(i))
			if !ok {
				t.Fatalf("case %d: not encoded", i)
			}
			if !bytes.Equal(got.data, want) {
				t.Fatalf("case %d:\n got %s\nwant %s", i, got.data, want)
			}
			if !bytes.Equal(got.params, wantParams) {
				t.Fatalf("case %d: params\n got %s\nwant %s", i, got.params, wantParams)
			}
			noEvent := e
			noEvent.Event = nil
			_, wantLean := encodeAction(ch, (&op2{opRecorded, &noEvent}).build(ch), 1764310000000000+uint64(i), nil)
			if lean := got.lean(); !bytes.Equal(lean, wantLean) {
				t.Fatalf("case %d: lean\n got %s\nwant %s", i, lean, wantLean)
			}
		}
	}
	// What only encoding/json can say is left to it.
	for _, e := range []Entry{{Time: t0, LatencyMs: math.NaN()}, {Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Time: t0, Event: json.RawMessage(`{"not json`)}} {
		if _, ok := encodeRecorded(RootChannel, &e, 1); ok {
			t.Fatalf("%+v was encoded by hand", e)
		}
	}
}

// op2 builds the op of an entry (a shorthand for the test).
type op2 struct {
	kind  opKind
	entry *Entry
}

func (o *op2) build(ch string) map[string]any {
	x := op{kind: o.kind, entry: o.entry}
	return x.build(ch)
}

func BenchmarkEncodeRecorded(b *testing.B) {
	rec := fanoutPreAction(7, "s")
	e := entryOf(rec)
	ch := SessionChannel("s")
	b.Run("hand", func(b *testing.B) {
		for range b.N {
			encodeRecorded(ch, &e, 99)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		o := op{kind: opRecorded, entry: &e}
		for range b.N {
			encodeAction(ch, o.build(ch), 99, nil)
		}
	})
}
