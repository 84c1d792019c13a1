// Package storetest is the conformance suite of store.Store: every
// implementation runs it from its own tests, so that SQLite and PostgreSQL
// behave the same to the harness.
package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
)

// NewDatabase prepares a fresh, empty database for one test and returns a
// function that opens it. Open may be called again after the store it
// returned is closed, and must then open the same database. The suite
// closes every store it opens.
type NewDatabase func(t *testing.T) (open func(t *testing.T) store.Store)

// Run runs the whole suite as subtests of t.
func Run(t *testing.T, newDB NewDatabase) {
	t.Run("Audit", func(t *testing.T) { runAudit(t, newDB) })
	t.Run("Approvals", func(t *testing.T) { runApprovals(t, newDB) })
	t.Run("Memory", func(t *testing.T) { runMemory(t, newDB) })
	t.Run("MemoryScope", func(t *testing.T) { runMemoryScope(t, newDB) })
	t.Run("Runs", func(t *testing.T) { runRuns(t, newDB) })
}

// openFresh opens a new empty database and closes it when t ends.
func openFresh(t *testing.T, newDB NewDatabase) (store.Store, func(t *testing.T) store.Store) {
	t.Helper()
	open := newDB(t)
	reopen := func(t *testing.T) store.Store {
		t.Helper()
		s := open(t)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	return reopen(t), reopen
}

// base is the time of the suite's records: microsecond precision, which
// every implementation keeps.
var base = time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC)

// record builds a complete audit record; i makes it distinct.
func record(i int, session, outcome string) *store.AuditRecord {
	return &store.AuditRecord{
		Time:           base.Add(time.Duration(i) * time.Millisecond),
		SessionID:      session,
		AgentID:        "agent-1",
		EventType:      "pre_action",
		Blocking:       true,
		Event:          json.RawMessage(fmt.Sprintf(`{"event_type":"pre_action","session_id":%q,"agent_id":"agent-1","timestamp":"2026-11-21T10:00:00Z","depth":0,"payload":{"tool_name":"bash","arguments":{"command":"echo %d"}}}`, session, i)),
		Decision:       json.RawMessage(fmt.Sprintf(`{"decision":%q,"reason":"r%d"}`, outcome, i)),
		Outcome:        outcome,
		RuleID:         fmt.Sprintf("rule-%d", i%3),
		PolicyVersion:  "sha256:0f1e2d",
		Principal:      "alice",
		Transport:      "http",
		Latency:        time.Duration(i+1) * time.Microsecond,
		DescriptorHash: "sha256:aa",
	}
}

// sameRecord fails t unless got equals want apart from the assigned ID.
func sameRecord(t *testing.T, got, want store.AuditRecord) {
	t.Helper()
	if !got.Time.Equal(want.Time) {
		t.Errorf("record %d: time %v, want %v", got.ID, got.Time, want.Time)
	}
	g, w := got, want
	g.Time, w.Time, g.ID, w.ID = time.Time{}, time.Time{}, 0, 0
	g.Event, w.Event = compact(t, g.Event), compact(t, w.Event)
	g.Decision, w.Decision = compact(t, g.Decision), compact(t, w.Decision)
	gj, _ := json.Marshal(g)
	wj, _ := json.Marshal(w)
	if string(gj) != string(wj) {
		t.Errorf("record %d:\n got %s\nwant %s", got.ID, gj, wj)
	}
}

// compact normalises JSON text so that stores that reformat JSON (such as
// a jsonb column) compare equal to those that keep it verbatim.
func compact(t *testing.T, b json.RawMessage) json.RawMessage {
	t.Helper()
	if len(b) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("stored JSON does not parse: %v", err)
	}
	out, _ := json.Marshal(v)
	return out
}
