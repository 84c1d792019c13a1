package runs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs"
	"github.com/ahp-go/ahp/runs/runstest"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName), sqlite.Options{Sync: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newReducer(t *testing.T, st store.Runs, opts runs.Options) *runs.Reducer {
	t.Helper()
	r, err := runs.New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReducerScriptedSession(t *testing.T) {
	db := openStore(t)
	reg := prometheus.NewRegistry()
	desc := &runs.DescriptorRef{Hash: "sha256:0123", Name: "coder", Version: "1.2.0"}
	r := newReducer(t, db.Runs(), runs.Options{
		Registerer: reg,
		Descriptor: func(*protocol.Event) *runs.DescriptorRef { return desc },
	})
	evs := runstest.Session()
	for i := range evs {
		if err := r.Observe(t.Context(), &evs[i]); err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
	}
	rec, err := runs.Load(t.Context(), db.Runs(), runstest.RunID)
	if err != nil {
		t.Fatal(err)
	}
	checkScripted(t, rec)
	if rec.Descriptor == nil || *rec.Descriptor != *desc {
		t.Errorf("descriptor = %+v", rec.Descriptor)
	}

	// The store's own columns follow the record.
	rr, err := db.Runs().Get(t.Context(), runstest.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Status != "completed" || rr.SessionID != runstest.SessionID || !rr.UpdatedAt.Equal(runstest.At(9)) ||
		!reflect.DeepEqual(rr.Flags, []string{"duplicate", "out_of_order", "illegal_transition"}) || rr.Version != 15 {
		t.Errorf("stored run = %+v", rr)
	}
	flagged, err := db.Runs().List(t.Context(), store.RunFilter{FlaggedOnly: true, Status: "completed"})
	if err != nil || len(flagged) != 1 {
		t.Errorf("flagged completed runs = %d, %v", len(flagged), err)
	}

	// Every event is in the log, and replaying it gives the same record
	// (the descriptor is the caller's, not the events').
	stored, err := db.Runs().Events(t.Context(), runstest.RunID, 0, 100)
	if err != nil || len(stored) != len(evs) {
		t.Fatalf("stored events = %d, %v", len(stored), err)
	}
	var env protocol.Event
	if err := json.Unmarshal(stored[13].Payload, &env); err != nil || env.AgentID != runstest.AgentID || env.EventType != protocol.EventRunLifecycle {
		t.Errorf("stored event 14 = %+v, %v", env, err)
	}
	replayed, err := runs.Replay(t.Context(), db.Runs(), runstest.RunID)
	if err != nil {
		t.Fatal(err)
	}
	replayed.Descriptor = rec.Descriptor
	a, _ := json.Marshal(rec)
	b, _ := json.Marshal(replayed)
	if string(a) != string(b) {
		t.Errorf("replay differs:\nlive   %s\nreplay %s", a, b)
	}

	for outcome, want := range map[string]float64{"applied": 5, "duplicate": 1, "out_of_order": 1, "illegal_transition": 1} {
		if got := counter(t, reg, "run_lifecycle", outcome); got != want {
			t.Errorf("run_lifecycle %s = %v, want %v", outcome, got, want)
		}
	}
	if got := counter(t, reg, "task_list", "applied"); got != 3 {
		t.Errorf("task_list applied = %v, want 3", got)
	}
}

// counter reads ahp_runs_events_total{kind, outcome} from reg.
func counter(t *testing.T, reg *prometheus.Registry, kind, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "ahp_runs_events_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["kind"] == kind && l["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func TestReducerIgnoresOtherEventsAndRejectsInvalid(t *testing.T) {
	db := openStore(t)
	r := newReducer(t, db.Runs(), runs.Options{})
	for _, ev := range []protocol.Event{
		event(protocol.EventPreAction, "s", `{"tool_name":"x"}`),
		event(protocol.EventHeartbeat, "s", `not even JSON`),
	} {
		if err := r.Observe(t.Context(), &ev); err != nil {
			t.Errorf("%s: %v", ev.EventType, err)
		}
	}
	if err := r.Observe(t.Context(), nil); err != nil {
		t.Error(err)
	}
	bad := event(protocol.EventTaskList, "s", `{"run_id":"r","session_id":"s","updated_at":"x"}`)
	if err := r.Observe(t.Context(), &bad); !errors.Is(err, runs.ErrInvalidPayload) {
		t.Errorf("invalid payload: %v", err)
	}
	if all, _ := db.Runs().List(t.Context(), store.RunFilter{}); len(all) != 0 {
		t.Errorf("runs stored: %+v", all)
	}
	if evs, _ := db.Runs().Events(t.Context(), "r", 0, 10); len(evs) != 0 {
		t.Errorf("events stored: %+v", evs)
	}
	if _, err := runs.Replay(t.Context(), db.Runs(), "r"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Replay of an unknown run: %v", err)
	}
}

// TestReducerConcurrent delivers task lists of several runs from many
// goroutines in random order, through two reducers on one store (as two
// harness processes would, so that updates conflict and retry). Nothing may
// be lost: every event is counted, and the newest snapshot wins.
func TestReducerConcurrent(t *testing.T) {
	db := openStore(t)
	reducers := []*runs.Reducer{
		newReducer(t, db.Runs(), runs.Options{MaxAttempts: 1000}),
		newReducer(t, db.Runs(), runs.Options{MaxAttempts: 1000}),
	}
	const nRuns, perRun = 4, 30
	type job struct {
		ev protocol.Event
		r  *runs.Reducer
	}
	var jobs []job
	for run := 0; run < nRuns; run++ {
		id := fmt.Sprintf("run-%d", run)
		for i := 1; i <= perRun; i++ {
			status := "in_progress"
			if i == perRun {
				status = "completed"
			}
			jobs = append(jobs, job{taskList(id, "s", ts(i), status), reducers[i%2]})
		}
	}
	rand.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	ch := make(chan job)
	var wg sync.WaitGroup
	errs := make(chan error, len(jobs))
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				if err := j.r.Observe(context.Background(), &j.ev); err != nil {
					errs <- err
				}
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for run := 0; run < nRuns; run++ {
		id := fmt.Sprintf("run-%d", run)
		rec, err := runs.Load(t.Context(), db.Runs(), id)
		if err != nil {
			t.Fatal(err)
		}
		c := rec.Counts
		if c.Events != perRun || c.Applied+c.OutOfOrder != perRun || c.Duplicates != 0 {
			t.Errorf("%s counts = %+v", id, c)
		}
		if len(rec.Tasks) != 1 || rec.Tasks[0].Status != "completed" || rec.TasksUpdatedAt.Format(time.RFC3339Nano) != ts(perRun) {
			t.Errorf("%s tasks = %+v at %v, want the newest snapshot", id, rec.Tasks, rec.TasksUpdatedAt)
		}
		evs, err := db.Runs().Events(t.Context(), id, 0, 1000)
		if err != nil || len(evs) != perRun {
			t.Errorf("%s: %d events stored, %v", id, len(evs), err)
		}
	}
}

// A stored record that no longer decodes is rebuilt from the events.
func TestReducerRebuildsUnreadableRecord(t *testing.T) {
	db := openStore(t)
	r := newReducer(t, db.Runs(), runs.Options{})
	first := lifecycle("r", "s", 1, "created")
	if err := r.Observe(t.Context(), &first); err != nil {
		t.Fatal(err)
	}
	rr, err := db.Runs().Get(t.Context(), "r")
	if err != nil {
		t.Fatal(err)
	}
	rr.Record = json.RawMessage(`{"timeline":"damaged"}`)
	if err := db.Runs().Put(t.Context(), &rr); err != nil {
		t.Fatal(err)
	}
	next := lifecycle("r", "s", 2, "executing")
	if err := r.Observe(t.Context(), &next); err != nil {
		t.Fatal(err)
	}
	rec, err := runs.Load(t.Context(), db.Runs(), "r")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != "executing" || rec.Counts.Events != 2 || len(rec.Timeline) != 2 {
		t.Errorf("rebuilt record: status %s counts %+v timeline %+v", rec.Status, rec.Counts, rec.Timeline)
	}
}

func TestNewNeedsStore(t *testing.T) {
	if _, err := runs.New(nil, runs.Options{}); err == nil {
		t.Error("New(nil) succeeded")
	}
	reg := prometheus.NewRegistry()
	db := openStore(t)
	newReducer(t, db.Runs(), runs.Options{Registerer: reg})
	if _, err := runs.New(db.Runs(), runs.Options{Registerer: reg}); err == nil {
		t.Error("second registration on one registry succeeded")
	}
}

// The descriptor follows the events of the run's own session only.
func TestReducerDescriptor(t *testing.T) {
	db := openStore(t)
	r := newReducer(t, db.Runs(), runs.Options{Descriptor: func(ev *protocol.Event) *runs.DescriptorRef {
		return &runs.DescriptorRef{Hash: "sha256:" + ev.SessionID, Name: "d-" + ev.SessionID}
	}})
	for _, ev := range []protocol.Event{
		lifecycle("r", "s1", 1, "created"),
		lifecycle("r", "s2", 2, "cancelled"), // another session: rejected
		lifecycle("r", "s1", 3, "executing"),
	} {
		if err := r.Observe(t.Context(), &ev); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := runs.Load(t.Context(), db.Runs(), "r")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Descriptor == nil || rec.Descriptor.Hash != "sha256:s1" || rec.Status != "executing" ||
		!reflect.DeepEqual(rec.FlagKinds, []string{runs.FlagSessionMismatch}) {
		t.Errorf("descriptor %+v status %s flags %v", rec.Descriptor, rec.Status, rec.FlagKinds)
	}
}
