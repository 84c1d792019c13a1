package groupcommit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
)

// fakeDB commits into memory; gate, when set, holds each commit until it
// receives a value; fail makes the next commit fail.
type fakeDB struct {
	mu      sync.Mutex
	rows    []string // session IDs in commit order
	batches []int
	last    int64
	fail    error
	gate    chan struct{}
}

func (f *fakeDB) commit(_ context.Context, batch []*Request, ids []int64) error {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail; err != nil {
		f.fail = nil
		return err
	}
	for i, r := range batch {
		f.last++
		ids[i] = f.last
		f.rows = append(f.rows, r.Rec.SessionID)
	}
	f.batches = append(f.batches, len(batch))
	return nil
}

func start(f *fakeDB, maxBatch int, window time.Duration) *Writer {
	return Start(Config{QueueSize: 64, MaxBatch: maxBatch, BatchWindow: window, WriteTimeout: time.Second, Commit: f.commit})
}

func TestQueuedRecordsShareACommitInOrder(t *testing.T) {
	f := &fakeDB{gate: make(chan struct{})}
	w := start(f, 4, 0)
	defer w.Close()
	ctx := t.Context()
	first := make(chan int64, 1)
	go func() {
		id, _ := w.Append(ctx, &store.AuditRecord{SessionID: "a"})
		first <- id
	}()
	for w.Pending() != 1 || len(w.queue) != 0 {
		time.Sleep(time.Millisecond)
	}
	// The writer now holds "a" in a commit waiting at the gate; these six
	// queue behind it and go out as groups of at most 4.
	for _, s := range []string{"b", "c", "d", "e", "f", "g"} {
		if err := w.AppendAsync(ctx, &store.AuditRecord{SessionID: s}); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.Pending(); got != 7 {
		t.Fatalf("Pending = %d, want 7", got)
	}
	go func() {
		for range 3 {
			f.gate <- struct{}{}
		}
	}()
	if id := <-first; id != 1 {
		t.Fatalf("first record's ID = %d, want 1", id)
	}
	for w.Pending() != 0 {
		time.Sleep(time.Millisecond)
	}
	id, err := func() (int64, error) {
		go func() { f.gate <- struct{}{} }()
		return w.Append(ctx, &store.AuditRecord{SessionID: "h"})
	}()
	if err != nil || id != 8 {
		t.Fatalf("Append = %d, %v; want 8", id, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if got := f.batches; len(got) != 4 || got[0] != 1 || got[1] != 4 || got[2] != 2 || got[3] != 1 {
		t.Errorf("commit sizes = %v, want [1 4 2 1]", got)
	}
	if got := f.rows; len(got) != 8 || got[0] != "a" || got[3] != "d" || got[7] != "h" {
		t.Errorf("commit order = %v", got)
	}
}

func TestFailedCommitAnswersEveryWaiterAndCountsLost(t *testing.T) {
	boom := errors.New("disk full")
	f := &fakeDB{fail: boom}
	var lost int
	var seen []error
	w := Start(Config{QueueSize: 8, MaxBatch: 8, WriteTimeout: time.Second, Commit: f.commit,
		Committed: func(n int, _ time.Duration, err error) { seen = append(seen, err) },
		Lost:      func(n int, err error) { lost += n }})
	_, err := w.Append(t.Context(), &store.AuditRecord{SessionID: "x"})
	if !errors.Is(err, boom) || err.Error() != "audit commit of 1 records: disk full" {
		t.Fatalf("Append = %v, want the wrapped commit error", err)
	}
	f.mu.Lock()
	f.fail = boom
	f.mu.Unlock()
	if err := w.AppendAsync(t.Context(), &store.AuditRecord{SessionID: "y"}); err != nil {
		t.Fatal(err)
	}
	for w.Pending() != 0 {
		time.Sleep(time.Millisecond)
	}
	if id, err := w.Append(t.Context(), &store.AuditRecord{SessionID: "z"}); err != nil || id != 1 {
		t.Fatalf("Append after failures = %d, %v; want 1", id, err)
	}
	w.Close()
	if lost != 1 || len(seen) != 3 || !errors.Is(seen[0], boom) || seen[2] != nil {
		t.Errorf("lost = %d, commits seen = %v; want 1 lost, 3 commits, the last one fine", lost, seen)
	}
}

func TestCloseCommitsQueuedThenRefuses(t *testing.T) {
	f := &fakeDB{gate: make(chan struct{})}
	stopped := false
	w := Start(Config{QueueSize: 64, MaxBatch: 2, WriteTimeout: time.Second, Commit: f.commit,
		Stopped: func() { stopped = true }})
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		if err := w.AppendAsync(t.Context(), &store.AuditRecord{SessionID: s}); err != nil {
			t.Fatal(err)
		}
	}
	signal := w.CommitSignal()
	go func() {
		for range 3 {
			f.gate <- struct{}{}
		}
	}()
	w.Close()
	if !stopped || w.Pending() != 0 || len(f.rows) != 5 {
		t.Fatalf("after Close: stopped %v, pending %d, rows %v; want all 5 committed", stopped, w.Pending(), f.rows)
	}
	select {
	case <-signal:
	default:
		t.Error("CommitSignal not closed after commits and Close")
	}
	if err := w.AppendAsync(t.Context(), &store.AuditRecord{}); !errors.Is(err, store.ErrClosed) {
		t.Errorf("AppendAsync after Close = %v, want store.ErrClosed", err)
	}
}

func TestFullQueueHonoursContext(t *testing.T) {
	f := &fakeDB{gate: make(chan struct{})}
	w := Start(Config{QueueSize: 1, MaxBatch: 1, WriteTimeout: time.Second, Commit: f.commit})
	defer func() {
		go func() {
			for range 2 {
				f.gate <- struct{}{}
			}
		}()
		w.Close()
	}()
	_ = w.AppendAsync(t.Context(), &store.AuditRecord{}) // taken by the writer, held at the gate
	for len(w.queue) != 0 {
		time.Sleep(time.Millisecond)
	}
	_ = w.AppendAsync(t.Context(), &store.AuditRecord{}) // fills the queue
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := w.Append(ctx, &store.AuditRecord{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Append on a full queue = %v, want the deadline", err)
	}
	if got := w.Pending(); got != 2 {
		t.Errorf("Pending = %d, want 2 (the refused record not counted)", got)
	}
}

func TestBatchWindowWaitsForMore(t *testing.T) {
	f := &fakeDB{}
	w := start(f, 8, 300*time.Millisecond)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 10 * time.Millisecond)
			if _, err := w.Append(t.Context(), &store.AuditRecord{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	w.Close()
	if len(f.batches) != 1 || f.batches[0] != 3 {
		t.Errorf("commit sizes = %v, want one commit of 3", f.batches)
	}
}
