// Package runstest holds a scripted run for tests of the runs package and
// of the commands that show runs: fifteen run contract events of one run,
// including a duplicate, out-of-order snapshots and an illegal transition.
package runstest

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// The identities of the scripted run.
const (
	RunID     = "run-1"
	SessionID = "sess-1"
	AgentID   = "agent-1"
)

// Base is the updated_at of the script's first snapshot; the script's
// times are Base plus whole seconds (see At).
var Base = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// At returns Base plus n seconds.
func At(n int) time.Time { return Base.Add(time.Duration(n) * time.Second) }

// Event builds a run contract event of the scripted session whose payload
// is the JSON of payload.
func Event(kind protocol.EventType, payload any) protocol.Event {
	b, err := json.Marshal(payload)
	if err != nil {
		panic(fmt.Sprintf("runstest: payload: %v", err))
	}
	return protocol.Event{
		EventType: kind, SessionID: SessionID, AgentID: AgentID,
		Timestamp: Base.Format(time.RFC3339), Payload: b,
	}
}

// Lifecycle builds a run_lifecycle event of the scripted run at At(n).
func Lifecycle(n int, status protocol.RunStatus, extra map[string]any) protocol.Event {
	p := map[string]any{"run_id": RunID, "session_id": SessionID, "status": status, "updated_at": stamp(n)}
	for k, v := range extra {
		p[k] = v
	}
	return Event(protocol.EventRunLifecycle, p)
}

// Tasks builds a task_list event of the scripted run at At(n).
func Tasks(n int, tasks ...protocol.TaskItem) protocol.Event {
	return Event(protocol.EventTaskList, protocol.TaskListPayload{RunID: RunID, SessionID: SessionID, Tasks: tasks, UpdatedAt: stamp(n)})
}

// Verification builds a verification event of the scripted run at At(n).
func Verification(n int, status protocol.VerificationStatus, risks []string, checks ...protocol.VerificationCheck) protocol.Event {
	return Event(protocol.EventVerification, protocol.VerificationPayload{
		RunID: RunID, SessionID: SessionID, Status: status, Checks: checks, ResidualRisks: risks, UpdatedAt: stamp(n),
	})
}

func stamp(n int) string { return At(n).Format(time.RFC3339) }

// Prompt, Summary and Risk are texts of the script.
const (
	Prompt  = "Fix the flaky login test"
	Summary = "Login test fixed: the session cookie raced the redirect"
	Risk    = "CI runs on one browser only"
)

var size = uint64(2048)

// The tasks of the script.
var (
	reproduce = protocol.TaskItem{ID: "t1", Title: "Reproduce the failure", Status: "completed",
		Evidence: []protocol.EvidenceRef{{Kind: "test_output", Summary: "fails 3 of 10 runs",
			Artifact: &protocol.ArtifactRef{ID: "a1", Path: "logs/repro.txt"}}},
		Artifacts: []protocol.ArtifactRef{{ID: "a1", Kind: "log", Path: "logs/repro.txt", MimeType: "text/plain", SizeBytes: &size}}}
	fix = protocol.TaskItem{ID: "t2", Title: "Fix the race", Status: "in_progress", DependsOn: []string{"t1"}}
)

// Session returns the scripted events, in delivery order. The comments
// give what a reducer must make of each (seq is the 1-based position).
func Session() []protocol.Event {
	pending := func(t protocol.TaskItem) protocol.TaskItem {
		t.Status, t.Evidence, t.Artifacts = "pending", nil, nil
		return t
	}
	running := func(t protocol.TaskItem) protocol.TaskItem {
		t.Status, t.Evidence, t.Artifacts = "in_progress", nil, nil
		return t
	}
	done := func(t protocol.TaskItem) protocol.TaskItem { t.Status = "completed"; return t }
	unit := protocol.VerificationCheck{ID: "c1", Subject: "unit tests", Status: "passed", Command: "go test ./...", Message: "ok",
		Evidence: []protocol.EvidenceRef{{Kind: "test_output", Summary: "212 passed"}}}
	e2e := protocol.VerificationCheck{ID: "c2", Subject: "login e2e, 50 runs", Status: "passed"}
	unitRunning := unit
	unitRunning.Status, unitRunning.Message, unitRunning.Evidence = "running", "", nil
	return []protocol.Event{
		Lifecycle(0, protocol.RunCreated, map[string]any{"prompt": Prompt, "started_at": stamp(0)}), // 1 applied: → created
		Lifecycle(1, protocol.RunPlanning, nil),                                                     // 2 applied: created → planning
		Tasks(2, pending(reproduce), pending(fix)),                                                  // 3 applied
		Lifecycle(3, protocol.RunExecuting, nil),                                                    // 4 applied: planning → executing
		Tasks(5, reproduce, fix),                                                                    // 5 applied
		Tasks(5, reproduce, fix),                                                                    // 6 duplicate of 5
		Tasks(4, running(reproduce), pending(fix)),                                                  // 7 out of order (4 < 5)
		Lifecycle(6, protocol.RunVerifying, nil),                                                    // 8 applied: executing → verifying
		Verification(7, "running", nil, unitRunning),                                                // 9 applied
		Lifecycle(5, protocol.RunPlanning, nil),                                                     // 10 out of order (5 < 6), in the timeline
		Verification(8, "passed", []string{Risk}, unit, e2e),                                        // 11 applied
		Tasks(8, reproduce, done(fix)),                                                              // 12 applied
		Lifecycle(9, protocol.RunCompleted, map[string]any{"result_summary": Summary}),              // 13 applied: verifying → completed
		Lifecycle(10, protocol.RunExecuting, nil),                                                   // 14 illegal: completed → executing
		Lifecycle(10, protocol.RunExecuting, nil),                                                   // 15 duplicate of 14
	}
}
