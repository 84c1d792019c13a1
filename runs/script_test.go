package runs_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs"
	"github.com/ahp-go/ahp/runs/runstest"
)

// applyAll reduces evs into a new record, returning the outcomes.
func applyAll(t *testing.T, evs []protocol.Event) (*runs.Record, []runs.Outcome) {
	t.Helper()
	rec := new(runs.Record)
	var outs []runs.Outcome
	for i := range evs {
		out, err := runs.Apply(rec, &evs[i])
		if err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
		outs = append(outs, out)
	}
	return rec, outs
}

// checkScripted asserts the record the scripted session must produce.
func checkScripted(t *testing.T, rec *runs.Record) {
	t.Helper()
	at := runstest.At
	if rec.RunID != runstest.RunID || rec.SessionID != runstest.SessionID || rec.AgentID != runstest.AgentID {
		t.Errorf("ids = %q %q %q", rec.RunID, rec.SessionID, rec.AgentID)
	}
	if rec.Status != protocol.RunCompleted {
		t.Errorf("status = %q, want completed (the illegal completed → executing must not apply)", rec.Status)
	}
	if !rec.StartedAt.Equal(at(0)) || !rec.UpdatedAt.Equal(at(9)) {
		t.Errorf("started_at %v updated_at %v, want %v and %v", rec.StartedAt, rec.UpdatedAt, at(0), at(9))
	}
	if rec.Prompt != runstest.Prompt || rec.ResultSummary != runstest.Summary || rec.Error != "" {
		t.Errorf("prompt %q result %q error %q", rec.Prompt, rec.ResultSummary, rec.Error)
	}

	want := []runs.Transition{
		{From: "", To: "created", At: at(0), Seq: 1},
		{From: "created", To: "planning", At: at(1), Seq: 2},
		{From: "planning", To: "executing", At: at(3), Seq: 4},
		{From: "executing", To: "verifying", At: at(6), Seq: 8},
		{From: "verifying", To: "planning", At: at(5), Seq: 10, OutOfOrder: true},
		{From: "verifying", To: "completed", At: at(9), Seq: 13},
		{From: "completed", To: "executing", At: at(10), Seq: 14, Illegal: true},
	}
	if len(rec.Timeline) != len(want) {
		t.Fatalf("timeline has %d entries, want %d: %+v", len(rec.Timeline), len(want), rec.Timeline)
	}
	for i, w := range want {
		g := rec.Timeline[i]
		if g.From != w.From || g.To != w.To || !g.At.Equal(w.At) || g.Seq != w.Seq || g.Illegal != w.Illegal || g.OutOfOrder != w.OutOfOrder {
			t.Errorf("timeline[%d] = %+v, want %+v", i, g, w)
		}
		if g.Applied() == (g.Note != "") {
			t.Errorf("timeline[%d]: refused entries carry a note, applied ones none: %+v", i, g)
		}
	}

	if len(rec.Tasks) != 2 || rec.Tasks[0].ID != "t1" || rec.Tasks[0].Status != "completed" ||
		rec.Tasks[1].ID != "t2" || rec.Tasks[1].Status != "completed" {
		t.Errorf("tasks = %+v, want the snapshot of seq 12 (both completed)", rec.Tasks)
	}
	if !rec.TasksUpdatedAt.Equal(at(8)) {
		t.Errorf("tasks_updated_at = %v, want %v", rec.TasksUpdatedAt, at(8))
	}
	t1 := rec.Tasks[0]
	if len(t1.Evidence) != 1 || t1.Evidence[0].Summary != "fails 3 of 10 runs" || t1.Evidence[0].Artifact == nil ||
		len(t1.Artifacts) != 1 || t1.Artifacts[0].SizeBytes == nil || *t1.Artifacts[0].SizeBytes != 2048 {
		t.Errorf("evidence and artifacts of t1 lost: %+v", t1)
	}
	if !slices.Equal(rec.Tasks[1].DependsOn, []string{"t1"}) {
		t.Errorf("t2 depends_on = %v", rec.Tasks[1].DependsOn)
	}

	v := rec.Verification
	if v == nil || v.Status != "passed" || !v.UpdatedAt.Equal(at(8)) || len(v.Checks) != 2 ||
		v.Checks[0].Command != "go test ./..." || v.Checks[0].Status != "passed" || len(v.Checks[0].Evidence) != 1 ||
		!slices.Equal(v.ResidualRisks, []string{runstest.Risk}) {
		t.Errorf("verification = %+v", v)
	}

	type flag struct {
		kind  string
		event protocol.EventType
		seq   int
		at    time.Time
	}
	wantFlags := []flag{
		{runs.FlagDuplicate, protocol.EventTaskList, 6, at(5)},
		{runs.FlagOutOfOrder, protocol.EventTaskList, 7, at(4)},
		{runs.FlagOutOfOrder, protocol.EventRunLifecycle, 10, at(5)},
		{runs.FlagIllegalTransition, protocol.EventRunLifecycle, 14, at(10)},
		{runs.FlagDuplicate, protocol.EventRunLifecycle, 15, at(10)},
	}
	var gotFlags []flag
	for _, f := range rec.Flags {
		gotFlags = append(gotFlags, flag{f.Kind, f.Event, f.Seq, f.At})
		if f.Detail == "" {
			t.Errorf("flag %+v has no detail", f)
		}
	}
	if !reflect.DeepEqual(gotFlags, wantFlags) {
		t.Errorf("flags = %+v\nwant  %+v", gotFlags, wantFlags)
	}
	if !slices.Equal(rec.FlagKinds, []string{runs.FlagDuplicate, runs.FlagOutOfOrder, runs.FlagIllegalTransition}) {
		t.Errorf("flag_kinds = %v", rec.FlagKinds)
	}

	wantCounts := runs.Counts{Events: 15, Applied: 10, Duplicates: 2, OutOfOrder: 2, Illegal: 1,
		TasksTotal: 2, TasksDone: 2, ChecksTotal: 2, ChecksPassed: 2}
	if rec.Counts != wantCounts {
		t.Errorf("counts = %+v\nwant     %+v", rec.Counts, wantCounts)
	}
}

func TestScriptedSession(t *testing.T) {
	rec, outs := applyAll(t, runstest.Session())
	wantOuts := []runs.Outcome{"applied", "applied", "applied", "applied", "applied", "duplicate", "out_of_order",
		"applied", "applied", "out_of_order", "applied", "applied", "applied", "illegal_transition", "duplicate"}
	if !slices.Equal(outs, wantOuts) {
		t.Errorf("outcomes = %v\nwant       %v", outs, wantOuts)
	}
	checkScripted(t, rec)
}

// TestRecordJSONRoundTrip checks that a record survives its stored form
// (the reducer reads, applies and writes it back on every event).
func TestRecordJSONRoundTrip(t *testing.T) {
	evs := runstest.Session()
	rec := new(runs.Record)
	for i := range evs {
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		rec = new(runs.Record)
		if err := json.Unmarshal(b, rec); err != nil {
			t.Fatalf("before event %d: %v\n%s", i+1, err, b)
		}
		if _, err := runs.Apply(rec, &evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	checkScripted(t, rec)

	b, _ := json.Marshal(rec)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"run_id", "session_id", "agent_id", "status", "started_at", "updated_at", "prompt",
		"result_summary", "timeline", "tasks", "tasks_updated_at", "verification", "flags", "flag_kinds", "counts"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	empty, _ := json.Marshal(runs.Record{RunID: "r"})
	var e map[string]any
	json.Unmarshal(empty, &e)
	for _, k := range []string{"timeline", "tasks", "flags"} {
		if l, ok := e[k].([]any); !ok || len(l) != 0 {
			t.Errorf("empty record: %s = %v, want []", k, e[k])
		}
	}
	if _, ok := e["status"]; ok {
		t.Errorf("empty record writes a status: %s", empty)
	}
}
