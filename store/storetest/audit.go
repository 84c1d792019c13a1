package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
)

func runAudit(t *testing.T, newDB NewDatabase) {
	t.Run("AppendAssignsIDsAndRoundTrips", func(t *testing.T) {
		s, _ := openFresh(t, newDB)
		ctx := t.Context()
		var want []store.AuditRecord
		var last int64
		for i := range 5 {
			r := record(i, "s1", "allow")
			if err := s.Audit().Append(ctx, r); err != nil {
				t.Fatalf("Append: %v", err)
			}
			if r.ID <= last {
				t.Fatalf("ID %d not above previous %d", r.ID, last)
			}
			last = r.ID
			want = append(want, *r)
		}
		n := &store.AuditRecord{EventType: "post_action", SessionID: "s1"} // a notification: no decision, no time
		if err := s.Audit().Append(ctx, n); err != nil {
			t.Fatalf("Append notification: %v", err)
		}
		if n.Time.IsZero() {
			t.Error("Append left Time zero")
		}
		got, err := s.Audit().Query(ctx, store.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 6 {
			t.Fatalf("Query returned %d records, want 6", len(got))
		}
		for i := range want {
			if got[i].ID != want[i].ID {
				t.Fatalf("record %d has ID %d, want %d", i, got[i].ID, want[i].ID)
			}
			sameRecord(t, got[i], want[i])
		}
		if got[5].Event != nil || got[5].Decision != nil || got[5].Outcome != "" {
			t.Errorf("notification came back with event/decision/outcome: %+v", got[5])
		}
	})

	t.Run("QueryFilters", func(t *testing.T) {
		s, _ := openFresh(t, newDB)
		ctx := t.Context()
		outcomes := []string{"allow", "block", "modify"}
		var ids []int64
		for i := range 30 {
			r := record(i, fmt.Sprintf("s%d", i%2), outcomes[i%3])
			if i%5 == 0 {
				r.EventType = "pre_prompt"
			}
			if err := s.Audit().Append(ctx, r); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.ID)
		}
		cases := []struct {
			name string
			f    store.AuditFilter
			want func(i int) bool
		}{
			{"session", store.AuditFilter{SessionID: "s1"}, func(i int) bool { return i%2 == 1 }},
			{"outcome", store.AuditFilter{Outcome: "block"}, func(i int) bool { return i%3 == 1 }},
			{"rule", store.AuditFilter{RuleID: "rule-2"}, func(i int) bool { return i%3 == 2 }},
			{"event type", store.AuditFilter{EventType: "pre_prompt"}, func(i int) bool { return i%5 == 0 }},
			{"since", store.AuditFilter{Since: base.Add(20 * time.Millisecond)}, func(i int) bool { return i >= 20 }},
			{"until", store.AuditFilter{Until: base.Add(3 * time.Millisecond)}, func(i int) bool { return i < 3 }},
			{"after id", store.AuditFilter{AfterID: ids[24]}, func(i int) bool { return i > 24 }},
			{"combined", store.AuditFilter{SessionID: "s0", Outcome: "allow", Since: base.Add(6 * time.Millisecond)},
				func(i int) bool { return i%2 == 0 && i%3 == 0 && i >= 6 }},
			{"limit", store.AuditFilter{Limit: 4}, func(i int) bool { return i < 4 }},
			{"newest", store.AuditFilter{Limit: 4, Newest: true}, func(i int) bool { return i >= 26 }},
			{"newest of session", store.AuditFilter{SessionID: "s0", Limit: 2, Newest: true}, func(i int) bool { return i == 26 || i == 28 }},
		}
		for _, c := range cases {
			got, err := s.Audit().Query(ctx, c.f)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			var want []int64
			for i, id := range ids {
				if c.want(i) {
					want = append(want, id)
				}
			}
			var gotIDs []int64
			for _, r := range got {
				gotIDs = append(gotIDs, r.ID)
			}
			if fmt.Sprint(gotIDs) != fmt.Sprint(want) {
				t.Errorf("%s: got IDs %v, want %v", c.name, gotIDs, want)
			}
		}
	})

	t.Run("ConcurrentAppendsAllDurableAndDistinct", func(t *testing.T) {
		s, reopen := openFresh(t, newDB)
		ctx := t.Context()
		const workers, each = 16, 100
		var (
			mu   sync.Mutex
			seen = map[int64]string{}
			wg   sync.WaitGroup
			errs = make(chan error, workers)
		)
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					r := record(i, fmt.Sprintf("w%d", w), "allow")
					r.AgentID = fmt.Sprintf("w%d-%d", w, i)
					if err := s.Audit().Append(ctx, r); err != nil {
						errs <- err
						return
					}
					mu.Lock()
					if prev, dup := seen[r.ID]; dup {
						mu.Unlock()
						errs <- fmt.Errorf("ID %d given to %s and %s", r.ID, prev, r.AgentID)
						return
					}
					seen[r.ID] = r.AgentID
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = reopen(t)
		got, err := s.Audit().Query(ctx, store.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != workers*each {
			t.Fatalf("%d records after reopen, want %d", len(got), workers*each)
		}
		for _, r := range got {
			if seen[r.ID] != r.AgentID {
				t.Fatalf("record %d holds %q, the append that got this ID wrote %q", r.ID, r.AgentID, seen[r.ID])
			}
		}
	})

	t.Run("AppendAsyncIsFlushedByClose", func(t *testing.T) {
		s, reopen := openFresh(t, newDB)
		ctx := t.Context()
		for i := range 50 {
			r := record(i, "async", "")
			r.Decision, r.Blocking, r.EventType = nil, false, "post_action"
			if err := s.Audit().AppendAsync(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if d := s.Audit().QueueDepth(); d != 0 {
			t.Errorf("QueueDepth after Close = %d", d)
		}
		s = reopen(t)
		got, err := s.Audit().Query(ctx, store.AuditFilter{SessionID: "async"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 50 {
			t.Fatalf("%d notifications recorded, want 50", len(got))
		}
	})

	t.Run("RejectsInvalidRecords", func(t *testing.T) {
		s, _ := openFresh(t, newDB)
		ctx := t.Context()
		bad := []*store.AuditRecord{
			{Event: json.RawMessage(`{"unterminated"`)},
			{Decision: json.RawMessage(`not json`)},
			{Latency: -time.Second},
			{Event: json.RawMessage(`"` + string(bytes.Repeat([]byte("x"), store.MaxAuditJSONBytes)) + `"`)},
		}
		for i, r := range bad {
			if err := s.Audit().Append(ctx, r); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("bad record %d: Append = %v, want ErrInvalid", i, err)
			}
			if err := s.Audit().AppendAsync(ctx, r); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("bad record %d: AppendAsync = %v, want ErrInvalid", i, err)
			}
		}
		if got, _ := s.Audit().Query(ctx, store.AuditFilter{}); len(got) != 0 {
			t.Errorf("%d records stored from invalid input", len(got))
		}
	})

	t.Run("Tail", func(t *testing.T) { testTail(t, newDB) })

	t.Run("ExportReadsBack", func(t *testing.T) {
		s, _ := openFresh(t, newDB)
		ctx := t.Context()
		for i := range 2500 { // more than one export page
			r := record(i, "exp", "block")
			if err := s.Audit().AppendAsync(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		last := record(2500, "exp", "allow")
		if err := s.Audit().Append(ctx, last); err != nil { // a sync append after async ones: all are durable
			t.Fatal(err)
		}
		want, err := s.Audit().Query(ctx, store.AuditFilter{Limit: store.MaxQueryLimit})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		n, err := s.Audit().Export(ctx, &buf, store.AuditFilter{})
		if err != nil || n != 2501 {
			t.Fatalf("Export = %d, %v; want 2501 records", n, err)
		}
		dec := store.NewAuditDecoder(&buf)
		for i := 0; ; i++ {
			var r store.AuditRecord
			err := dec.Decode(&r)
			if err == io.EOF {
				if i != len(want) {
					t.Fatalf("decoded %d records, want %d", i, len(want))
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.ID != want[i].ID {
				t.Fatalf("line %d: ID %d, want %d", i+1, r.ID, want[i].ID)
			}
			sameRecord(t, r, want[i])
		}
		buf.Reset()
		if n, err := s.Audit().Export(ctx, &buf, store.AuditFilter{Outcome: "allow"}); err != nil || n != 1 {
			t.Fatalf("filtered Export = %d, %v; want 1", n, err)
		}
		buf.Reset()
		if n, err := s.Audit().Export(ctx, &buf, store.AuditFilter{Limit: 1500}); err != nil || n != 1500 {
			t.Fatalf("limited Export = %d, %v; want 1500", n, err)
		}
	})

	t.Run("Retain", func(t *testing.T) {
		s, _ := openFresh(t, newDB)
		ctx := t.Context()
		now := time.Now()
		var ids []int64
		for i := range 100 {
			r := record(i, "ret", "allow")
			r.Time = now.Add(-time.Duration(100-i) * time.Hour) // oldest first, one per hour
			if err := s.Audit().Append(ctx, r); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.ID)
		}
		n, err := s.Audit().Retain(ctx, 50*time.Hour+30*time.Minute, 0)
		if err != nil || n != 50 {
			t.Fatalf("Retain by age deleted %d, %v; want 50", n, err)
		}
		n, err = s.Audit().Retain(ctx, 0, 20)
		if err != nil || n != 30 {
			t.Fatalf("Retain by rows deleted %d, %v; want 30", n, err)
		}
		got, err := s.Audit().Query(ctx, store.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 20 || got[0].ID != ids[80] || got[19].ID != ids[99] {
			t.Fatalf("after retention: %d records from %d; want the newest 20 from %d", len(got), got[0].ID, ids[80])
		}
		if n, err := s.Audit().Retain(ctx, 0, 20); err != nil || n != 0 {
			t.Errorf("Retain within limits deleted %d, %v", n, err)
		}
		r := record(200, "ret", "allow")
		if err := s.Audit().Append(ctx, r); err != nil {
			t.Fatal(err)
		}
		if r.ID <= ids[99] {
			t.Errorf("ID %d after retention reuses an old ID (last was %d)", r.ID, ids[99])
		}
	})

	t.Run("ClosedStoreRefuses", func(t *testing.T) {
		s, _ := openFresh(t, newDB)
		ctx := t.Context()
		if err := s.Ping(ctx); err != nil {
			t.Fatalf("Ping on open store: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if err := s.Audit().Append(ctx, record(1, "x", "allow")); !errors.Is(err, store.ErrClosed) {
			t.Errorf("Append after Close = %v, want ErrClosed", err)
		}
		if err := s.Audit().AppendAsync(ctx, record(1, "x", "allow")); !errors.Is(err, store.ErrClosed) {
			t.Errorf("AppendAsync after Close = %v, want ErrClosed", err)
		}
		if _, err := s.Audit().Query(ctx, store.AuditFilter{}); !errors.Is(err, store.ErrClosed) {
			t.Errorf("Query after Close = %v, want ErrClosed", err)
		}
		if err := s.Ping(ctx); !errors.Is(err, store.ErrClosed) {
			t.Errorf("Ping after Close = %v, want ErrClosed", err)
		}
		if err := s.Memory().Add(ctx, &store.Fact{Content: "x"}); !errors.Is(err, store.ErrClosed) {
			t.Errorf("Memory.Add after Close = %v, want ErrClosed", err)
		}
	})

	t.Run("CanceledAppendReturnsContextError", func(t *testing.T) {
		s, _ := openFresh(t, newDB)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		// Either outcome is allowed for a record that raced the cancel, but
		// the error, if any, must say why.
		if err := s.Audit().Append(ctx, record(1, "c", "allow")); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Append with canceled context = %v", err)
		}
	})
}

func testTail(t *testing.T, newDB NewDatabase) {
	s, _ := openFresh(t, newDB)
	ctx := t.Context()
	old := record(0, "t1", "allow")
	if err := s.Audit().Append(ctx, old); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan store.AuditRecord, 64)
	done := make(chan error, 1)
	go func() {
		done <- s.Audit().Tail(tctx, store.AuditFilter{SessionID: "t1", AfterID: old.ID},
			func(r store.AuditRecord) error { got <- r; return nil })
	}()
	var want []int64
	for i := 1; i <= 10; i++ {
		r := record(i, fmt.Sprintf("t%d", i%2), "allow")
		if err := s.Audit().Append(ctx, r); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			want = append(want, r.ID)
		}
	}
	for _, id := range want {
		select {
		case r := <-got:
			if r.ID != id || r.SessionID != "t1" {
				t.Fatalf("Tail delivered %d (%s), want %d (t1)", r.ID, r.SessionID, id)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Tail did not deliver record %d", id)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Tail after cancel = %v, want context.Canceled", err)
	}
	select {
	case r := <-got:
		t.Errorf("Tail delivered an unexpected record %d", r.ID)
	default:
	}

	stop := errors.New("stop")
	n := 0
	err := s.Audit().Tail(ctx, store.AuditFilter{}, func(store.AuditRecord) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Errorf("Tail with fn error: %v after %d records; want stop after 3", err, n)
	}
}
