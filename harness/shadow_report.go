package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/ahp-go/ahp/store"
)

// ShadowReport summarises, per rule, what shadow rules and the shadow
// policy would have decided on the events of an audit log: the live twin
// of ahp replay's report, read to decide whether a rule can be enforced.
type ShadowReport struct {
	// Since and Until are the time filters applied, RFC 3339 in UTC, ""
	// when unset.
	Since string `json:"since,omitempty"`
	Until string `json:"until,omitempty"`
	// Records is how many records carry shadow verdicts; Changed of them
	// would have had another outcome.
	Records int64 `json:"records"`
	Changed int64 `json:"changed"`
	// Rules are the shadow rules and shadow policy rules that produced a
	// verdict, the most outcome changes first.
	Rules []ShadowRuleReport `json:"rules"`
}

// ShadowRuleReport is one rule's line of a ShadowReport.
type ShadowRuleReport struct {
	// RuleID is the rule; "" is a default outcome.
	RuleID string `json:"rule_id"`
	// Source is "rule" for a shadow rule of the live policy, "policy" for a
	// rule of the shadow policy (reported where it disagreed with the live
	// policy).
	Source string `json:"source"`
	// Events is how many events the rule produced a verdict on;
	// WouldChange of them would have been decided differently, and
	// WouldBlock and WouldEscalate of those would have been blocked or
	// escalated.
	Events        int64 `json:"events"`
	WouldChange   int64 `json:"would_change"`
	WouldBlock    int64 `json:"would_block"`
	WouldEscalate int64 `json:"would_escalate"`
	// Sessions and Tools count the distinct sessions and tool names among
	// the changed events (up to maxDistinct each).
	Sessions int `json:"sessions"`
	Tools    int `json:"tools"`
	// Transitions count the changed events by live and shadow decision.
	Transitions []ShadowTransition `json:"transitions"`
	// Examples are a few events, the changed ones first, in ID order.
	Examples []ShadowExample `json:"examples"`

	sessions, tools map[string]struct{}
	trans           map[[2]string]int64
	unchanged       []ShadowExample
}

// ShadowTransition counts events from one decision to another.
type ShadowTransition struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Count int64  `json:"count"`
}

// ShadowExample is one event of a ShadowRuleReport.
type ShadowExample struct {
	ID        int64     `json:"id"`
	Time      time.Time `json:"time"`
	SessionID string    `json:"session_id"`
	EventType string    `json:"event_type"`
	Tool      string    `json:"tool,omitempty"`
	// Live is the live policy's decision and rule.
	Live ShadowVerdict `json:"live"`
	// Shadow is the rule's verdict.
	Shadow ShadowVerdict `json:"shadow"`
}

// ShadowReportOptions bound a report.
type ShadowReportOptions struct {
	// Examples is how many example events each rule lists (3 when 0).
	Examples int
}

// maxDistinct bounds the sessions and tools a report tells apart per rule.
const maxDistinct = 100000

// BuildShadowReport reads the records of a that match f and carry shadow
// verdicts (f.Shadow is set to store.ShadowEvaluated; f.AfterID and
// f.Limit are ignored) and summarises them per rule.
func BuildShadowReport(ctx context.Context, a store.AuditLog, f store.AuditFilter, o ShadowReportOptions) (*ShadowReport, error) {
	if o.Examples <= 0 {
		o.Examples = 3
	}
	rep := &ShadowReport{}
	if !f.Since.IsZero() {
		rep.Since = f.Since.UTC().Format(time.RFC3339)
	}
	if !f.Until.IsZero() {
		rep.Until = f.Until.UTC().Format(time.RFC3339)
	}
	f.Shadow, f.AfterID, f.Limit, f.Newest = store.ShadowEvaluated, 0, store.MaxQueryLimit, false
	rules := map[[2]string]*ShadowRuleReport{}
	for {
		recs, err := a.Query(ctx, f)
		if err != nil {
			return nil, err
		}
		for i := range recs {
			rep.add(&recs[i], rules, o.Examples)
		}
		if len(recs) < f.Limit {
			break
		}
		f.AfterID = recs[len(recs)-1].ID
	}
	for _, r := range rules {
		r.finish(o.Examples)
		rep.Rules = append(rep.Rules, *r)
	}
	slices.SortFunc(rep.Rules, func(a, b ShadowRuleReport) int {
		return cmp.Or(cmp.Compare(b.WouldChange, a.WouldChange), cmp.Compare(b.Events, a.Events),
			cmp.Compare(a.Source, b.Source), cmp.Compare(a.RuleID, b.RuleID))
	})
	if rep.Rules == nil {
		rep.Rules = []ShadowRuleReport{}
	}
	return rep, nil
}

// add counts one record.
func (rep *ShadowReport) add(rec *store.AuditRecord, rules map[[2]string]*ShadowRuleReport, examples int) {
	var v ShadowVerdicts
	if json.Unmarshal(rec.Shadow, &v) != nil {
		return
	}
	rep.Records++
	if rec.ShadowChanged {
		rep.Changed++
	}
	tool := ""
	one := func(source string, sv ShadowVerdict) {
		key := [2]string{source, sv.RuleID}
		r := rules[key]
		if r == nil {
			r = &ShadowRuleReport{RuleID: sv.RuleID, Source: source, sessions: map[string]struct{}{},
				tools: map[string]struct{}{}, trans: map[[2]string]int64{}}
			rules[key] = r
		}
		r.Events++
		if tool == "" {
			tool = toolOf(rec.Event)
		}
		ex := ShadowExample{ID: rec.ID, Time: rec.Time.UTC(), SessionID: rec.SessionID, EventType: rec.EventType,
			Tool: tool, Live: v.Live, Shadow: sv}
		if !sv.Changes {
			if len(r.unchanged) < examples {
				r.unchanged = append(r.unchanged, ex)
			}
			return
		}
		r.WouldChange++
		switch sv.Decision {
		case "block":
			r.WouldBlock++
		case "escalate":
			r.WouldEscalate++
		}
		r.trans[[2]string{v.Live.Decision, sv.Decision}]++
		if len(r.sessions) < maxDistinct {
			r.sessions[rec.SessionID] = struct{}{}
		}
		if tool != "" && len(r.tools) < maxDistinct {
			r.tools[tool] = struct{}{}
		}
		if len(r.Examples) < examples {
			r.Examples = append(r.Examples, ex)
		}
	}
	for _, sv := range v.Rules {
		one("rule", sv)
	}
	if v.Policy != nil {
		one("policy", *v.Policy)
	}
}

// finish fills the counts kept in maps and the examples.
func (r *ShadowRuleReport) finish(examples int) {
	r.Sessions, r.Tools = len(r.sessions), len(r.tools)
	for k, n := range r.trans {
		r.Transitions = append(r.Transitions, ShadowTransition{From: k[0], To: k[1], Count: n})
	}
	slices.SortFunc(r.Transitions, func(a, b ShadowTransition) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	if r.Transitions == nil {
		r.Transitions = []ShadowTransition{}
	}
	for _, ex := range r.unchanged {
		if len(r.Examples) >= examples {
			break
		}
		r.Examples = append(r.Examples, ex)
	}
	if r.Examples == nil {
		r.Examples = []ShadowExample{}
	}
	r.sessions, r.tools, r.trans, r.unchanged = nil, nil, nil, nil
}

// toolOf returns payload.tool_name of a stored event, or "".
func toolOf(ev json.RawMessage) string {
	var e struct {
		Payload struct {
			ToolName string `json:"tool_name"`
		} `json:"payload"`
	}
	_ = json.Unmarshal(ev, &e)
	return e.Payload.ToolName
}
