package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
)

func runRuns(t *testing.T, newDB NewDatabase) {
	t.Run("Events", func(t *testing.T) {
		s, _ := openFresh(t, newDB)
		ctx := t.Context()
		var ids []int64
		for i, kind := range []string{"run_lifecycle", "task_list", "verification", "run_lifecycle"} {
			e := &store.RunEvent{
				RunID: "run-1", SessionID: "s1", Kind: kind, UpdatedAt: base.Add(time.Duration(i) * time.Second),
				Payload: json.RawMessage(fmt.Sprintf(`{"run_id":"run-1","n":%d}`, i)),
			}
			if err := s.Runs().AppendEvent(ctx, e); err != nil {
				t.Fatal(err)
			}
			if e.ID == 0 || e.Received.IsZero() {
				t.Fatalf("AppendEvent did not set ID and Received: %+v", e)
			}
			ids = append(ids, e.ID)
		}
		other := &store.RunEvent{RunID: "run-2", SessionID: "s1", Kind: "run_lifecycle", Payload: json.RawMessage(`{}`)}
		if err := s.Runs().AppendEvent(ctx, other); err != nil {
			t.Fatal(err)
		}
		got, err := s.Runs().Events(ctx, "run-1", ids[0], 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].ID != ids[1] || got[2].ID != ids[3] || got[1].Kind != "verification" ||
			!got[0].UpdatedAt.Equal(base.Add(time.Second)) || string(compact(t, got[2].Payload)) != `{"n":3,"run_id":"run-1"}` {
			t.Errorf("Events after the first = %+v", got)
		}
		if err := s.Runs().AppendEvent(ctx, &store.RunEvent{RunID: "r", Payload: json.RawMessage(`{`)}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AppendEvent with bad JSON = %v, want ErrInvalid", err)
		}
		if err := s.Runs().AppendEvent(ctx, &store.RunEvent{Payload: json.RawMessage(`{}`)}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AppendEvent without run_id = %v, want ErrInvalid", err)
		}
	})

	t.Run("PutGetListWithVersions", func(t *testing.T) {
		s, _ := openFresh(t, newDB)
		ctx := t.Context()
		r := &store.RunRecord{RunID: "run-1", SessionID: "s1", Status: "executing", UpdatedAt: base,
			Record: json.RawMessage(`{"timeline":["created","executing"]}`)}
		if err := s.Runs().Put(ctx, r); err != nil {
			t.Fatal(err)
		}
		if r.Version != 1 || r.Created.IsZero() {
			t.Fatalf("first Put: version %d, created %v", r.Version, r.Created)
		}
		stale := *r
		stale.Version = 0
		if err := s.Runs().Put(ctx, &stale); !errors.Is(err, store.ErrConflict) {
			t.Errorf("creating an existing run = %v, want ErrConflict", err)
		}
		r.Status, r.UpdatedAt, r.Flags = "completed", base.Add(time.Minute), []string{"illegal_transition"}
		created := r.Created
		if err := s.Runs().Put(ctx, r); err != nil {
			t.Fatal(err)
		}
		if r.Version != 2 || !r.Created.Equal(created) {
			t.Errorf("second Put: version %d, created %v (was %v)", r.Version, r.Created, created)
		}
		old := *r
		old.Version = 1
		if err := s.Runs().Put(ctx, &old); !errors.Is(err, store.ErrConflict) {
			t.Errorf("Put at an old version = %v, want ErrConflict", err)
		}
		got, err := s.Runs().Get(ctx, "run-1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != "completed" || got.Version != 2 || len(got.Flags) != 1 || got.Flags[0] != "illegal_transition" ||
			!got.UpdatedAt.Equal(base.Add(time.Minute)) || string(compact(t, got.Record)) != `{"timeline":["created","executing"]}` {
			t.Errorf("Get = %+v", got)
		}
		if _, err := s.Runs().Get(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get missing = %v, want ErrNotFound", err)
		}

		for i, st := range []string{"executing", "failed", "executing"} {
			rr := &store.RunRecord{RunID: fmt.Sprintf("run-%d", i+2), SessionID: "s2", Status: st, UpdatedAt: base.Add(time.Duration(i) * time.Second)}
			if err := s.Runs().Put(ctx, rr); err != nil {
				t.Fatal(err)
			}
		}
		list := func(f store.RunFilter) string {
			t.Helper()
			rs, err := s.Runs().List(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range rs {
				ids = append(ids, r.RunID)
			}
			return fmt.Sprint(ids)
		}
		if got := list(store.RunFilter{SessionID: "s2"}); got != "[run-4 run-3 run-2]" {
			t.Errorf("List by session = %s, want most recently updated first", got)
		}
		if got := list(store.RunFilter{Status: "executing"}); got != "[run-4 run-2]" {
			t.Errorf("List by status = %s", got)
		}
		if got := list(store.RunFilter{FlaggedOnly: true}); got != "[run-1]" {
			t.Errorf("List flagged = %s", got)
		}
		if got := list(store.RunFilter{Limit: 1}); got != "[run-1]" {
			t.Errorf("List with limit = %s", got)
		}
	})

	t.Run("ConcurrentPutsOneWinsPerVersion", func(t *testing.T) {
		s, _ := openFresh(t, newDB)
		ctx := t.Context()
		r := &store.RunRecord{RunID: "run-1", SessionID: "s1", Status: "created"}
		if err := s.Runs().Put(ctx, r); err != nil {
			t.Fatal(err)
		}
		var (
			wg         sync.WaitGroup
			mu         sync.Mutex
			wins, lost int
		)
		for i := range 6 {
			wg.Go(func() {
				mine := *r
				mine.Status = fmt.Sprintf("writer-%d", i)
				err := s.Runs().Put(ctx, &mine)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, store.ErrConflict):
					lost++
				default:
					t.Errorf("Put: %v", err)
				}
			})
		}
		wg.Wait()
		if wins != 1 || lost != 5 {
			t.Errorf("%d Puts at the same version won, %d conflicted; want 1 and 5", wins, lost)
		}
	})
}
