package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs"
	"github.com/ahp-go/ahp/runs/runstest"
	"github.com/ahp-go/ahp/store/sqlite"
)

// fillRuns writes the scripted run and one more run into a new data
// directory through a Reducer, as a harness would, and returns the dir.
func fillRuns(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(t.Context(), filepath.Join(dir, sqlite.FileName), sqlite.Options{Sync: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := runs.New(db.Runs(), runs.Options{Descriptor: func(*protocol.Event) *runs.DescriptorRef {
		return &runs.DescriptorRef{Hash: "sha256:feed", Name: "coder", Version: "1.2.0"}
	}})
	if err != nil {
		t.Fatal(err)
	}
	evs := runstest.Session()
	other := runstest.Event(protocol.EventRunLifecycle, map[string]any{
		"run_id": "run-2", "session_id": runstest.SessionID, "status": "executing", "updated_at": runstest.At(20).Format("2006-01-02T15:04:05Z07:00"),
	})
	evs = append(evs, other)
	for i := range evs {
		if err := r.Observe(t.Context(), &evs[i]); err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
	}
	return dir
}

// runAhp runs the root command with args in-process.
func runAhp(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errw bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errw)
	root.SetArgs(args)
	err := root.ExecuteContext(t.Context())
	return out.String(), err
}

func TestRunsShow(t *testing.T) {
	dir := fillRuns(t)
	out, err := runAhp(t, "runs", "show", runstest.RunID, "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"run run-1  completed\n",
		"├─ descriptor  coder 1.2.0 (sha256:feed)\n",
		"├─ events      15: 10 applied, 2 duplicate, 2 out of order, 1 illegal, 0 rejected\n",
		"│  ├─   #13  verifying → completed    2026-11-21T10:00:09Z\n",
		"│  ├─ ⚠ #10  verifying → planning     2026-11-21T10:00:05Z  OUT OF ORDER, not applied\n",
		"│  └─ ⚠ #14  completed → executing    2026-11-21T10:00:10Z  ILLEGAL, not applied\n",
		"├─ tasks  2/2 done  updated 2026-11-21T10:00:08Z\n",
		"│  │  ├─ evidence  test_output: fails 3 of 10 runs  → a1  logs/repro.txt\n",
		"├─ verification  passed  2/2 checks passed  updated 2026-11-21T10:00:08Z\n",
		"│  └─ CI runs on one browser only\n",
		"└─ flags  5: duplicate, out_of_order, illegal_transition\n",
		"   ├─ ⚠ illegal_transition  run_lifecycle #14  2026-11-21T10:00:10Z\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	out, err = runAhp(t, "runs", "show", runstest.RunID, "--json", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	var rec runs.Record
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if rec.Status != "completed" || rec.Counts.Events != 15 || len(rec.Timeline) != 7 || rec.Descriptor == nil {
		t.Errorf("--json record: %+v", rec)
	}

	if _, err := runAhp(t, "runs", "show", "nope", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), `no run "nope"`) {
		t.Errorf("unknown run: %v", err)
	}
	if _, err := runAhp(t, "runs", "show", "run-1", "--data-dir", t.TempDir()); err == nil || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("empty data dir: %v", err)
	}
}

func TestRunsList(t *testing.T) {
	dir := fillRuns(t)
	out, err := runAhp(t, "runs", "list", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "RUN ") ||
		!strings.HasPrefix(lines[1], "run-2  sess-1   executing  0/0    -") ||
		!strings.Contains(lines[2], "run-1  sess-1   completed  2/2    2/2     ⚠ duplicate,out_of_order,illegal_transition  2026-11-21T10:00:09Z") {
		t.Errorf("list:\n%s", out)
	}

	out, err = runAhp(t, "runs", "list", "--status", "completed", "--json", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "\n"); n != 1 || !strings.Contains(out, `"run_id":"run-1"`) {
		t.Errorf("--status completed --json:\n%s", out)
	}
	out, err = runAhp(t, "runs", "list", "--session", "other", "--data-dir", dir)
	if err != nil || out != "no runs\n" {
		t.Errorf("--session other: %q, %v", out, err)
	}
	if _, err := runAhp(t, "runs", "list", "--status", "paused", "--data-dir", dir); err == nil {
		t.Error("--status paused accepted")
	}
}

// A run whose agent's connection was lost says so in list, show and
// --json, with its status unchanged; --flagged finds it.
func TestRunsConnectionLost(t *testing.T) {
	dir := t.TempDir()
	db, err := sqlite.Open(t.Context(), filepath.Join(dir, sqlite.FileName), sqlite.Options{Sync: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runs.New(db.Runs(), runs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ev := runstest.Event(protocol.EventRunLifecycle, map[string]any{
		"run_id": "run-9", "session_id": runstest.SessionID, "status": "executing", "updated_at": runstest.At(1).Format("2006-01-02T15:04:05Z07:00"),
	})
	if err := r.Observe(t.Context(), &ev); err != nil {
		t.Fatal(err)
	}
	end := runs.ConnectionEnd{How: runs.ConnectionLost, Error: "read unix: connection reset by peer", At: runstest.At(2)}
	if n, err := r.ConnectionEnded(t.Context(), runstest.SessionID, end); n != 1 || err != nil {
		t.Fatalf("ConnectionEnded = %d, %v", n, err)
	}
	db.Close()

	out, err := runAhp(t, "runs", "list", "--flagged", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "run-9  sess-1   executing (connection lost)  0/0    -       ⚠ connection_lost") {
		t.Errorf("list --flagged: %v\n%s", err, out)
	}
	out, err = runAhp(t, "runs", "show", "run-9", "--data-dir", dir)
	if err != nil || !strings.HasPrefix(out, "run run-9  executing (connection lost)\n") ||
		!strings.Contains(out, "├─ connection  lost (event #2) at 2026-11-21T10:00:02Z: read unix: connection reset by peer; no event from the agent since\n") {
		t.Errorf("show: %v\n%s", err, out)
	}
	out, err = runAhp(t, "runs", "show", "run-9", "--json", "--data-dir", dir)
	var rec runs.Record
	if err != nil || json.Unmarshal([]byte(out), &rec) != nil || rec.Status != "executing" || rec.Connection == nil ||
		rec.Connection.How != "lost" || !strings.Contains(out, `"connection_ended": {`) {
		t.Errorf("show --json: %v\n%s", err, out)
	}
}
