package observe

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// rootActions returns the root channel's actions in the hub's ring of
// the given type, decoded, oldest first.
func rootActions(t *testing.T, h *Hub, typ string) []map[string]any {
	t.Helper()
	kinds, raw := published(h)
	var out []map[string]any
	for i, k := range kinds {
		if k != RootChannel+" "+typ {
			continue
		}
		var p struct {
			Action map[string]any `json:"action"`
		}
		if err := json.Unmarshal([]byte(raw[i]), &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Action)
	}
	return out
}

// ahpMeta returns v["_meta"]["ahp"] of a decoded object.
func ahpMeta(t *testing.T, v any) map[string]any {
	t.Helper()
	m, _ := v.(map[string]any)
	mm, _ := m["_meta"].(map[string]any)
	a, ok := mm["ahp"].(map[string]any)
	if !ok {
		t.Fatalf("no _meta.ahp in %v", v)
	}
	return a
}

// What an approver decides on reaches observers: a pending approval lists
// its deadline, fallback and the agent's recent actions (transport events
// left out) under _meta.ahp; its removal says who decided and why, and so
// does the timeline entry of the decision; statistics carry the rules'
// hits so that they count live.
func TestApprovalCardFields(t *testing.T) {
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	h, err := New(Options{Store: db, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(id int64, typ, agent, event, outcome, rule, decision string) {
		h.Recorded(&store.AuditRecord{ID: id, Time: now, SessionID: "s1", AgentID: agent, EventType: typ, Blocking: outcome != "",
			Outcome: outcome, RuleID: rule, Event: json.RawMessage(event), Decision: json.RawMessage(decision)})
	}
	rec(1, "handshake", "coder", `{"event_type":"handshake","payload":{}}`, "allow", "", `{"decision":"allow"}`)
	rec(2, "pre_action", "coder", `{"event_type":"pre_action","payload":{"tool_name":"bash","arguments":{"command":"git status"}}}`, "allow", "", `{"decision":"allow"}`)
	rec(3, "pre_action", "other", `{"event_type":"pre_action","payload":{"tool_name":"bash","arguments":{"command":"whoami"}}}`, "allow", "", `{"decision":"allow"}`)
	rec(4, "pre_action", "coder", `{"event_type":"pre_action","payload":{"tool_name":"write","arguments":{"file_path":"/srv/app.conf"}}}`, "block", "no-etc", `{"decision":"block","reason":"no"}`)
	rec(5, "connection_ended", "coder", `{"event_type":"connection_ended","payload":{}}`, "", "", ``)

	a := store.Approval{ID: "ap1", Created: now, SessionID: "s1", AgentID: "coder", RuleID: "ask-deploy", Reason: "deploys need an approval",
		Status: store.ApprovalPending, Event: json.RawMessage(`{"event_type":"pre_action","payload":{"tool_name":"bash","arguments":{"command":"deploy prod"}}}`)}
	deadline := now.Add(90 * time.Second)
	h.ApprovalTerms("ap1", deadline, "block")
	h.ApprovalChanged(a)

	added := rootActions(t, h, "ahp/approvalAdded")
	if len(added) != 1 {
		t.Fatalf("approvalAdded %d times", len(added))
	}
	x := ahpMeta(t, added[0]["approval"])
	if x["deadline"] != deadline.Format(time.RFC3339Nano) || x["fallback"] != "block" {
		t.Fatalf("deadline/fallback: %v", x)
	}
	recent, _ := x["recent"].([]any)
	var summaries []string
	for _, r := range recent {
		summaries = append(summaries, r.(map[string]any)["summary"].(string))
	}
	if len(recent) != 2 || summaries[0] != "git status" || summaries[1] != "/srv/app.conf" ||
		recent[1].(map[string]any)["outcome"] != "block" || recent[1].(map[string]any)["ruleId"] != "no-etc" {
		t.Fatalf("recent actions of coder: %v", recent)
	}
	// The root snapshot lists the same.
	h.mu.Lock()
	st := h.rootStateLocked()
	h.mu.Unlock()
	if ap := st.Meta.AHP.Approvals; len(ap) != 1 || ap[0].Meta == nil || ap[0].Meta.AHP.Fallback != "block" {
		t.Fatalf("root snapshot approvals: %+v", st.Meta.AHP.Approvals)
	}

	d := a
	d.Status, d.DecidedBy, d.DecisionReason, d.DecidedAt = store.ApprovalDenied, "alice", "not during the freeze", now.Add(time.Second)
	h.ApprovalChanged(d)
	removed := rootActions(t, h, "ahp/approvalRemoved")
	if len(removed) != 1 {
		t.Fatalf("approvalRemoved %d times", len(removed))
	}
	if x := ahpMeta(t, removed[0]); x["decidedBy"] != "alice" || x["decisionReason"] != "not during the freeze" || x["decidedAt"] == nil {
		t.Fatalf("removal: %v", removed[0])
	}
	h.mu.Lock()
	_, kept := h.terms["ap1"]
	h.mu.Unlock()
	if kept {
		t.Fatal("the terms of a decided approval are kept")
	}

	rec(6, "pre_action", "coder", string(a.Event), "block", "ask-deploy",
		`{"decision":"block","reason":"denied by alice: not during the freeze","metadata":{"approval_id":"ap1","approval_status":"denied","decided_by":"alice","approval_reason":"not during the freeze"}}`)
	h.mu.Lock()
	tl := h.sessions["s1"].timeline
	last := tl[len(tl)-1]
	h.mu.Unlock()
	if last.ApprovalID != "ap1" || last.ApprovalStatus != "denied" || last.DecidedBy != "alice" || last.ApprovalReason != "not during the freeze" {
		t.Fatalf("timeline entry of the decision: %+v", last)
	}

	h.publishStats()
	stats := rootActions(t, h, "ahp/statsChanged")
	if len(stats) != 1 {
		t.Fatalf("statsChanged %d times", len(stats))
	}
	hits, _ := ahpMeta(t, stats[0])["ruleHits"].(map[string]any)
	if hits["no-etc"] != float64(1) || hits["ask-deploy"] != float64(1) {
		t.Fatalf("rule hits: %v", hits)
	}
}

// An agent's recent actions outlive a flood of another agent's events in
// the same session (the timeline keeps only the newest).
func TestRecentActionsSurviveAFlood(t *testing.T) {
	s := newSession("s1", time.Now())
	ev := func(cmd string) json.RawMessage {
		return json.RawMessage(`{"event_type":"pre_action","payload":{"tool_name":"bash","arguments":{"command":"` + cmd + `"}}}`)
	}
	s.apply(Entry{EventType: "pre_action", AgentID: "release", Outcome: "allow", Event: ev("ls -la /srv/app")})
	s.apply(Entry{EventType: "pre_action", AgentID: "release", Outcome: "block", RuleID: "r", Event: ev("rm -rf /")})
	for range 3 * maxTimeline {
		s.apply(Entry{EventType: "pre_action", AgentID: "loader", Outcome: "allow", Event: ev("echo")})
	}
	got := s.recentActions("release")
	if len(got) != 2 || got[0].Summary != "ls -la /srv/app" || got[1].Summary != "rm -rf /" || got[1].Outcome != "block" {
		t.Fatalf("recent actions of release: %+v", got)
	}
	for range maxRecentAgents + 2 {
		s.apply(Entry{EventType: "pre_action", AgentID: "a" + itoa(int64(len(s.recent))), Event: ev("x")})
	}
	if len(s.recent) > maxRecentAgents {
		t.Fatalf("%d agents tracked", len(s.recent))
	}
	if got := s.recentActions("loader"); len(got) != maxRecent {
		t.Fatalf("loader: %d recent", len(got))
	}
}
