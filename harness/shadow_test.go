package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

const shadowLive = `
rules:
  - id: no-rm
    mode: shadow
    target: {tools: [bash]}
    condition: event.command.contains('rm ')
    outcome: {decision: block, reason: no rm}
  - id: ask-push
    mode: shadow
    priority: 5
    target: {tools: [bash]}
    condition: event.command.startsWith('git push')
    outcome: {decision: escalate, reason: pushes need a human, await_approval: {timeout: 1h}}
  - id: allow-ls
    target: {tools: [bash]}
    condition: event.command == 'ls'
    outcome: {decision: allow}
  - id: no-fetch
    target: {tools: [web_fetch]}
    condition: payload.arguments.url.startsWith('http:')
    outcome: {decision: block, reason: plain http}
`

const shadowCandidate = `
rules:
  - id: allow-ls
    target: {tools: [bash]}
    condition: event.command == 'ls'
    outcome: {decision: allow}
  - id: cand-no-curl
    target: {tools: [bash]}
    condition: event.command.startsWith('curl')
    outcome: {decision: block, reason: no curl}
  - id: cand-broken
    target: {tools: [web_fetch]}
    condition: payload.arguments.nope == 1
    outcome: {decision: allow}
`

// liveWithout is shadowLive without its shadow rules: what must decide.
const liveWithout = `
rules:
  - id: allow-ls
    target: {tools: [bash]}
    condition: event.command == 'ls'
    outcome: {decision: allow}
  - id: no-fetch
    target: {tools: [web_fetch]}
    condition: payload.arguments.url.startsWith('http:')
    outcome: {decision: block, reason: plain http}
`

func shadowEvents(n int) []*protocol.Event {
	rng := rand.New(rand.NewPCG(1, 4))
	cmds := []string{"ls", "rm -rf build", "git push origin", "curl example.com", "make", "git status"}
	urls := []string{"http://a", "https://b"}
	out := make([]*protocol.Event, n)
	for i := range out {
		var args map[string]any
		tool := []string{"bash", "bash", "bash", "web_fetch", "read_file"}[rng.IntN(5)]
		switch tool {
		case "bash":
			args = map[string]any{"command": cmds[rng.IntN(len(cmds))]}
		case "web_fetch":
			args = map[string]any{"url": urls[rng.IntN(len(urls))]}
		default:
			args = map[string]any{"path": "README.md"}
		}
		p, _ := json.Marshal(map[string]any{"tool_name": tool, "arguments": args})
		out[i] = &protocol.Event{EventType: protocol.EventPreAction, SessionID: fmt.Sprintf("s%d", rng.IntN(4)),
			AgentID: "a", Timestamp: "2026-11-21T10:00:00Z", Payload: p}
	}
	return out
}

func compileSet(t *testing.T, text string) *policy.Set {
	t.Helper()
	s, err := policy.Compile(policy.Options{}, policy.Source{Name: "p.yaml", Data: []byte(text)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Shadow rules and a shadow policy on live traffic: the answers are those
// of the policy without them, each event has exactly one record holding
// its shadow verdicts, the disagreements are exactly those of the two
// policies, and the report's counts are those of the audit log.
func TestShadowOnLiveTraffic(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	live, err := policy.NewEngine(policy.Options{}, policy.Source{Name: "live.yaml", Data: []byte(shadowLive)})
	if err != nil {
		t.Fatal(err)
	}
	cand, err := policy.NewEngine(policy.Options{}, policy.Source{Name: "cand.yaml", Data: []byte(shadowCandidate)})
	if err != nil {
		t.Fatal(err)
	}
	met, err := NewShadowMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Engine: live, Store: db, Shadow: &ShadowPolicy{Engine: cand, Metrics: met}})
	if err != nil {
		t.Fatal(err)
	}
	enforced, liveSet, candSet := compileSet(t, liveWithout), live.Set(), cand.Set()

	type want struct {
		events, change, block, escalate int64
		sessions                        map[string]bool
	}
	wants := map[string]*want{}
	bump := func(key string, m policy.ShadowMatch, sess string) {
		w := wants[key]
		if w == nil {
			w = &want{sessions: map[string]bool{}}
			wants[key] = w
		}
		w.events++
		if m.Changes {
			w.change++
			w.sessions[sess] = true
			switch m.Decision {
			case protocol.DecisionBlock:
				w.block++
			case protocol.DecisionEscalate:
				w.escalate++
			}
		}
	}
	events := shadowEvents(300)
	disagree, changed := 0, 0
	for i, ev := range events {
		d, err := h.HandleEvent(ctx, ev)
		if err != nil {
			t.Fatal(err)
		}
		in := policy.Input{Event: ev}
		exp, l, c := enforced.Evaluate(&in), liveSet.Evaluate(&in), candSet.Evaluate(&in)
		if d.Kind != exp.Decision.Kind || d.Reason != exp.Decision.Reason {
			t.Fatalf("event %d %s: answered %+v, the policy without shadow rules says %+v", i, ev.Payload, d, exp.Decision)
		}
		ch := false
		for _, m := range l.Shadow {
			bump("rule/"+m.RuleID, m, ev.SessionID)
			ch = ch || m.Changes
		}
		if c.Decision.Kind != l.Decision.Kind || c.RuleID != l.RuleID {
			disagree++
			m := policy.ShadowMatch{RuleID: c.RuleID, Decision: c.Decision.Kind, Changes: c.Decision.Kind != l.Decision.Kind}
			bump("policy/"+c.RuleID, m, ev.SessionID)
			ch = ch || m.Changes
		}
		if ch {
			changed++
		}
	}
	if disagree == 0 || changed == 0 || len(wants) < 4 {
		t.Fatalf("the traffic exercises too little: %d disagreements, %d changes, %d rules", disagree, changed, len(wants))
	}
	if n, _ := db.Approvals().List(ctx, store.ApprovalFilter{}); len(n) != 0 {
		t.Fatalf("a shadow escalation asked for approvals: %+v", n)
	}

	recs, err := db.Audit().Query(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(events) {
		t.Fatalf("%d records for %d events", len(recs), len(events))
	}
	gotDisagree, gotChanged := 0, 0
	for _, r := range recs {
		if r.Shadow == nil {
			continue
		}
		var v ShadowVerdicts
		if err := json.Unmarshal(r.Shadow, &v); err != nil {
			t.Fatalf("record %d: shadow %s: %v", r.ID, r.Shadow, err)
		}
		if v.Live.Decision != r.Outcome || v.Live.RuleID != r.RuleID {
			t.Fatalf("record %d: live verdict %+v, outcome %s by %s", r.ID, v.Live, r.Outcome, r.RuleID)
		}
		if v.Policy != nil {
			gotDisagree++
			if v.Policy.PolicyVersion != cand.Version() {
				t.Fatalf("record %d: shadow policy version %s", r.ID, v.Policy.PolicyVersion)
			}
			if v.Policy.RuleID == "cand-broken" && (v.Policy.Decision != "block" || v.Policy.Error == "") {
				t.Fatalf("record %d: a failing candidate rule is recorded as %+v", r.ID, v.Policy)
			}
		}
		if r.ShadowChanged {
			gotChanged++
		}
	}
	if gotDisagree != disagree || gotChanged != changed {
		t.Fatalf("recorded %d disagreements and %d changes, want %d and %d", gotDisagree, gotChanged, disagree, changed)
	}
	onlyChanged, err := db.Audit().Query(ctx, store.AuditFilter{Shadow: store.ShadowChanged})
	if err != nil || len(onlyChanged) != changed {
		t.Fatalf("--shadow query: %d records, %v; want %d", len(onlyChanged), err, changed)
	}

	rep, err := BuildShadowReport(ctx, db.Audit(), store.AuditFilter{}, ShadowReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Changed != int64(changed) || len(rep.Rules) != len(wants) {
		t.Fatalf("report: %d changed, %d rules; want %d, %d", rep.Changed, len(rep.Rules), changed, len(wants))
	}
	for _, r := range rep.Rules {
		w := wants[r.Source+"/"+r.RuleID]
		if w == nil || r.Events != w.events || r.WouldChange != w.change || r.WouldBlock != w.block ||
			r.WouldEscalate != w.escalate || r.Sessions != len(w.sessions) {
			t.Fatalf("report line %+v, audit log says %+v", r, w)
		}
		if len(r.Examples) == 0 || len(r.Examples) > 3 || (r.WouldChange > 0 && !r.Examples[0].Shadow.Changes) {
			t.Fatalf("report line %s: examples %+v", r.RuleID, r.Examples)
		}
	}
	if rep.Rules[0].WouldChange < rep.Rules[len(rep.Rules)-1].WouldChange {
		t.Fatal("report not sorted by changes")
	}
}

// With sampling, the shadow policy decides only a fraction of the events.
func TestShadowPolicySample(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	live, _ := policy.NewEngine(policy.Options{}, policy.Source{Name: "live.yaml", Data: []byte(liveWithout)})
	cand, _ := policy.NewEngine(policy.Options{}, policy.Source{Name: "cand.yaml", Data: []byte("rules:\n  - id: all\n    outcome: {decision: block, reason: all}\n")})
	h, err := New(Options{Engine: live, Store: db, Shadow: &ShadowPolicy{Engine: cand, Sample: 0.2}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 500
	for _, ev := range shadowEvents(n) {
		if _, err := h.HandleEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := db.Audit().Query(ctx, store.AuditFilter{Shadow: store.ShadowEvaluated})
	if err != nil {
		t.Fatal(err)
	}
	// Every sampled event disagrees; 20% of 500 is 100 (binomial sd ≈ 9).
	if len(recs) < 50 || len(recs) > 150 {
		t.Fatalf("%d of %d events sampled at 0.2", len(recs), n)
	}
}
