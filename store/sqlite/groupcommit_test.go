package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// commits returns how many group commit transactions ran and how many
// records they held, from the store's metrics.
func commits(t *testing.T, reg *prometheus.Registry) (n uint64, records float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "ahp_store_audit_batch_records" {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum()
		}
	}
	t.Fatal("no ahp_store_audit_batch_records metric")
	return 0, 0
}

func appendConcurrently(t *testing.T, s store.Store, workers, each int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range each {
				if err := s.Audit().Append(t.Context(), &store.AuditRecord{SessionID: "g", Event: []byte(`{"a":1}`)}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestGroupCommitSharesTransactions(t *testing.T) {
	for _, c := range []struct {
		name     string
		maxBatch int
	}{{"group", 0}, {"one per transaction", 1}} {
		t.Run(c.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName),
				sqlite.Options{MaxBatch: c.maxBatch, Registerer: reg})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			const workers, each = 32, 50
			appendConcurrently(t, db, workers, each)
			n, recs := commits(t, reg)
			if recs != workers*each {
				t.Fatalf("metrics count %v committed records, want %d", recs, workers*each)
			}
			t.Logf("%d records in %d transactions (%.1f per commit)", workers*each, n, recs/float64(n))
			if c.maxBatch == 1 && n != workers*each {
				t.Errorf("MaxBatch 1: %d transactions, want one per record", n)
			}
			if c.maxBatch == 0 && n >= workers*each/2 {
				t.Errorf("group commit: %d transactions for %d concurrent records; appends are not sharing commits", n, workers*each)
			}
		})
	}
}

func TestBatchWindowGroupsSparseAppends(t *testing.T) {
	reg := prometheus.NewRegistry()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName),
		sqlite.Options{BatchWindow: 300 * time.Millisecond, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	appendConcurrently(t, db, 20, 1)
	if n, _ := commits(t, reg); n > 3 {
		t.Errorf("20 appends started together took %d commits with a 300ms window", n)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("appends took %v", d)
	}
}

// TestAppendWaitsForLockAndHonoursContext holds the database's write lock
// from another connection (as another process would): appends queue up,
// QueueDepth shows them, a caller whose context ends gets its error, and
// everything commits once the lock is released.
func TestAppendWaitsForLockAndHonoursContext(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	db, err := sqlite.Open(ctx, path, sqlite.Options{BusyTimeout: 20 * time.Second, QueueSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := db.Audit().Append(ctx, &store.AuditRecord{SessionID: "waited"}); err != nil {
				t.Errorf("Append behind the lock: %v", err)
			}
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for db.Audit().QueueDepth() < 4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if d := db.Audit().QueueDepth(); d < 4 {
		t.Fatalf("QueueDepth = %d with 4 appends waiting", d)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := db.Audit().Append(short, &store.AuditRecord{SessionID: "gave-up"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Append with an expiring context = %v, want DeadlineExceeded", err)
	}

	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	got, err := db.Audit().Query(ctx, store.AuditFilter{SessionID: "waited"})
	if err != nil || len(got) != 4 {
		t.Fatalf("after the lock was released: %d records, %v; want 4", len(got), err)
	}
	if err := db.Ping(ctx); err != nil {
		t.Errorf("Ping after the lock was released: %v", err)
	}
}

func TestMetricsRegisterAndUnregister(t *testing.T) {
	reg := prometheus.NewRegistry()
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	db, err := sqlite.Open(t.Context(), path, sqlite.Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(t.Context(), path, sqlite.Options{Registerer: reg}); err == nil {
		t.Error("a second store registered the same metrics on one registry")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = sqlite.Open(t.Context(), path, sqlite.Options{Registerer: reg})
	if err != nil {
		t.Fatalf("reopen on the same registry after Close: %v", err)
	}
	defer db.Close()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"ahp_store_audit_queue_depth": false, "ahp_store_writable": false, "ahp_store_write_errors_total": false}
	for _, mf := range mfs {
		if _, ok := want[mf.GetName()]; ok {
			want[mf.GetName()] = true
			if mf.GetName() == "ahp_store_writable" && gaugeValue(mf) != 1 {
				t.Errorf("ahp_store_writable = %v on a healthy store", gaugeValue(mf))
			}
		}
	}
	for name, seen := range want {
		if !seen {
			t.Errorf("metric %s not registered", name)
		}
	}
}

func gaugeValue(mf *dto.MetricFamily) float64 { return mf.GetMetric()[0].GetGauge().GetValue() }
