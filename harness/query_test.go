package harness

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/descriptor"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
	"github.com/ahp-go/ahp/transport"
)

const queryPolicy = approvalPolicy + `
  - id: hidden-rule
    description: Something we do not explain.
    private: true
    priority: 50
    target: {event_types: [pre_action], tools: [bash]}
    condition: 'event.command.contains("magic-word-xyz")'
    outcome: {decision: block, reason: "not allowed here"}
  - id: shown-rule
    description: No curl to the example host.
    priority: 50
    target: {event_types: [pre_action], tools: [bash]}
    condition: 'event.command.contains("curl example.invalid")'
    outcome: {decision: block, reason: "no curl to example.invalid"}
  - id: redact-paths
    priority: 40
    target: {event_types: [pre_action], tools: [write_file]}
    outcome: {decision: modify, modified_payload: '{"tool_name": "write_file", "arguments": {"path": "/tmp/safe", "content": payload.arguments.content}}'}
`

// queryFixture is a harness on a SQLite store; clients connect to it as
// any principal.
type queryFixture struct {
	h   *Harness
	db  *sqlite.DB
	eng *policy.Engine
	srv *server.Server
}

func newQueryFixture(t *testing.T, popts policy.Options, hopts Options) *queryFixture {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := policy.NewEngine(popts, policy.Source{Name: "test.yaml", Data: []byte(queryPolicy)})
	if err != nil {
		t.Fatal(err)
	}
	hopts.Engine, hopts.Store = eng, db
	if hopts.ApprovalTimeout == 0 {
		hopts.ApprovalTimeout = 5 * time.Second
	}
	h, err := New(hopts)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return &queryFixture{h: h, db: db, eng: eng, srv: server.New(h, server.Options{})}
}

// connect returns a client of session speaking as principal (nil: none).
func (f *queryFixture) connect(t *testing.T, principal *transport.Principal, session string) *client.Client {
	t.Helper()
	a, b := transport.Pipe()
	done := make(chan struct{})
	go func() {
		_ = f.srv.ServeConn(context.Background(), withInfo{b, transport.Info{Transport: "memory", Principal: principal}})
		close(done)
	}()
	c := client.New(a, client.Options{SessionID: session, AgentID: "coder", Timeout: 10 * time.Second, FailMode: client.FailError})
	if _, err := c.Handshake(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(); <-done })
	return c
}

var (
	agent1   = &transport.Principal{ID: "agent-1", Roles: []string{"agent"}}
	agent2   = &transport.Principal{ID: "agent-2", Roles: []string{"agent"}}
	observer = &transport.Principal{ID: "watcher", Roles: []string{"agent", "observer"}}
	approver = &transport.Principal{ID: "alice", Roles: []string{"approver"}}
)

// decisionRecords counts the audit records that are decisions.
func (f *queryFixture) decisionRecords(t *testing.T) int {
	t.Helper()
	recs, err := f.db.Audit().Query(context.Background(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if len(r.Decision) > 0 || r.Outcome != "" {
			n++
		}
	}
	return n
}

func (f *queryFixture) approvals(t *testing.T) int {
	t.Helper()
	l, err := f.db.Approvals().List(context.Background(), store.ApprovalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(l)
}

func wireJSON(t *testing.T, d protocol.Decision) string {
	t.Helper()
	b, err := d.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCheckIsTheRealDecisionWithoutSideEffects: a check answers exactly
// what the event gets when sent right after, and records no decision,
// moves no counter and creates no approval.
func TestCheckIsTheRealDecisionWithoutSideEffects(t *testing.T) {
	f := newQueryFixture(t, policy.Options{}, Options{})
	c := f.connect(t, agent1, "sess-1")
	ctx := context.Background()
	cases := []struct {
		name    string
		payload map[string]any
		want    protocol.DecisionKind
	}{
		{"destructive", action("rm -rf /"), protocol.DecisionBlock},
		{"harmless", action("ls -la"), protocol.DecisionAllow},
		{"private rule", action("echo magic-word-xyz"), protocol.DecisionBlock},
		{"modify", map[string]any{"tool_name": "write_file", "arguments": map[string]any{"path": "/srv/app/x", "content": "hi"}}, protocol.DecisionModify},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			decisions, approvals := f.decisionRecords(t), f.approvals(t)
			counters := f.h.sessions.State("sess-1")
			got, err := c.Check(ctx, protocol.EventPreAction, tc.payload)
			if err != nil {
				t.Fatal(err)
			}
			if got.Decision.Kind != tc.want {
				t.Fatalf("check: %+v", got)
			}
			if n := f.decisionRecords(t); n != decisions {
				t.Fatalf("check recorded %d decision(s)", n-decisions)
			}
			if n := f.approvals(t); n != approvals {
				t.Fatal("check created an approval")
			}
			if after := f.h.sessions.State("sess-1"); after.Actions != counters.Actions || len(after.RecentTools) != len(counters.RecentTools) {
				t.Fatalf("check moved counters: %+v -> %+v", counters, after)
			}
			real, err := c.Event(ctx, protocol.EventPreAction, tc.payload)
			if err != nil {
				t.Fatal(err)
			}
			if wireJSON(t, real) != wireJSON(t, got.Decision) {
				t.Fatalf("check said %s, the event got %s", wireJSON(t, got.Decision), wireJSON(t, real))
			}
			if f.decisionRecords(t) != decisions+1 {
				t.Fatal("the real event was not recorded as a decision")
			}
		})
	}
	// The query records: event_type query, no outcome, no decision.
	recs, err := f.db.Audit().Query(ctx, store.AuditFilter{EventType: "query"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(cases) {
		t.Fatalf("%d query records, want %d", len(recs), len(cases))
	}
	for _, r := range recs {
		if r.Outcome != "" || r.Decision != nil || r.Principal != "agent-1" || !strings.Contains(string(r.Event), `"query_type":"check"`) {
			t.Fatalf("query record: %+v", r)
		}
	}
}

// TestCheckEscalationNeverWaits: an escalation is reported with the
// approval it would need, at once, and no approval is created.
func TestCheckEscalationNeverWaits(t *testing.T) {
	f := newQueryFixture(t, policy.Options{}, Options{})
	c := f.connect(t, agent1, "sess-1")
	start := time.Now()
	got, err := c.Check(context.Background(), protocol.EventPreAction, action("./deploy.sh prod"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Decision.Kind != protocol.DecisionEscalate || got.RuleID != "approve-deploy" || got.Approval == nil ||
		got.Approval.ApproverRole != "approver" || got.Approval.TimeoutMs != 2000 || got.Approval.Fallback != protocol.DecisionBlock {
		t.Fatalf("check: %+v (approval %+v)", got, got.Approval)
	}
	if time.Since(start) > time.Second || f.approvals(t) != 0 || f.h.Pending() != 0 {
		t.Fatal("check waited for or created an approval")
	}
}

// TestCheckDoesNotCountDescriptorTurns: checking a pre_prompt does not use
// up a turn of the descriptor's max_turns.
func TestCheckDoesNotCountDescriptorTurns(t *testing.T) {
	sup := testSupervisor(t, 1)
	f := newQueryFixture(t, policy.Options{}, Options{Supervisor: sup})
	c := f.connect(t, agent1, "sess-1")
	ctx := context.Background()
	for range 3 {
		got, err := c.Check(ctx, protocol.EventPrePrompt, map[string]any{"prompt": "hi"})
		if err != nil || got.Decision.Kind != protocol.DecisionAllow {
			t.Fatalf("check of turn 1: %+v %v", got, err)
		}
	}
	if d, err := c.Event(ctx, protocol.EventPrePrompt, map[string]any{"prompt": "hi"}); err != nil || d.Kind != protocol.DecisionAllow {
		t.Fatalf("turn 1 after checks: %+v %v", d, err)
	}
	got, err := c.Check(ctx, protocol.EventPrePrompt, map[string]any{"prompt": "hi"})
	if err != nil || got.Decision.Kind != protocol.DecisionBlock || got.RuleID != "descriptor" {
		t.Fatalf("check of turn 2: %+v %v", got, err)
	}
	if d, _ := c.Event(ctx, protocol.EventPrePrompt, map[string]any{"prompt": "hi"}); wireJSON(t, d) != wireJSON(t, got.Decision) {
		t.Fatalf("turn 2: check said %s, event got %s", wireJSON(t, got.Decision), wireJSON(t, d))
	}
}

// TestCheckRedactsWhatItStoresAndEchoes: a secret in a checked payload is
// stored redacted in the query record.
func TestCheckRedactsWhatItStoresAndEchoes(t *testing.T) {
	f := newQueryFixture(t, policy.Options{}, Options{})
	c := f.connect(t, agent1, "sess-1")
	secret := "ghp_" + strings.Repeat("Ab3x", 9)
	payload := map[string]any{"tool_name": "write_file", "arguments": map[string]any{"path": "/etc/x", "content": "token " + secret}}
	got, err := c.Check(context.Background(), protocol.EventPreAction, payload)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got.Decision.ModifiedPayload), secret) {
		t.Fatalf("answer echoes the secret: %s", got.Decision.ModifiedPayload)
	}
	recs, _ := f.db.Audit().Query(context.Background(), store.AuditFilter{EventType: "query"})
	if len(recs) != 1 || strings.Contains(string(recs[0].Event), secret) || !strings.Contains(string(recs[0].Event), "[REDACTED:") || len(recs[0].Redacted) == 0 {
		t.Fatalf("query record: %+v", recs)
	}
}

func TestBudgetShowsCountersAndWhatIsLeft(t *testing.T) {
	popts := policy.Options{Packs: map[string]bool{"budgets": true}, Params: map[string]any{"max_actions": 3}}
	f := newQueryFixture(t, popts, Options{QueryRate: 5, QueryBurst: 7})
	c := f.connect(t, agent1, "sess-1")
	ctx := context.Background()
	for _, cmd := range []string{"ls", "pwd"} {
		if _, err := c.Event(ctx, protocol.EventPreAction, action(cmd)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := c.Budget(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.Counters.Actions != 2 || strings.Join(b.Counters.RecentTools, ",") != "bash,bash" {
		t.Fatalf("counters: %+v", b.Counters)
	}
	l, ok := b.Limits["actions"]
	if !ok || l.Limit != 3 || l.Used != 2 || l.Remaining != 1 || l.RuleID != "budgets.actions" || l.Then != protocol.DecisionBlock {
		t.Fatalf("limits: %+v", b.Limits)
	}
	if _, ok := b.Limits["tokens"]; ok {
		t.Fatal("a limit of 0 (none) is reported")
	}
	if b.QueryRate.PerSecond != 5 || b.QueryRate.Burst != 7 || b.QueryRate.Available != 6 {
		t.Fatalf("query rate: %+v", b.QueryRate)
	}
}

func TestApprovalStatusCanBePolled(t *testing.T) {
	f := newQueryFixture(t, policy.Options{}, Options{})
	c := f.connect(t, agent1, "sess-1")
	ctx := context.Background()
	decided := make(chan protocol.Decision, 1)
	go func() {
		d, _ := c.Event(ctx, protocol.EventPreAction, action("./deploy.sh prod"))
		decided <- d
	}()
	var id string
	for deadline := time.Now().Add(5 * time.Second); id == "" && time.Now().Before(deadline); {
		p, err := c.PendingApprovals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Pending) > 0 {
			id = p.Pending[0].ApprovalID
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if id == "" {
		t.Fatal("no pending approval listed")
	}
	a, err := c.Approval(ctx, id)
	if err != nil || a.Status != "pending" || !a.Waiting || a.RuleID != "approve-deploy" {
		t.Fatalf("pending: %+v %v", a, err)
	}
	// Another agent cannot see it: the same answer as for no approval.
	other := f.connect(t, agent2, "sess-2")
	_, err = other.Approval(ctx, id)
	var na *client.NoAnswerError
	if !errors.As(err, &na) || !strings.Contains(na.Reason, "no approval") {
		t.Fatalf("other principal: %v", err)
	}
	if _, err := f.h.Decide(ctx, id, true, approver, "looks fine"); err != nil {
		t.Fatal(err)
	}
	<-decided
	a, err = c.Approval(ctx, id)
	if err != nil || a.Status != "approved" || a.DecidedBy != "alice" || a.DecisionReason != "looks fine" || a.Waiting || a.DecidedAt == nil {
		t.Fatalf("approved: %+v %v", a, err)
	}
	if _, err := c.Approval(ctx, "no-such-id"); !errors.As(err, &na) {
		t.Fatalf("unknown id: %v", err)
	}
}

func TestRulesHidePrivateConditionsOnTheWire(t *testing.T) {
	f := newQueryFixture(t, policy.Options{}, Options{})
	c := f.connect(t, agent1, "sess-1")
	qr, err := c.Query(context.Background(), protocol.QueryRules, protocol.RulesQuery{EventType: protocol.EventPreAction, ToolName: "bash"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(qr.Answer), "magic-word-xyz") {
		t.Fatalf("a private condition reached the agent: %s", qr.Answer)
	}
	var a protocol.RulesAnswer
	if err := json.Unmarshal(qr.Answer, &a); err != nil {
		t.Fatal(err)
	}
	byID := map[string]protocol.RuleInfo{}
	for _, r := range a.Rules {
		byID[r.ID] = r
	}
	hidden, shown := byID["hidden-rule"], byID["shown-rule"]
	if !hidden.Private || hidden.Condition != "" || hidden.Outcome.Reason != "not allowed here" || hidden.Description == "" {
		t.Fatalf("hidden rule: %+v", hidden)
	}
	if !strings.Contains(shown.Condition, "curl example.invalid") {
		t.Fatalf("shown rule: %+v", shown)
	}
	if _, ok := byID["redact-paths"]; ok {
		t.Fatal("a write_file rule listed for bash")
	}
	if _, ok := byID["destructive_shell.rm_root_or_home"]; !ok || a.Default != protocol.DecisionAllow || a.Total != len(a.Rules) {
		t.Fatalf("answer: %d rules, default %s", len(a.Rules), a.Default)
	}
}

func TestPolicyAnswer(t *testing.T) {
	f := newQueryFixture(t, policy.Options{}, Options{})
	c := f.connect(t, agent1, "sess-1")
	ctx := context.Background()
	p, err := c.Policy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != f.eng.Version() || p.Reloads != 0 || p.LoadedAt.IsZero() || len(p.Packs) == 0 || p.Rules == 0 {
		t.Fatalf("policy: %+v", p)
	}
	if err := f.eng.Load(policy.Source{Name: "test.yaml", Data: []byte(queryPolicy)}); err != nil {
		t.Fatal(err)
	}
	if p2, err := c.Policy(ctx); err != nil || p2.Reloads != 1 || p2.LoadedAt.Before(p.LoadedAt) {
		t.Fatalf("after reload: %+v %v", p2, err)
	}
}

func TestFreeTextQuestionIsABestEffortCheck(t *testing.T) {
	f := newQueryFixture(t, policy.Options{}, Options{})
	c := f.connect(t, agent1, "sess-1")
	ctx := context.Background()
	for _, q := range []string{"is rm -rf / safe?", "Can I run `rm -rf ~` here?"} {
		qr, err := c.Query(ctx, "question", map[string]string{"question": q})
		if err != nil {
			t.Fatal(err)
		}
		var a protocol.CheckAnswer
		if err := json.Unmarshal(qr.Answer, &a); err != nil {
			t.Fatalf("%q: %s", q, qr.Answer)
		}
		if a.Decision.Kind != protocol.DecisionBlock || a.InterpretedAs == nil || !strings.HasPrefix(qr.Reason, "best effort") {
			t.Fatalf("%q: %+v %q", q, a, qr.Reason)
		}
	}
	qr, err := c.Query(ctx, "question", map[string]string{"question": "what is the weather like?"})
	if err != nil || string(qr.Answer) != "null" || len(qr.Alternatives) == 0 {
		t.Fatalf("no command: %+v %v", qr, err)
	}
	qr, err = c.Query(ctx, "weather", map[string]string{"city": "Paris"})
	if err != nil || string(qr.Answer) != "null" || !strings.Contains(qr.Reason, "no answer for query type") {
		t.Fatalf("unknown type: %+v %v", qr, err)
	}
}

func TestQueriesOnlyAboutOwnSessionUnlessObserver(t *testing.T) {
	f := newQueryFixture(t, policy.Options{}, Options{})
	ctx := context.Background()
	owner := f.connect(t, agent1, "sess-1")
	if _, err := owner.Budget(ctx); err != nil {
		t.Fatal(err)
	}
	intruder := f.connect(t, agent2, "sess-1")
	for _, q := range []func() error{
		func() error { _, err := intruder.Budget(ctx); return err },
		func() error { _, err := intruder.Check(ctx, protocol.EventPreAction, action("ls")); return err },
	} {
		var na *client.NoAnswerError
		if err := q(); !errors.As(err, &na) || !strings.Contains(na.Reason, "another principal") {
			t.Fatalf("intruder: %v", err)
		}
	}
	recs, _ := f.db.Audit().Query(ctx, store.AuditFilter{Outcome: "rejected", EventType: "query"})
	if len(recs) != 2 || recs[0].Principal != "agent-2" {
		t.Fatalf("refused queries recorded: %+v", recs)
	}
	watcher := f.connect(t, observer, "sess-1")
	if _, err := watcher.Budget(ctx); err != nil {
		t.Fatalf("observer: %v", err)
	}
	// Asking about a session does not claim it.
	early := f.connect(t, agent2, "sess-new")
	_ = early // its handshake opened sess-new for agent-2
	if _, err := f.connect(t, agent1, "sess-new").Budget(ctx); err == nil {
		t.Fatal("agent-1 may ask about agent-2's session")
	}
}

func TestQueriesAreRateLimitedPerSession(t *testing.T) {
	f := newQueryFixture(t, policy.Options{}, Options{QueryRate: 0.5, QueryBurst: 2})
	c := f.connect(t, agent1, "sess-1")
	ctx := context.Background()
	for i := range 2 {
		if _, err := c.Policy(ctx); err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
	}
	_, err := c.Policy(ctx)
	var na *client.NoAnswerError
	if !errors.As(err, &na) || !strings.Contains(na.Reason, "rate limit") || !strings.Contains(na.Reason, "retry after") {
		t.Fatalf("third query: %v", err)
	}
	if _, err := f.connect(t, agent1, "sess-2").Policy(ctx); err != nil {
		t.Fatalf("another session is limited separately: %v", err)
	}
}

// A principal that spreads its queries over new session ids still gets
// at most principalQueryFactor sessions' worth of them.
func TestQueriesAreRateLimitedPerPrincipal(t *testing.T) {
	// A clock that stands still: no token comes back while the sessions
	// are opened, however slowly a loaded machine opens them.
	still := time.Now()
	f := newQueryFixture(t, policy.Options{}, Options{QueryRate: 0.5, QueryBurst: 2, Now: func() time.Time { return still }})
	ctx := context.Background()
	answered := 0
	var last error
	for i := range 2*principalQueryFactor + 3 {
		c := f.connect(t, agent1, "rotating-"+strconv.Itoa(i))
		if _, last = c.Policy(ctx); last == nil {
			answered++
		}
	}
	var na *client.NoAnswerError
	if answered != 2*principalQueryFactor || !errors.As(last, &na) || !strings.Contains(na.Reason, "rate limit of principal") {
		t.Fatalf("%d queries answered over new sessions (want %d); last: %v", answered, 2*principalQueryFactor, last)
	}
}

func TestQueryBounds(t *testing.T) {
	f := newQueryFixture(t, policy.Options{}, Options{})
	c := f.connect(t, agent1, "sess-1")
	big := map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": strings.Repeat("x", maxQueryPayloadBytes)}}
	_, err := c.Check(context.Background(), protocol.EventPreAction, big)
	var na *client.NoAnswerError
	if !errors.As(err, &na) || !strings.Contains(na.Reason, "too large") {
		t.Fatalf("big payload: %v", err)
	}
	if _, err := c.Query(context.Background(), strings.Repeat("q", 100), nil); err != nil {
		t.Fatal(err)
	}
	_, err = c.Check(context.Background(), protocol.EventIdle, map[string]any{})
	if !errors.As(err, &na) || !strings.Contains(na.Reason, "pre_action and pre_prompt") {
		t.Fatalf("idle check: %v", err)
	}
}

// testSupervisor enforces a descriptor declaring agent "coder" with
// max_turns turns per run.
func testSupervisor(t *testing.T, maxTurns int) *DescriptorSupervisor {
	t.Helper()
	src := "metadata: {name: q, version: v1}\nruntime: {entry_agent: coder, max_turns: " + strconv.Itoa(maxTurns) + "}\nagents:\n  coder:\n    instructions: Code.\n"
	d, err := descriptor.Parse([]byte(src), descriptor.FormatYAML, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return NewDescriptorSupervisor(d)
}
