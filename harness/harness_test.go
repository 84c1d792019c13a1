package harness

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
	"github.com/ahp-go/ahp/transport"
)

const approvalPolicy = `
rules:
  - id: approve-deploy
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("deploy")'
    outcome:
      decision: escalate
      reason: "deploys need an approval"
      await_approval: {timeout: 2s, fallback: block, approver_role: approver}
  - id: approve-quick
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("quick-fallback-allow")'
    outcome:
      decision: escalate
      reason: "fast timeout"
      await_approval: {timeout: 100ms, fallback: allow}
  - id: hold-user-confirm
    priority: 100
    target: {event_types: [confirmation]}
    condition: 'payload.message.contains("hold for an approver")'
    outcome:
      decision: escalate
      reason: "held by rule"
      await_approval: {timeout: 2s, fallback: block, approver_role: approver}
`

type fixture struct {
	h      *Harness
	db     *sqlite.DB
	client *client.Client
	dir    string
}

// newFixture runs a harness with the default packs plus approvalPolicy on
// a SQLite store, and connects a client to it as principal "agent-1".
func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := policy.NewEngine(policy.Options{}, policy.Source{Name: "test.yaml", Data: []byte(approvalPolicy)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Engine: eng, Store: db, ApprovalTimeout: 2 * time.Second, DeferIdleWhilePending: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	a, b := transport.Pipe()
	srv := server.New(h, server.Options{})
	done := make(chan struct{})
	agent := transport.Info{Transport: "memory", Principal: &transport.Principal{ID: "agent-1", Roles: []string{"agent"}}}
	go func() { _ = srv.ServeConn(context.Background(), withInfo{b, agent}); close(done) }()
	c := client.New(a, client.Options{SessionID: "sess-1", AgentID: "coder", Timeout: 10 * time.Second, FailMode: client.FailError})
	if _, err := c.Handshake(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		<-done
		_ = db.Close()
	})
	return &fixture{h: h, db: db, client: c, dir: dir}
}

// withInfo overrides a Conn's Info (to simulate an authenticated peer).
type withInfo struct {
	transport.Conn
	info transport.Info
}

func (w withInfo) Info() transport.Info { return w.info }

func action(cmd string) map[string]any {
	return map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": cmd}}
}

func (f *fixture) audit(t *testing.T, filter store.AuditFilter) []store.AuditRecord {
	t.Helper()
	recs, err := f.db.Audit().Query(context.Background(), filter)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestBlocksAndRecords(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	d, err := f.client.Event(ctx, protocol.EventPreAction, action("rm -rf /"))
	if err != nil || d.Kind != protocol.DecisionBlock {
		t.Fatalf("rm -rf /: %+v %v", d, err)
	}
	d, err = f.client.Event(ctx, protocol.EventPrePrompt, map[string]any{"prompt": "key: -----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----"})
	if err != nil || d.Kind == protocol.DecisionAllow {
		t.Fatalf("private key in prompt: %+v %v", d, err)
	}
	d, err = f.client.Event(ctx, protocol.EventPreAction, action("ls -la"))
	if err != nil || d.Kind != protocol.DecisionAllow {
		t.Fatalf("ls: %+v %v", d, err)
	}
	if err := f.client.Notify(ctx, protocol.EventPostAction, map[string]any{"tool_name": "bash"}); err != nil {
		t.Fatal(err)
	}
	_ = f.client.Ping(ctx)
	blocks := f.audit(t, store.AuditFilter{SessionID: "sess-1", Outcome: "block"})
	if len(blocks) != 2 {
		t.Fatalf("%d block records, want 2", len(blocks))
	}
	r := blocks[0]
	if r.RuleID == "" || r.PolicyVersion == "" || r.Principal != "agent-1" || r.Transport != "memory" || !r.Blocking || !strings.Contains(string(r.Event), "rm -rf /") {
		t.Fatalf("audit record incomplete: %+v", r)
	}
	// The notification is recorded too (asynchronously).
	deadline := time.Now().Add(5 * time.Second)
	for len(f.audit(t, store.AuditFilter{SessionID: "sess-1", EventType: "post_action"})) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("notification not recorded")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitPending waits until n requests wait for a human and returns the ids.
func waitPending(t *testing.T, f *fixture, n int) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		list, err := f.db.Approvals().List(context.Background(), store.ApprovalFilter{Status: store.ApprovalPending})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) >= n && f.h.Pending() >= n {
			ids := make([]string, len(list))
			for i, a := range list {
				ids[i] = a.ID
			}
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d approvals pending, want %d", len(list), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestApprovalReleasesWaitingAgent(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	type result struct {
		d   protocol.Decision
		err error
	}
	got := make(chan result, 1)
	go func() {
		d, err := f.client.Event(ctx, protocol.EventPreAction, action("./deploy.sh prod"))
		got <- result{d, err}
	}()
	ids := waitPending(t, f, 1)

	// Idle defers while a human decides.
	idle, err := client.Typed[protocol.IdleDecision](ctx, f.client, protocol.EventIdle, protocol.IdlePayload{IdleDurationMs: 1000, IdleReason: "waiting"})
	if err != nil || idle.Decision != "defer" {
		t.Fatalf("idle while pending: %+v %v", idle, err)
	}
	// Agent credentials never answer; neither does a principal without the role.
	if _, err := f.h.Decide(ctx, ids[0], true, &transport.Principal{ID: "agent-1", Roles: []string{"agent"}}, ""); !errors.Is(err, ErrNotApprover) {
		t.Fatalf("agent approved: %v", err)
	}
	if _, err := f.h.Decide(ctx, ids[0], true, &transport.Principal{ID: "viewer", Roles: []string{"observer"}}, ""); !errors.Is(err, ErrNotApprover) {
		t.Fatalf("observer approved: %v", err)
	}
	if _, err := f.h.Decide(ctx, ids[0], true, &transport.Principal{ID: "alice", Roles: []string{"approver"}}, "ticket 7"); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || r.d.Kind != protocol.DecisionAllow {
		t.Fatalf("after approval: %+v %v", r.d, r.err)
	}
	var meta map[string]any
	_ = json.Unmarshal(r.d.Metadata, &meta)
	if meta["decided_by"] != "alice" || meta["rule_id"] != "approve-deploy" || meta["approval_id"] != ids[0] {
		t.Fatalf("metadata: %v", meta)
	}
	if _, err := f.h.Decide(ctx, ids[0], false, &transport.Principal{ID: "bob", Roles: []string{"approver"}}, ""); !errors.Is(err, store.ErrAlreadyDecided) {
		t.Fatalf("second decision: %v", err)
	}
	recs := f.audit(t, store.AuditFilter{SessionID: "sess-1", RuleID: "approve-deploy"})
	if len(recs) != 1 || recs[0].Outcome != "allow" || !strings.Contains(string(recs[0].Decision), "alice") {
		t.Fatalf("audit: %+v", recs)
	}
}

func TestApprovalDeniedAndTimeouts(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	var denied protocol.Decision
	wg.Add(1)
	go func() {
		defer wg.Done()
		denied, _ = f.client.Event(ctx, protocol.EventPreAction, action("deploy staging"))
	}()
	ids := waitPending(t, f, 1)
	if _, err := f.h.Decide(ctx, ids[0], false, &transport.Principal{ID: "alice", Roles: []string{"admin"}}, "not today"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if denied.Kind != protocol.DecisionBlock || !strings.Contains(denied.Reason, "not today") || !strings.Contains(denied.Reason, "alice") {
		t.Fatalf("denied: %+v", denied)
	}
	// No answer: the rule's fallback applies (allow here) after its timeout.
	start := time.Now()
	d, err := f.client.Event(ctx, protocol.EventPreAction, action("quick-fallback-allow"))
	if err != nil || d.Kind != protocol.DecisionAllow || time.Since(start) < 100*time.Millisecond {
		t.Fatalf("fallback allow: %+v %v after %v", d, err, time.Since(start))
	}
	var meta map[string]any
	_ = json.Unmarshal(d.Metadata, &meta)
	if meta["approval_status"] != "expired" || meta["fallback"] != "allow" {
		t.Fatalf("fallback metadata: %v", meta)
	}
}

func TestConfirmationThroughApprovalQueue(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	got := make(chan protocol.ConfirmationDecision, 1)
	go func() {
		d, _ := client.Typed[protocol.ConfirmationDecision](ctx, f.client, protocol.EventConfirmation,
			protocol.ConfirmationPayload{SessionID: "sess-1", ConfirmationType: protocol.ConfirmationType{Name: "cost_confirm"}, Message: "spend $40 on GPUs?"})
		got <- d
	}()
	ids := waitPending(t, f, 1)
	if _, err := f.h.Decide(ctx, ids[0], true, &transport.Principal{ID: "alice", Roles: []string{"approver"}}, ""); err != nil {
		t.Fatal(err)
	}
	if d := <-got; d.Decision != "approve" {
		t.Fatalf("confirmation: %+v", d)
	}
}

// TestUserConfirmEscalatesAtOnce: with no rule for it, a user_confirm is
// answered escalate (ask your own user) at once, without an approval, while
// a safety_confirm still waits in the approval queue, and a rule can still
// hold a user_confirm for an approver. Nothing is approved without a rule
// or a human. Before, the user_confirm waited for the approval timeout.
func TestUserConfirmEscalatesAtOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	confirm := func(typ, msg string) chan protocol.ConfirmationDecision {
		got := make(chan protocol.ConfirmationDecision, 1)
		go func() {
			d, err := client.Typed[protocol.ConfirmationDecision](ctx, f.client, protocol.EventConfirmation,
				protocol.ConfirmationPayload{SessionID: "sess-1", ConfirmationType: protocol.ConfirmationType{Name: typ}, Message: msg})
			if err != nil {
				d.Decision = "error: " + err.Error()
			}
			got <- d
		}()
		return got
	}

	start := time.Now()
	select {
	case d := <-confirm("user_confirm", "go on?"):
		if d.Decision != "escalate" {
			t.Fatalf("user_confirm: %+v, want escalate", d)
		}
	case <-time.After(time.Second):
		t.Fatal("user_confirm with no rule not answered within 1s (the approval timeout is 2s)")
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("user_confirm answered after %v", took)
	}
	if n := f.h.Pending(); n != 0 {
		t.Fatalf("%d approvals pending after a user_confirm, want 0", n)
	}

	// A rule holds this user_confirm for an approver, who denies it.
	held := confirm("user_confirm", "deploy now? hold for an approver")
	ids := waitPending(t, f, 1)
	if _, err := f.h.Decide(ctx, ids[0], false, &transport.Principal{ID: "alice", Roles: []string{"approver"}}, "not today"); err != nil {
		t.Fatal(err)
	}
	if d := <-held; d.Decision != "reject" {
		t.Fatalf("held user_confirm: %+v, want reject", d)
	}

	// A safety_confirm (what ahp hook sends) waits for an approver as before.
	safety := confirm("safety_confirm", "rm -rf build?")
	ids = waitPending(t, f, 1)
	select {
	case d := <-safety:
		t.Fatalf("safety_confirm answered before an approver: %+v", d)
	default:
	}
	if _, err := f.h.Decide(ctx, ids[0], true, &transport.Principal{ID: "alice", Roles: []string{"approver"}}, ""); err != nil {
		t.Fatal(err)
	}
	if d := <-safety; d.Decision != "approve" {
		t.Fatalf("safety_confirm: %+v, want approve", d)
	}
}

func TestMemoryRecallAndIntent(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, fact := range []store.Fact{
		{Content: "The staging database is postgres 15 on db-staging", Source: "ops", Confidence: 0.9},
		{Content: "Releases are cut on Thursdays", Source: "team", Confidence: 0.8},
	} {
		if err := f.db.Memory().Add(ctx, &fact); err != nil {
			t.Fatal(err)
		}
	}
	d, err := client.Typed[protocol.MemoryRecallDecision](ctx, f.client, protocol.EventMemoryRecall,
		protocol.MemoryRecallPayload{SessionID: "sess-1", Query: "staging database", MemoryType: "semantic", MaxResults: 5, WorkingDirectory: "/w"})
	if err != nil || d.Decision != "allow" || len(d.InjectedFacts) != 1 || !strings.Contains(d.InjectedFacts[0].Content, "postgres") {
		t.Fatalf("memory recall: %+v %v", d, err)
	}
	in, err := client.Typed[protocol.IntentDetectionDecision](ctx, f.client, protocol.EventIntentDetection,
		protocol.IntentDetectionPayload{SessionID: "sess-1", Prompt: "why did the deploy fail?", Workspace: "/w"})
	if err != nil || in.DetectedIntent != "reason" {
		t.Fatalf("intent: %+v %v", in, err)
	}
	rl, err := client.Typed[protocol.RateLimitDecision](ctx, f.client, protocol.EventRateLimit,
		protocol.RateLimitPayload{SessionID: "sess-1", LimitType: protocol.RateLimitType{Custom: "gpu"}, RetryAfterMs: 700, CurrentUsage: "100%"})
	if err != nil || rl.Decision != "retry" || rl.RetryAfterMs != 700 {
		t.Fatalf("rate limit: %+v %v", rl, err)
	}
	// Typed answers are recorded too.
	if recs := f.audit(t, store.AuditFilter{SessionID: "sess-1", EventType: "memory_recall"}); len(recs) != 1 || recs[0].Outcome != "allow" {
		t.Fatalf("memory audit: %+v", recs)
	}
}

// When the audit log cannot record, blocking events fail closed.
func TestFailsClosedWhenStoreFails(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := f.db.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := f.client.Event(ctx, protocol.EventPreAction, action("ls"))
	if err != nil || d.Kind != protocol.DecisionBlock || !strings.Contains(d.Reason, "audit") {
		t.Fatalf("closed store: %+v %v", d, err)
	}
	_, err = client.Typed[protocol.IntentDetectionDecision](ctx, f.client, protocol.EventIntentDetection,
		protocol.IntentDetectionPayload{SessionID: "s", Prompt: "where is x", Workspace: "/w"})
	if err == nil {
		t.Fatal("typed event answered without being recorded")
	}
}

// Approvals pending when the harness stopped expire at the next start.
func TestPendingApprovalsExpireOnStart(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := &store.Approval{SessionID: "old", AgentID: "x", RuleID: "r", Reason: "left over"}
	if err := f.db.Approvals().Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := f.h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := f.db.Approvals().Get(ctx, a.ID)
	if err != nil || got.Status != store.ApprovalExpired {
		t.Fatalf("left-over approval: %+v %v", got, err)
	}
}

// Session counters feed policies.
func TestSessionCounters(t *testing.T) {
	s := NewSessions(2)
	ev := func(typ protocol.EventType, session, payload string) *protocol.Event {
		return &protocol.Event{EventType: typ, SessionID: session, Payload: json.RawMessage(payload)}
	}
	for i := 0; i < 12; i++ {
		s.Observe(ev(protocol.EventPreAction, "a", `{"tool_name":"t`+string(rune('a'+i))+`"}`), protocol.DecisionAllow)
	}
	s.Observe(ev(protocol.EventPreAction, "a", `{"tool_name":"x"}`), protocol.DecisionBlock)
	s.Observe(ev(protocol.EventError, "a", `{}`), "")
	s.Observe(ev(protocol.EventRunLifecycle, "a", `{"status":"verifying"}`), "")
	s.Observe(ev(protocol.EventHeartbeat, "a", `{"tokens_used":1234}`), "")
	st := s.State("a")
	if st.Actions != 12 || st.Errors != 1 || st.RunStatus != "verifying" || st.Tokens != 1234 || len(st.RecentTools) != recentTools || st.RecentTools[recentTools-1] != "x" {
		t.Fatalf("state: %+v", st)
	}
	s.Observe(ev(protocol.EventPreAction, "b", `{}`), protocol.DecisionAllow)
	s.Observe(ev(protocol.EventPreAction, "c", `{}`), protocol.DecisionAllow)
	if st := s.State("a"); st.Actions != 0 {
		t.Fatalf("least recent session not evicted: %+v", st)
	}
}
