package observe

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// BenchmarkRecordedNoObservers is the cost the hub adds to every decision
// when no observer is connected (the harness calls Recorded on the
// decision path).
func BenchmarkRecordedNoObservers(b *testing.B) {
	db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	h, err := New(Options{Store: db, Now: time.Now, RingSize: 4096, IndexSize: 1 << 16})
	if err != nil {
		b.Fatal(err)
	}
	rec := store.AuditRecord{ID: 1, Time: time.Now(), SessionID: "sess-0001", AgentID: "agent-main", EventType: "pre_action",
		Blocking: true, Outcome: "allow", PolicyVersion: "sha256:abc", Transport: "unix", Latency: 300 * time.Microsecond,
		Event:    json.RawMessage(`{"event_type":"pre_action","session_id":"sess-0001","agent_id":"agent-main","timestamp":"2026-11-21T10:00:00.000Z","depth":0,"payload":{"action_type":"tool_call","tool_name":"bash","arguments":{"command":"ls -la /workspace/project"}}}`),
		Decision: json.RawMessage(`{"decision":"allow","metadata":{"policy_version":"sha256:abc"}}`)}
	b.ReportAllocs()
	for b.Loop() {
		rec.ID++
		h.Recorded(&rec)
	}
}
