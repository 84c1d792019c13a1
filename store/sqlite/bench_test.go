package sqlite_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// benchEvent is a typical pre_action event (~330 bytes).
var benchEvent = json.RawMessage(`{"event_type":"pre_action","session_id":"7f3c9a2e-1b4d-4c8e-9f0a-2d6b8e1c3a5f","agent_id":"claude-code","timestamp":"2026-11-21T10:00:00.000Z","depth":0,"payload":{"action_type":"tool_call","tool_name":"Bash","arguments":{"command":"go test ./...","description":"run the tests"}},"context":{"current_task":"fix the failing test"}}`)

func benchRecord() *store.AuditRecord {
	return &store.AuditRecord{
		SessionID: "7f3c9a2e-1b4d-4c8e-9f0a-2d6b8e1c3a5f", AgentID: "claude-code", EventType: "pre_action",
		Blocking: true, Event: benchEvent, Decision: json.RawMessage(`{"decision":"allow"}`), Outcome: "allow",
		RuleID: "default-allow", PolicyVersion: "sha256:5d41402abc4b2a76b9719d911017c592", Principal: "key:dev",
		Transport: "unix", Latency: 35 * time.Microsecond,
	}
}

func openBench(b *testing.B, opts sqlite.Options) (*sqlite.DB, *prometheus.Registry) {
	b.Helper()
	reg := prometheus.NewRegistry()
	opts.Registerer = reg
	db, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), sqlite.FileName), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db, reg
}

// reportCommits adds records/s, records/commit and the process CPU time
// per record (since cpu0) to the benchmark output. CPU time per record says
// what the store costs even when other processes share the machine.
func reportCommits(b *testing.B, reg *prometheus.Registry, cpu0 time.Duration) {
	b.Helper()
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/record")
	}
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "ahp_store_audit_batch_records" {
			h := mf.GetMetric()[0].GetHistogram()
			if h.GetSampleCount() > 0 {
				b.ReportMetric(h.GetSampleSum()/float64(h.GetSampleCount()), "records/commit")
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkAppend measures durable appends from 64 concurrent callers
// (32 goroutines per GOMAXPROCS, two cores here), with group commit and with one
// transaction per record, for both durable sync settings.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []struct {
		name     string
		maxBatch int
	}{{"group", 0}, {"per_record", 1}} {
		for _, sync := range []sqlite.Sync{sqlite.SyncFull, sqlite.SyncNormal} {
			b.Run(mode.name+"/sync="+string(sync), func(b *testing.B) {
				db, reg := openBench(b, sqlite.Options{MaxBatch: mode.maxBatch, Sync: sync})
				b.SetParallelism(32)
				cpu0 := processCPU()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := db.Audit().Append(b.Context(), benchRecord()); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.StopTimer()
				reportCommits(b, reg, cpu0)
			})
		}
	}
}

// BenchmarkAppendCallers shows group commit growing with the load: the
// more callers wait at once, the more records share one FULL-synced commit.
func BenchmarkAppendCallers(b *testing.B) {
	for _, callers := range []int{8, 64, 512} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			db, reg := openBench(b, sqlite.Options{})
			b.SetParallelism(max(1, callers/runtime.GOMAXPROCS(0)))
			cpu0 := processCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := db.Audit().Append(b.Context(), benchRecord()); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			reportCommits(b, reg, cpu0)
		})
	}
}

// BenchmarkAppendSerial is one caller appending and waiting each time: the
// latency of one durable append, with no one to share a commit with.
func BenchmarkAppendSerial(b *testing.B) {
	for _, sync := range []sqlite.Sync{sqlite.SyncFull, sqlite.SyncNormal} {
		b.Run("sync="+string(sync), func(b *testing.B) {
			db, reg := openBench(b, sqlite.Options{Sync: sync})
			cpu0 := processCPU()
			for b.Loop() {
				if err := db.Audit().Append(b.Context(), benchRecord()); err != nil {
					b.Fatal(err)
				}
			}
			reportCommits(b, reg, cpu0)
		})
	}
}

// BenchmarkAppendAsync queues notifications without waiting; the timer
// runs until every one of them is committed.
func BenchmarkAppendAsync(b *testing.B) {
	db, reg := openBench(b, sqlite.Options{})
	r := benchRecord()
	r.Blocking, r.Decision, r.Outcome = false, nil, ""
	cpu0 := processCPU()
	b.ResetTimer()
	for range b.N {
		if err := db.Audit().AppendAsync(b.Context(), r); err != nil {
			b.Fatal(err)
		}
	}
	// The queue is FIFO: once this append is durable, so is every
	// notification queued before it.
	if err := db.Audit().Append(b.Context(), benchRecord()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	reportCommits(b, reg, cpu0)
}

// BenchmarkQuery reads the newest 100 records of one session among 100,000.
func BenchmarkQuery(b *testing.B) {
	db, _ := openBench(b, sqlite.Options{})
	for i := range 100_000 {
		r := benchRecord()
		if i%10 != 0 {
			r.SessionID = "other"
		}
		if err := db.Audit().AppendAsync(b.Context(), r); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Audit().Append(b.Context(), benchRecord()); err != nil {
		b.Fatal(err)
	}
	f := store.AuditFilter{SessionID: benchRecord().SessionID, Limit: 100, Newest: true}
	for b.Loop() {
		recs, err := db.Audit().Query(b.Context(), f)
		if err != nil || len(recs) != 100 {
			b.Fatalf("Query = %d, %v", len(recs), err)
		}
	}
}
