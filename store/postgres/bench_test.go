package postgres_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/postgres"
)

// benchRecord is a typical pre_action record (~330-byte event).
func benchRecord() *store.AuditRecord {
	return &store.AuditRecord{
		SessionID: "7f3c9a2e-1b4d-4c8e-9f0a-2d6b8e1c3a5f", AgentID: "claude-code", EventType: "pre_action",
		Blocking: true, Outcome: "allow", RuleID: "default-allow", Principal: "key:dev", Transport: "unix",
		PolicyVersion: "sha256:5d41402abc4b2a76b9719d911017c592", Latency: 35 * time.Microsecond,
		Event:    json.RawMessage(`{"event_type":"pre_action","session_id":"7f3c9a2e-1b4d-4c8e-9f0a-2d6b8e1c3a5f","agent_id":"claude-code","timestamp":"2026-11-21T10:00:00.000Z","depth":0,"payload":{"action_type":"tool_call","tool_name":"Bash","arguments":{"command":"go test ./...","description":"run the tests"}},"context":{"current_task":"fix the failing test"}}`),
		Decision: json.RawMessage(`{"decision":"allow"}`),
	}
}

// BenchmarkAppend measures committed appends from 64 concurrent callers
// (group commit: one INSERT per group) on a fresh schema. It needs
// AHP_TEST_POSTGRES_URL, like the tests.
func BenchmarkAppend(b *testing.B) {
	url := os.Getenv("AHP_TEST_POSTGRES_URL")
	if url == "" {
		b.Skip("AHP_TEST_POSTGRES_URL is not set (postgres://user@127.0.0.1:PORT/db); see .ci/run")
	}
	db, err := postgres.Open(b.Context(), url, postgres.Options{Schema: freshSchema()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := db.Audit().Append(b.Context(), benchRecord()); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
