package redact

import (
	"encoding/json"
	"testing"
)

// BenchmarkSealCleanFields is BenchmarkSealClean with operator field paths
// configured: the payload is tested for their names (in any letter case)
// but, holding none, not decoded.
func BenchmarkSealCleanFields(b *testing.B) {
	r, _ := New(Options{Key: []byte("0123456789abcdef0123456789abcdef"),
		Rules: Rules{Fields: []string{"arguments.password", "arguments.headers.Authorization", "metadata.api_key"}}})
	b.ReportAllocs()
	for b.Loop() {
		ev, k := r.Event(benchEvent, true)
		if ev != benchEvent || !k.Empty() {
			b.Fatal("redacted a clean event")
		}
	}
}

// BenchmarkSealFieldHit redacts one value at a field path.
func BenchmarkSealFieldHit(b *testing.B) {
	r, _ := New(Options{Key: []byte("0123456789abcdef0123456789abcdef"),
		Rules: Rules{Fields: []string{"arguments.password"}}})
	ev := *benchEvent
	ev.Payload = json.RawMessage(`{"tool_name":"login","arguments":{"user":"bob","Password":"hunter2"}}`)
	b.ReportAllocs()
	for b.Loop() {
		r.Event(&ev, true)
	}
}
