package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
	"github.com/ahp-go/ahp/transport"
)

// sent is one event a test sends to the harness.
type sent struct {
	ev        protocol.Event
	principal string
	roles     []string
	transport string
	// answer, when set, is what a human answers to the approval the event
	// waits for (true: approve).
	answer *bool
}

// fakeClock advances by one millisecond on every reading, so that record
// times are the same on every run.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

var epoch = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

// record runs a live harness (real policy engine, real SQLite store) with
// the policy text on every event, as the server would call it, and returns
// the path of the database holding the audit records.
func record(t testing.TB, policyText string, events []sent) string {
	t.Helper()
	return recordIn(t, filepath.Join(t.TempDir(), "ahp.db"), policyText, events)
}

// recordIn is record into the database at path.
func recordIn(t testing.TB, path, policyText string, events []sent) string {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{Sync: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine(t, policyText)
	clock := &fakeClock{t: epoch}
	h, err := harness.New(harness.Options{
		Engine: eng, Store: db, Now: clock.now,
		ApprovalTimeout: 20 * time.Millisecond, DeferIdleWhilePending: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range events {
		s := &events[i]
		info := transport.Info{Transport: s.transport}
		if s.principal != "" {
			info.Principal = &transport.Principal{ID: s.principal, Roles: s.roles}
		}
		ctx := server.WithPeer(context.Background(), info)
		if s.answer != nil {
			answerApproval(t, h, db, *s.answer)
		}
		if err := deliver(ctx, h, &s.ev); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	if err := db.Close(); err != nil { // flushes the notifications
		t.Fatal(err)
	}
	return path
}

// answerApproval starts a human who answers the next approval.
func answerApproval(t testing.TB, h *harness.Harness, db *sqlite.DB, approve bool) {
	go func() {
		ctx := context.Background()
		for range 500 {
			time.Sleep(2 * time.Millisecond)
			pending, err := db.Approvals().List(ctx, store.ApprovalFilter{Status: store.ApprovalPending})
			if err != nil || len(pending) == 0 {
				continue
			}
			human := &transport.Principal{ID: "alice", Roles: []string{harness.RoleApprover}}
			if _, err := h.Decide(ctx, pending[0].ID, approve, human, "looked at it"); err != nil {
				t.Errorf("approval: %v", err)
			}
			return
		}
		t.Errorf("no approval to answer")
	}()
}

// deliver calls the harness method the server calls for ev.
func deliver(ctx context.Context, h *harness.Harness, ev *protocol.Event) error {
	t := ev.EventType
	if !t.Blocking() {
		h.HandleNotification(ctx, ev)
		return nil
	}
	if !t.Typed() {
		_, err := h.HandleEvent(ctx, ev)
		return err
	}
	p, err := protocol.ValidatePayload(t, ev.Payload)
	if err != nil {
		return err
	}
	switch p := p.(type) {
	case *protocol.IdlePayload:
		_, err = h.HandleIdle(ctx, ev, p)
	case *protocol.IntentDetectionPayload:
		_, err = h.HandleIntentDetection(ctx, ev, p)
	case *protocol.ReasoningPayload:
		_, err = h.HandleReasoning(ctx, ev, p)
	case *protocol.RateLimitPayload:
		_, err = h.HandleRateLimit(ctx, ev, p)
	case *protocol.ConfirmationPayload:
		_, err = h.HandleConfirmation(ctx, ev, p)
	default:
		err = fmt.Errorf("test cannot send %s", t)
	}
	return err
}

func engine(t testing.TB, text string) *policy.Engine {
	t.Helper()
	var srcs []policy.Source
	if text != "" {
		srcs = append(srcs, policy.Source{Name: "policy.yaml", Data: []byte(text)})
	}
	// The fixtures are about the test policies' own force-push rules: the
	// packs that hold actions for a human (approvals, whose git_history
	// rule holds git push -f, and the effect packs added since) would wait
	// ten minutes for an answer nobody gives here, so only the packs that
	// block at once are on.
	on := map[string]bool{"destructive_shell": true, "secrets": true, "self_protection": true}
	packs := map[string]bool{}
	for _, n := range policy.PackNames() {
		packs[n] = on[n]
	}
	eng, err := policy.NewEngine(policy.Options{Packs: packs}, srcs...)
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// openStore opens a recorded database read-only as a Source.
func openStore(t testing.TB, path string) Source {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return NewStoreSource(db.Audit(), "store")
}

// allRecords reads every record of a database.
func allRecords(t testing.TB, src Source) []store.AuditRecord {
	t.Helper()
	var out []store.AuditRecord
	for r, err := range src.Records(context.Background(), store.AuditFilter{}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, *r)
	}
	return out
}

// genOf returns the "gen" number a test put in an event's metadata.
func genOf(t testing.TB, r *store.AuditRecord) int {
	t.Helper()
	var ev protocol.Event
	if err := json.Unmarshal(r.Event, &ev); err != nil {
		t.Fatalf("record %d: %v", r.ID, err)
	}
	var m struct {
		Gen *int `json:"gen"`
	}
	if err := json.Unmarshal(ev.Metadata, &m); err != nil || m.Gen == nil {
		t.Fatalf("record %d: no gen in metadata %s", r.ID, ev.Metadata)
	}
	return *m.Gen
}

// mkEvent builds an event whose metadata carries gen.
func mkEvent(gen int, t protocol.EventType, session string, payload any) protocol.Event {
	p, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	return protocol.Event{
		EventType: t, SessionID: session, AgentID: "agent-" + session,
		Timestamp: epoch.Add(time.Duration(gen) * time.Second).Format(time.RFC3339),
		Payload:   p, Metadata: json.RawMessage(fmt.Sprintf(`{"gen":%d}`, gen)),
	}
}

func bash(cmd string) map[string]any {
	return map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": cmd}}
}

// run replays src and fails the test on error.
func run(t testing.TB, src Source, opts Options) *Report {
	t.Helper()
	rep, err := Run(context.Background(), src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
