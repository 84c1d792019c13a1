package harness

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

const memoryPolicy = `
rules:
  - id: no-force-push
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("push --force")'
    outcome: {decision: block, reason: "force-pushing to main rewrites shared history"}
guidance:
  - id: db-migration
    when: '"migration" in event.words || event.problem.contains("migration")'
    strategy: step_by_step
    subtasks: [back up, dry-run, apply, verify]
    hints: [never edit an applied migration]
`

func newMemoryHarness(t *testing.T, mo MemoryOptions) (*Harness, *sqlite.DB) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	eng, err := policy.NewEngine(policy.Options{}, policy.Source{Name: "p.yaml", Data: []byte(memoryPolicy)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Engine: eng, Store: db, Memory: mo})
	if err != nil {
		t.Fatal(err)
	}
	return h, db
}

func ev(typ protocol.EventType, session string, payload any) *protocol.Event {
	b, _ := json.Marshal(payload)
	return &protocol.Event{EventType: typ, SessionID: session, AgentID: "coder", Timestamp: "2026-11-23T00:00:00Z", Payload: b}
}

func recall(t *testing.T, h *Harness, session, wd, query, memType string) []protocol.Fact {
	t.Helper()
	p := protocol.MemoryRecallPayload{SessionID: session, Query: query, MemoryType: memType, MaxResults: 10, WorkingDirectory: wd}
	d, err := h.HandleMemoryRecall(context.Background(), ev(protocol.EventMemoryRecall, session, p), &p)
	if err != nil || d.Decision != "allow" {
		t.Fatalf("recall: %+v, %v", d, err)
	}
	return d.InjectedFacts
}

// Issue 18, point 3: a block in session A is recalled in session B of the
// same workspace when B asks about it, and not in another workspace; what
// the agent itself wrote in A is not recalled in B by default.
func TestMemoryBlockRecalledAcrossSessionsOfOneProject(t *testing.T) {
	h, db := newMemoryHarness(t, MemoryOptions{})
	ctx := context.Background()
	ip := protocol.IntentDetectionPayload{SessionID: "A", Prompt: "push the fix to main", Workspace: "/repo/app/"}
	if _, err := h.HandleIntentDetection(ctx, ev(protocol.EventIntentDetection, "A", ip), &ip); err != nil {
		t.Fatal(err)
	}
	d, err := h.HandleEvent(ctx, ev(protocol.EventPreAction, "A", action("git push --force origin main")))
	if err != nil || d.Kind != protocol.DecisionBlock {
		t.Fatalf("pre_action: %+v, %v", d, err)
	}
	h.HandleNotification(ctx, ev(protocol.EventSuccess, "A", protocol.SuccessPayload{SessionID: "A", ActionType: "tool_call",
		ActionSummary: "pushed to a branch instead; token ghp_abcdefghijklmnopqrstuvwxyz0123456789 used", DurationMs: 5}))
	h.Flush()

	got := recall(t, h, "B", "/repo/app", "can I force push to main?", "all")
	if len(got) != 1 || !strings.Contains(got[0].Content, "force-pushing to main rewrites shared history") ||
		!strings.HasPrefix(got[0].Source, "policy (block, session A, policy rule no-force-push)") {
		t.Fatalf("session B of the same project recalled %+v; want the block of session A", got)
	}
	if got := recall(t, h, "C", "/other/project", "can I force push to main?", "all"); len(got) != 0 {
		t.Fatalf("another project recalled %+v", got)
	}
	// Session A itself recalls its own agent-written memories too.
	own := recall(t, h, "A", "/repo/app", "pushed branch", "episodic")
	if len(own) == 0 || !strings.HasPrefix(own[0].Source, "agent (success, this session") {
		t.Fatalf("own session recall: %+v", own)
	}
	// Secrets were redacted before storing.
	all, err := db.Memory().Search(ctx, store.FactQuery{AnySession: true})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, f := range all {
		kinds[f.Kind] = true
		if strings.Contains(f.Content, "ghp_abcdefghijklmnopqrstuvwxyz0123456789") {
			t.Errorf("a secret was kept: %q", f.Content)
		}
		if f.Workspace != "/repo/app" {
			t.Errorf("memory %q kept for workspace %q", f.Content, f.Workspace)
		}
	}
	if !kinds[store.KindPrompt] || !kinds[store.KindBlock] || !kinds[store.KindSuccess] {
		t.Errorf("kinds kept: %v", kinds)
	}
	// memory_type selects kinds.
	if got := recall(t, h, "B", "/repo/app", "force push main", "semantic"); len(got) != 0 {
		t.Errorf("semantic recall returned kept events: %+v", got)
	}
}

// With the switch on, agent-written memories cross sessions; with capture
// off, nothing is kept.
func TestMemorySwitches(t *testing.T) {
	ctx := context.Background()
	h, _ := newMemoryHarness(t, MemoryOptions{CrossSessionAgentFacts: true})
	ip := protocol.IntentDetectionPayload{SessionID: "A", Prompt: "where is the billing webhook handler?", Workspace: "/repo"}
	if _, err := h.HandleIntentDetection(ctx, ev(protocol.EventIntentDetection, "A", ip), &ip); err != nil {
		t.Fatal(err)
	}
	h.Flush()
	if got := recall(t, h, "B", "/repo", "billing webhook", ""); len(got) != 1 || !strings.HasPrefix(got[0].Source, "agent (prompt, session A") {
		t.Fatalf("cross-session agent facts on: %+v", got)
	}
	h2, db2 := newMemoryHarness(t, MemoryOptions{DisableCapture: true})
	if _, err := h2.HandleIntentDetection(ctx, ev(protocol.EventIntentDetection, "A", ip), &ip); err != nil {
		t.Fatal(err)
	}
	h2.Flush()
	if fs, _ := db2.Memory().Search(ctx, store.FactQuery{AnySession: true}); len(fs) != 0 {
		t.Fatalf("capture off kept %+v", fs)
	}
}

// Issue 18, point 4: guidance answers planning with a strategy and
// subtasks and reasoning with hints.
func TestGuidanceAnswersPlanningAndReasoning(t *testing.T) {
	h, _ := newMemoryHarness(t, MemoryOptions{})
	ctx := context.Background()
	pp := protocol.PlanningPayload{SessionID: "s", TaskDescription: "Write the database migration for invoices",
		AvailableStrategies: []protocol.PlanningStrategy{protocol.StrategyTreeOfThoughts, protocol.StrategyStepByStep}}
	d, err := h.HandlePlanning(ctx, ev(protocol.EventPlanning, "s", pp), &pp)
	if err != nil || d.Decision != "allow" || d.SelectedStrategy != protocol.StrategyStepByStep ||
		string(d.PlanningTemplate) != `{"guidance":["db-migration"],"subtasks":["back up","dry-run","apply","verify"],"hints":["never edit an applied migration"]}` {
		t.Fatalf("planning: %+v %s, %v", d, d.PlanningTemplate, err)
	}
	other := protocol.PlanningPayload{SessionID: "s", TaskDescription: "fix a typo", AvailableStrategies: pp.AvailableStrategies}
	if d, _ := h.HandlePlanning(ctx, ev(protocol.EventPlanning, "s", other), &other); d.SelectedStrategy != protocol.StrategyTreeOfThoughts || d.PlanningTemplate != nil {
		t.Errorf("unguided planning: %+v", d)
	}
	rp := protocol.ReasoningPayload{SessionID: "s", ReasoningType: protocol.ReasoningType{Name: "chain_of_thought"},
		ProblemStatement: "migration 0007 fails on a fresh database"}
	r, err := h.HandleReasoning(ctx, ev(protocol.EventReasoning, "s", rp), &rp)
	if err != nil || r.Decision != "allow" || len(r.Hints) != 1 || r.Hints[0] != "never edit an applied migration" {
		t.Fatalf("reasoning: %+v, %v", r, err)
	}
}
