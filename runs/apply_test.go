package runs_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func ts(n int) string { return t0.Add(time.Duration(n) * time.Second).Format(time.RFC3339Nano) }

func ptr[T any](v T) *T { return &v }

func event(kind protocol.EventType, session string, payload string) protocol.Event {
	return protocol.Event{EventType: kind, SessionID: session, AgentID: "a", Payload: json.RawMessage(payload)}
}

func lifecycle(run, session string, n int, status protocol.RunStatus) protocol.Event {
	return event(protocol.EventRunLifecycle, session,
		fmt.Sprintf(`{"run_id":%q,"session_id":%q,"status":%q,"updated_at":%q}`, run, session, status, ts(n)))
}

func taskList(run, session, updated string, statuses ...string) protocol.Event {
	var items []string
	for i, s := range statuses {
		items = append(items, fmt.Sprintf(`{"id":"t%d","title":"task %d","status":%q}`, i, i, s))
	}
	return event(protocol.EventTaskList, session,
		fmt.Sprintf(`{"run_id":%q,"session_id":%q,"tasks":[%s],"updated_at":%q}`, run, session, strings.Join(items, ","), updated))
}

func mustApply(t *testing.T, rec *runs.Record, ev protocol.Event, want runs.Outcome) {
	t.Helper()
	out, err := runs.Apply(rec, &ev)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if out != want {
		t.Fatalf("Apply = %s, want %s", out, want)
	}
}

func flagKinds(rec *runs.Record) []string {
	var out []string
	for _, f := range rec.Flags {
		out = append(out, f.Kind)
	}
	return out
}

func TestApplyErrors(t *testing.T) {
	rec := new(runs.Record)
	mustApply(t, rec, lifecycle("r1", "s", 1, "created"), runs.OutcomeApplied)
	before, _ := json.Marshal(rec)
	cases := []struct {
		name string
		ev   protocol.Event
		want error
	}{
		{"other event type", event(protocol.EventPreAction, "s", `{}`), runs.ErrNotRunEvent},
		{"missing updated_at", event(protocol.EventRunLifecycle, "s", `{"run_id":"r1","session_id":"s","status":"planning"}`), runs.ErrInvalidPayload},
		{"unknown status", event(protocol.EventRunLifecycle, "s", `{"run_id":"r1","session_id":"s","status":"paused","updated_at":"x"}`), runs.ErrInvalidPayload},
		{"bad task", event(protocol.EventTaskList, "s", `{"run_id":"r1","session_id":"s","tasks":[{"id":"t"}],"updated_at":"x"}`), runs.ErrInvalidPayload},
		{"empty run_id", event(protocol.EventVerification, "s", `{"run_id":"","session_id":"s","status":"passed","updated_at":"x"}`), runs.ErrInvalidPayload},
		{"not JSON", event(protocol.EventTaskList, "s", `{`), runs.ErrInvalidPayload},
		{"another run", lifecycle("r2", "s", 2, "planning"), runs.ErrOtherRun},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := runs.Apply(rec, &c.ev); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			after, _ := json.Marshal(rec)
			if string(after) != string(before) {
				t.Errorf("a failed Apply changed the record")
			}
		})
	}
}

// A newer snapshot wins whatever the arrival order; older ones are
// recorded as out of order, per kind.
func TestOrderingPerKind(t *testing.T) {
	rec := new(runs.Record)
	mustApply(t, rec, taskList("r", "s", ts(5), "completed"), runs.OutcomeApplied)
	mustApply(t, rec, lifecycle("r", "s", 1, "executing"), runs.OutcomeApplied) // older than the tasks: another kind, applies
	mustApply(t, rec, taskList("r", "s", ts(3), "pending"), runs.OutcomeOutOfOrder)
	if rec.Tasks[0].Status != "completed" || !rec.TasksUpdatedAt.Equal(t0.Add(5*time.Second)) {
		t.Errorf("older task list applied: %+v", rec.Tasks)
	}
	if !rec.UpdatedAt.Equal(t0.Add(5 * time.Second)) {
		t.Errorf("updated_at = %v, want the newest applied of any kind", rec.UpdatedAt)
	}
	// An out-of-order task list leaves the timeline alone.
	if len(rec.Timeline) != 1 {
		t.Errorf("timeline = %+v", rec.Timeline)
	}
	// Fractional seconds and offsets compare as instants.
	mustApply(t, rec, taskList("r", "s", t0.Add(5*time.Second+time.Millisecond).In(time.FixedZone("x", 3600)).Format(time.RFC3339Nano), "failed"), runs.OutcomeApplied)
	mustApply(t, rec, taskList("r", "s", "2026-11-21T12:00:05.0005Z", "skipped"), runs.OutcomeOutOfOrder)
	if rec.Tasks[0].Status != "failed" {
		t.Errorf("tasks = %+v", rec.Tasks)
	}
}

func TestDuplicates(t *testing.T) {
	rec := new(runs.Record)
	ev := taskList("r", "s", ts(1), "pending")
	mustApply(t, rec, ev, runs.OutcomeApplied)
	// Same content written differently (spacing, key order inside the
	// payload) is still the same snapshot.
	respaced := ev
	respaced.Payload = json.RawMessage(`{ "updated_at": "` + ts(1) + `", "tasks": [ {"status":"pending","title":"task 0","id":"t0"} ],
		"session_id": "s", "run_id": "r" }`)
	mustApply(t, rec, respaced, runs.OutcomeDuplicate)
	if rec.Counts.Duplicates != 1 || rec.Counts.Applied != 1 || rec.Counts.Events != 2 {
		t.Errorf("counts = %+v", rec.Counts)
	}
	// The duplicate of a refused snapshot is a duplicate too, not a second
	// illegal transition.
	mustApply(t, rec, lifecycle("r", "s", 2, "completed"), runs.OutcomeApplied)
	mustApply(t, rec, lifecycle("r", "s", 3, "executing"), runs.OutcomeIllegal)
	mustApply(t, rec, lifecycle("r", "s", 3, "executing"), runs.OutcomeDuplicate)
	if rec.Counts.Illegal != 1 || len(rec.Timeline) != 2 {
		t.Errorf("counts %+v timeline %+v", rec.Counts, rec.Timeline)
	}
	want := []string{runs.FlagDuplicate, runs.FlagIllegalTransition, runs.FlagDuplicate}
	if got := flagKinds(rec); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("flags = %v, want %v", got, want)
	}
}

// An illegal snapshot is not applied, so it does not move the ordering
// clock: a legal snapshot dated between the applied and the refused one
// still applies, and after it a redelivery of the refused snapshot (no
// longer the last one seen) is judged afresh, here legal.
func TestIllegalDoesNotAdvanceClock(t *testing.T) {
	rec := new(runs.Record)
	mustApply(t, rec, lifecycle("r", "s", 1, "created"), runs.OutcomeApplied)
	mustApply(t, rec, lifecycle("r", "s", 5, "verifying"), runs.OutcomeIllegal)
	mustApply(t, rec, lifecycle("r", "s", 3, "executing"), runs.OutcomeApplied)
	mustApply(t, rec, lifecycle("r", "s", 5, "verifying"), runs.OutcomeApplied)
	mustApply(t, rec, lifecycle("r", "s", 5, "verifying"), runs.OutcomeDuplicate)
	mustApply(t, rec, lifecycle("r", "s", 4, "executing"), runs.OutcomeOutOfOrder)
	mustApply(t, rec, lifecycle("r", "s", 6, "verifying"), runs.OutcomeApplied)
	if rec.Status != "verifying" || len(rec.Timeline) != 5 || !rec.Timeline[1].Illegal || !rec.Timeline[4].OutOfOrder {
		t.Errorf("status %s timeline %+v", rec.Status, rec.Timeline)
	}
}

// A repeated status with new content refreshes the fields it carries
// without a timeline entry.
func TestSameStatusRefresh(t *testing.T) {
	rec := new(runs.Record)
	mustApply(t, rec, event(protocol.EventRunLifecycle, "s", `{"run_id":"r","session_id":"s","status":"executing","prompt":"p1","updated_at":"`+ts(1)+`"}`), runs.OutcomeApplied)
	mustApply(t, rec, event(protocol.EventRunLifecycle, "s", `{"run_id":"r","session_id":"s","status":"executing","error":"retrying","updated_at":"`+ts(2)+`"}`), runs.OutcomeApplied)
	if rec.Prompt != "p1" || rec.Error != "retrying" || len(rec.Timeline) != 1 || len(rec.Flags) != 0 {
		t.Errorf("prompt %q error %q timeline %+v flags %+v", rec.Prompt, rec.Error, rec.Timeline, rec.Flags)
	}
	if !rec.UpdatedAt.Equal(t0.Add(2 * time.Second)) {
		t.Errorf("updated_at = %v", rec.UpdatedAt)
	}
}

// Two different snapshots with one updated_at: the later arrival applies
// and the tie is flagged.
func TestSameUpdatedAt(t *testing.T) {
	rec := new(runs.Record)
	mustApply(t, rec, taskList("r", "s", ts(1), "pending"), runs.OutcomeApplied)
	mustApply(t, rec, taskList("r", "s", ts(1), "completed"), runs.OutcomeApplied)
	if rec.Tasks[0].Status != "completed" || len(rec.Flags) != 1 || rec.Flags[0].Kind != runs.FlagSameUpdatedAt {
		t.Errorf("tasks %+v flags %+v", rec.Tasks, rec.Flags)
	}
	// Both are remembered as seen: the first again is a duplicate of the
	// snapshot it was, the second a duplicate of the applied one.
	mustApply(t, rec, taskList("r", "s", ts(1), "completed"), runs.OutcomeDuplicate)
}

func TestBadTimestamps(t *testing.T) {
	rec := new(runs.Record)
	mustApply(t, rec, lifecycle("r", "s", 5, "created"), runs.OutcomeApplied)
	// Unparsable (and out-of-range) updated_at: applied in arrival order,
	// flagged, the clock stays where it was.
	for _, bad := range []string{"yesterday", "3000-01-01T00:00:00Z"} {
		mustApply(t, rec, event(protocol.EventRunLifecycle, "s", `{"run_id":"r","session_id":"s","status":"planning","started_at":"soon","updated_at":"`+bad+`"}`), runs.OutcomeApplied)
	}
	if rec.Status != "planning" || !rec.UpdatedAt.Equal(t0.Add(5*time.Second)) || !rec.StartedAt.IsZero() {
		t.Errorf("status %s updated %v started %v", rec.Status, rec.UpdatedAt, rec.StartedAt)
	}
	last := rec.Timeline[1]
	if !last.At.IsZero() || last.From != "created" || last.To != "planning" {
		t.Errorf("timeline %+v", rec.Timeline)
	}
	// Each snapshot flags updated_at and started_at.
	if got := strings.Join(flagKinds(rec), " "); got != "bad_timestamp bad_timestamp bad_timestamp bad_timestamp" {
		t.Errorf("flags = %s", got)
	}
	mustApply(t, rec, lifecycle("r", "s", 4, "executing"), runs.OutcomeOutOfOrder)
	mustApply(t, rec, lifecycle("r", "s", 6, "executing"), runs.OutcomeApplied)
}

func TestSessionMismatch(t *testing.T) {
	rec := new(runs.Record)
	mustApply(t, rec, lifecycle("r", "s1", 1, "created"), runs.OutcomeApplied)
	// Another session's snapshot of the same run id.
	mustApply(t, rec, lifecycle("r", "s2", 2, "cancelled"), runs.OutcomeRejected)
	// A payload naming the run's session sent from another session.
	ev := lifecycle("r", "s1", 3, "cancelled")
	ev.SessionID = "s2"
	mustApply(t, rec, ev, runs.OutcomeRejected)
	if rec.Status != "created" || rec.Counts.Rejected != 2 || strings.Join(flagKinds(rec), " ") != "session_mismatch session_mismatch" {
		t.Errorf("status %s counts %+v flags %+v", rec.Status, rec.Counts, rec.Flags)
	}
	// An envelope without a session id is judged by its payload.
	ev.SessionID = ""
	mustApply(t, rec, ev, runs.OutcomeApplied)
}

func TestDescriptor(t *testing.T) {
	rec := new(runs.Record)
	rec.SetDescriptor(runs.DescriptorRef{})
	if rec.Descriptor != nil {
		t.Fatal("empty hash attached")
	}
	rec.SetDescriptor(runs.DescriptorRef{Hash: "sha256:aa", Name: "coder", Version: "1"})
	rec.SetDescriptor(runs.DescriptorRef{Hash: "sha256:aa", Name: "coder", Version: "1"})
	if len(rec.Flags) != 0 || rec.Descriptor.Name != "coder" {
		t.Errorf("descriptor %+v flags %+v", rec.Descriptor, rec.Flags)
	}
	rec.SetDescriptor(runs.DescriptorRef{Hash: "sha256:bb", Name: "coder", Version: "2"})
	if rec.Descriptor.Hash != "sha256:bb" || len(rec.Flags) != 1 || rec.Flags[0].Kind != runs.FlagDescriptorChanged ||
		!strings.Contains(rec.Flags[0].Detail, "sha256:aa") {
		t.Errorf("descriptor %+v flags %+v", rec.Descriptor, rec.Flags)
	}
}

// Flags and timeline keep their newest entries within their bounds, and
// flag_kinds keeps every kind ever raised.
func TestBounds(t *testing.T) {
	rec := new(runs.Record)
	mustApply(t, rec, lifecycle("r", "s", 0, "created"), runs.OutcomeApplied)
	mustApply(t, rec, lifecycle("r", "s", 1, "executing"), runs.OutcomeApplied)
	mustApply(t, rec, lifecycle("r", "s", 2, "created"), runs.OutcomeIllegal)
	n := 2
	for i := 0; i < runs.MaxTimeline; i++ { // executing ↔ verifying rework loops
		n++
		mustApply(t, rec, lifecycle("r", "s", n, "verifying"), runs.OutcomeApplied)
		n++
		mustApply(t, rec, lifecycle("r", "s", n, "executing"), runs.OutcomeApplied)
	}
	for i := 0; i < runs.MaxFlags+10; i++ {
		mustApply(t, rec, lifecycle("r", "s", n, "executing"), runs.OutcomeDuplicate)
	}
	if len(rec.Timeline) != runs.MaxTimeline || rec.Counts.TimelineDropped != 2+2*runs.MaxTimeline+1-runs.MaxTimeline {
		t.Errorf("timeline %d entries, %d dropped", len(rec.Timeline), rec.Counts.TimelineDropped)
	}
	if last := rec.Timeline[len(rec.Timeline)-1]; last.To != "executing" || last.Seq != rec.Counts.Events-runs.MaxFlags-10 {
		t.Errorf("last entry %+v", last)
	}
	if len(rec.Flags) != runs.MaxFlags || rec.Counts.FlagsDropped != 11 {
		t.Errorf("flags %d, %d dropped", len(rec.Flags), rec.Counts.FlagsDropped)
	}
	if strings.Join(rec.FlagKinds, " ") != "illegal_transition duplicate" {
		t.Errorf("flag_kinds = %v", rec.FlagKinds)
	}
	// Long agent-supplied text is clipped in details.
	long := strings.Repeat("é", 2000)
	mustApply(t, rec, lifecycle("r", long, n+1, "executing"), runs.OutcomeRejected)
	if d := rec.Flags[len(rec.Flags)-1].Detail; len(d) > 512 || !strings.Contains(d, "…") {
		t.Errorf("detail of %d bytes", len(d))
	}
}
