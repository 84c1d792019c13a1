package runs_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs"
	"github.com/ahp-go/ahp/store"
)

func ended(run, session, how, errText string, n int) runs.ConnectionEndedEvent {
	return runs.ConnectionEndedEvent{RunID: run, SessionID: session, How: how, Error: errText, At: t0.Add(secs(n))}
}

func secs(n int) time.Duration { return time.Duration(n) * time.Second }

func mustEnd(t *testing.T, rec *runs.Record, e runs.ConnectionEndedEvent, want runs.Outcome) {
	t.Helper()
	out, err := runs.ApplyConnectionEnded(rec, e)
	if err != nil {
		t.Fatalf("ApplyConnectionEnded: %v", err)
	}
	if out != want {
		t.Fatalf("ApplyConnectionEnded = %s, want %s", out, want)
	}
}

// A lost connection marks an open run, without changing its status, and
// flags it; the next event of the session clears the mark, not the flag.
func TestApplyConnectionLostThenBack(t *testing.T) {
	rec := new(runs.Record)
	mustApply(t, rec, lifecycle("r", "s", 1, "executing"), runs.OutcomeApplied)
	mustEnd(t, rec, ended("r", "s", runs.ConnectionLost, "read unix: connection reset by peer", 2), runs.OutcomeApplied)

	want := &runs.ConnectionEnd{How: "lost", Error: "read unix: connection reset by peer", At: t0.Add(secs(2)), Seq: 2}
	if !reflect.DeepEqual(rec.Connection, want) || rec.Status != "executing" || rec.Counts.Events != 2 || rec.Counts.Applied != 2 {
		t.Fatalf("connection %+v status %s counts %+v", rec.Connection, rec.Status, rec.Counts)
	}
	if got := strings.Join(flagKinds(rec), " "); got != "connection_lost" || !strings.Contains(rec.Flags[0].Detail, "while the run was executing: read unix") {
		t.Errorf("flags %+v", rec.Flags)
	}
	b, _ := json.Marshal(rec)
	if !strings.Contains(string(b), `"connection_ended":{"connection":"lost","error":"read unix: connection reset by peer","at":"2026-11-21T12:00:02Z","seq":2}`) {
		t.Errorf("JSON %s", b)
	}
	// The status timeline says nothing of it: the run neither failed nor succeeded.
	if len(rec.Timeline) != 1 {
		t.Errorf("timeline %+v", rec.Timeline)
	}

	// The agent is back: even a repeat of an old snapshot clears the mark.
	mustApply(t, rec, lifecycle("r", "s", 1, "executing"), runs.OutcomeDuplicate)
	if rec.Connection != nil || !reflect.DeepEqual(rec.FlagKinds, []string{"connection_lost", "duplicate"}) {
		t.Errorf("after the agent came back: connection %+v flag kinds %v", rec.Connection, rec.FlagKinds)
	}
	b, _ = json.Marshal(rec)
	if strings.Contains(string(b), `"connection_ended":`) {
		t.Errorf("JSON still says the connection ended: %s", b)
	}
	mustApply(t, rec, lifecycle("r", "s", 3, "verifying"), runs.OutcomeApplied)
	if rec.Status != "verifying" || rec.Connection != nil {
		t.Errorf("status %s connection %+v", rec.Status, rec.Connection)
	}
}

// A closed connection marks the run but raises no flag; a second end
// replaces the first; a finished run and another session's end are not
// marked; bad events fail and change nothing.
func TestApplyConnectionEndedCases(t *testing.T) {
	rec := new(runs.Record)
	mustApply(t, rec, taskList("r", "s", ts(1), "in_progress"), runs.OutcomeApplied)
	// A closed connection has no error: any text given is not kept.
	mustEnd(t, rec, ended("r", "s", runs.ConnectionClosed, "EOF", 2), runs.OutcomeApplied)
	if rec.Connection == nil || rec.Connection.How != "closed" || rec.Connection.Error != "" || len(rec.Flags) != 0 {
		t.Fatalf("connection %+v flags %+v", rec.Connection, rec.Flags)
	}
	// A later end replaces the earlier; a long error is clipped.
	mustEnd(t, rec, ended("r", "s", runs.ConnectionLost, strings.Repeat("x", 2000), 3), runs.OutcomeApplied)
	if rec.Connection.How != "lost" || rec.Connection.Seq != 3 || len(rec.Connection.Error) > 512 || len(rec.Flags[0].Detail) > 512 {
		t.Errorf("second end: %+v", rec.Connection)
	}

	before := *rec
	mustEnd(t, rec, ended("r", "other", runs.ConnectionLost, "x", 4), runs.OutcomeRejected)
	if rec.Connection.Seq != 3 || rec.Counts.Rejected != 1 || rec.Flags[len(rec.Flags)-1].Kind != runs.FlagSessionMismatch {
		t.Errorf("another session's end: %+v %+v", rec.Connection, rec.Flags)
	}

	for _, e := range []runs.ConnectionEndedEvent{
		ended("", "s", "lost", "", 5),
		ended("r", "s", "vanished", "", 5),
	} {
		if _, err := runs.ApplyConnectionEnded(rec, e); !errors.Is(err, runs.ErrInvalidPayload) {
			t.Errorf("%+v: err %v", e, err)
		}
	}
	if _, err := runs.ApplyConnectionEnded(rec, ended("r2", "s", "lost", "", 5)); !errors.Is(err, runs.ErrOtherRun) {
		t.Errorf("other run: %v", err)
	}
	if rec.Counts.Events != before.Counts.Events+1 {
		t.Errorf("failed applies counted: %+v", rec.Counts)
	}

	done := new(runs.Record)
	mustApply(t, done, lifecycle("d", "s", 1, "completed"), runs.OutcomeApplied)
	mustEnd(t, done, ended("d", "s", runs.ConnectionLost, "x", 2), runs.OutcomeIgnored)
	if done.Connection != nil || len(done.Flags) != 0 || done.Counts.Events != 2 || done.Counts.Applied != 1 {
		t.Errorf("finished run: %+v flags %+v counts %+v", done.Connection, done.Flags, done.Counts)
	}
}

// The Reducer marks the open runs of a session, and only those; the
// events go to each run's log, and Replay rebuilds the same records.
func TestReducerConnectionEnded(t *testing.T) {
	db := openStore(t)
	reg := prometheus.NewRegistry()
	r := newReducer(t, db.Runs(), runs.Options{Registerer: reg})
	ctx := t.Context()
	for _, ev := range []protocol.Event{
		lifecycle("open", "s", 1, "executing"),
		taskList("tasks-only", "s", ts(1), "pending"),
		lifecycle("done", "s", 1, "completed"),
		lifecycle("elsewhere", "s2", 1, "executing"),
	} {
		if err := r.Observe(ctx, &ev); err != nil {
			t.Fatal(err)
		}
	}
	n, err := r.ConnectionEnded(ctx, "s", runs.ConnectionEnd{How: runs.ConnectionLost, Error: "keep-alive timeout", At: t0.Add(secs(5))})
	if err != nil || n != 2 {
		t.Fatalf("ConnectionEnded = %d, %v; want 2 runs", n, err)
	}
	for run, lost := range map[string]bool{"open": true, "tasks-only": true, "done": false, "elsewhere": false} {
		rec, err := runs.Load(ctx, db.Runs(), run)
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.Connection != nil && rec.Connection.How == "lost" && rec.Connection.Error == "keep-alive timeout"; got != lost {
			t.Errorf("run %s: connection %+v, want marked %v", run, rec.Connection, lost)
		}
		rr, _ := db.Runs().Get(ctx, run)
		if lost && (!reflect.DeepEqual(rr.Flags, []string{"connection_lost"}) || rr.Status != string(rec.Status)) {
			t.Errorf("run %s stored as %+v", run, rr)
		}
		evs, _ := db.Runs().Events(ctx, run, 0, 10)
		if wantEvs := map[bool]int{true: 2, false: 1}[lost]; len(evs) != wantEvs {
			t.Errorf("run %s: %d events in the log, want %d", run, len(evs), wantEvs)
		}
		replayed, err := runs.Replay(ctx, db.Runs(), run)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(rec)
		b, _ := json.Marshal(replayed)
		if !bytes.Equal(a, b) {
			t.Errorf("run %s: replay differs:\nlive   %s\nreplay %s", run, a, b)
		}
	}
	// Flagged runs of the session can be found through the store.
	flagged, _ := db.Runs().List(ctx, store.RunFilter{SessionID: "s", FlaggedOnly: true})
	if len(flagged) != 2 {
		t.Errorf("%d flagged runs, want 2", len(flagged))
	}
	if got := counter(t, reg, runs.KindConnectionEnded, "applied"); got != 2 {
		t.Errorf("connection_ended applied = %v, want 2", got)
	}

	// The agent comes back and reports on the open run: the mark goes,
	// the flag stays, and replay still agrees.
	ev := lifecycle("open", "s", 6, "verifying")
	if err := r.Observe(ctx, &ev); err != nil {
		t.Fatal(err)
	}
	rec, _ := runs.Load(ctx, db.Runs(), "open")
	if rec.Connection != nil || rec.Status != "verifying" || !reflect.DeepEqual(rec.FlagKinds, []string{"connection_lost"}) {
		t.Errorf("after the agent came back: %+v status %s flags %v", rec.Connection, rec.Status, rec.FlagKinds)
	}
	replayed, _ := runs.Replay(ctx, db.Runs(), "open")
	a, _ := json.Marshal(rec)
	b, _ := json.Marshal(replayed)
	if !bytes.Equal(a, b) {
		t.Errorf("replay differs:\nlive   %s\nreplay %s", a, b)
	}

	// A session without runs, and a bad kind.
	if n, err := r.ConnectionEnded(ctx, "nobody", runs.ConnectionEnd{How: runs.ConnectionClosed}); n != 0 || err != nil {
		t.Errorf("no runs: %d, %v", n, err)
	}
	if _, err := r.ConnectionEnded(ctx, "s", runs.ConnectionEnd{How: "gone"}); !errors.Is(err, runs.ErrInvalidPayload) {
		t.Errorf("bad kind: %v", err)
	}
}

// The table and the tree say that the agent is away, and how.
func TestRenderConnectionEnded(t *testing.T) {
	rec := new(runs.Record)
	mustApply(t, rec, lifecycle("r", "s", 1, "executing"), runs.OutcomeApplied)
	mustEnd(t, rec, ended("r", "s", runs.ConnectionLost, "read: connection reset by peer\x1b[2J", 2), runs.OutcomeApplied)
	var tb, tr bytes.Buffer
	if err := runs.WriteTable(&tb, []*runs.Record{rec}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tb.String(), "executing (connection lost)") {
		t.Errorf("table:\n%s", tb.String())
	}
	if err := runs.WriteTree(&tr, rec); err != nil {
		t.Fatal(err)
	}
	out := tr.String()
	if !strings.HasPrefix(out, "run r  executing (connection lost)\n") || strings.Contains(out, "\x1b") ||
		!strings.Contains(out, "connection  lost (event #2) at 2026-11-21T12:00:02Z: read: connection reset by peer [2J; no event from the agent since") ||
		!strings.Contains(out, "⚠ connection_lost  2026-11-21T12:00:02Z") {
		t.Errorf("tree:\n%s", out)
	}
}
