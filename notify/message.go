package notify

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/store"
)

// Schema and SchemaVersion identify the generic JSON body. The version
// grows only when a field changes meaning or goes away; new fields may be
// added within a version.
const (
	Schema        = "ahp.approval-notification"
	SchemaVersion = 1
)

// Kind is what a notification is about.
type Kind string

// The kinds of notification.
const (
	// KindPending: an agent waits for a human decision.
	KindPending Kind = "pending"
	// KindOutcome: the approval was approved, denied or expired.
	KindOutcome Kind = "outcome"
)

// The outcomes of an approval, in Message.Outcome.
const (
	OutcomeApproved = "approved"
	OutcomeDenied   = "denied"
	OutcomeExpired  = "expired"   // the agent went away, or the harness restarted
	OutcomeTimedOut = "timed_out" // nobody answered within the timeout
)

// MaxEventBytes bounds the stored event a JSON body carries whole; a
// larger one is left out (Action.EventOmitted) and can be read with
// `ahp approvals show ID`.
const MaxEventBytes = 64 << 10

// maxSummary bounds Action.Summary, in bytes.
const maxSummary = 2000

// Message is the generic JSON body (format json), documented in
// docs/notifications.md. Every text in it is as the store keeps it:
// secrets in the event and the reasons are already replaced by
// [REDACTED:kind:fingerprint] markers.
type Message struct {
	Schema  string `json:"schema"`  // always Schema
	Version int    `json:"version"` // always SchemaVersion
	Kind    Kind   `json:"kind"`
	// ApprovalID identifies the approval (`ahp approvals show ID`,
	// GET /v1/approvals/ID on the admin API).
	ApprovalID string `json:"approval_id"`
	// Status is the stored status: pending, approved, denied or expired.
	Status string `json:"status"`
	// Outcome is set for KindOutcome: approved, denied, expired or
	// timed_out.
	Outcome string `json:"outcome,omitempty"`
	// Link opens the approval card on the dashboard; empty when no
	// dashboard URL is configured.
	Link string `json:"link,omitempty"`
	// Find is the command that shows the approval.
	Find string `json:"find"`
	// RuleID is the rule that asked for the approval; Pack its built-in
	// pack ("" for policy files).
	RuleID string `json:"rule_id"`
	Pack   string `json:"pack,omitempty"`
	// Reason is why the rule asked for a human.
	Reason    string `json:"reason,omitempty"`
	SessionID string `json:"session_id"`
	AgentID   string `json:"agent_id"`
	// RequestedBy is the principal whose event raised the approval.
	RequestedBy string `json:"requested_by,omitempty"`
	// Action is what the agent asks to do.
	Action    Action    `json:"action"`
	CreatedAt time.Time `json:"created_at"`
	// Deadline and Fallback: when a pending approval expires, and what the
	// agent then gets (allow or block). Fallback is also set on an expired
	// outcome when known.
	Deadline *time.Time `json:"deadline,omitempty"`
	Fallback string     `json:"fallback,omitempty"`
	// DecidedBy, DecidedAt and DecisionReason say who decided and why
	// ("ahp" for an expiry).
	DecidedBy      string     `json:"decided_by,omitempty"`
	DecidedAt      *time.Time `json:"decided_at,omitempty"`
	DecisionReason string     `json:"decision_reason,omitempty"`
}

// Action is the event that waits, as stored.
type Action struct {
	EventType string `json:"event_type"`
	// Tool is the payload's tool_name, when it has one.
	Tool string `json:"tool,omitempty"`
	// Summary is one readable line: the command, the file path, or the
	// arguments as compact JSON, cut at 2000 bytes.
	Summary string `json:"summary"`
	// Event is the whole stored event, unless it is larger than
	// MaxEventBytes (then EventOmitted is true).
	Event        json.RawMessage `json:"event,omitempty"`
	EventOmitted bool            `json:"event_omitted,omitempty"`
	EventBytes   int             `json:"event_bytes"`
}

// FindCommand is the command that shows approval id.
func FindCommand(id string) string { return "ahp approvals show " + id }

// CardLink is the link to approval id's card on the dashboard at base
// ("" when base is empty).
func CardLink(base, id string) string {
	if base == "" {
		return ""
	}
	return strings.TrimRight(base, "/") + "/#approval=" + url.QueryEscape(id)
}

// newMessage builds the generic body of n. pack is the rule's pack.
func newMessage(n harness.ApprovalNotice, pack, dashboard string) Message {
	a := n.Approval
	m := Message{Schema: Schema, Version: SchemaVersion, Kind: KindPending, ApprovalID: a.ID, Status: string(a.Status),
		Link: CardLink(dashboard, a.ID), Find: FindCommand(a.ID), RuleID: a.RuleID, Pack: pack, Reason: a.Reason,
		SessionID: a.SessionID, AgentID: a.AgentID, RequestedBy: a.RequestedBy, Action: describe(a.Event),
		CreatedAt: a.Created.UTC(), Fallback: string(n.Fallback)}
	if a.Status != store.ApprovalPending {
		m.Kind, m.Outcome = KindOutcome, outcomeOf(n)
		m.DecidedBy, m.DecisionReason = a.DecidedBy, a.DecisionReason
		if !a.DecidedAt.IsZero() {
			t := a.DecidedAt.UTC()
			m.DecidedAt = &t
		}
		if a.Status != store.ApprovalExpired {
			m.Fallback = ""
		}
	} else if !n.Deadline.IsZero() {
		t := n.Deadline.UTC()
		m.Deadline = &t
	}
	return m
}

// kindOf is the kind of notification n makes.
func kindOf(n harness.ApprovalNotice) Kind {
	if n.Approval.Status == store.ApprovalPending {
		return KindPending
	}
	return KindOutcome
}

func outcomeOf(n harness.ApprovalNotice) string {
	switch n.Approval.Status {
	case store.ApprovalApproved:
		return OutcomeApproved
	case store.ApprovalDenied:
		return OutcomeDenied
	}
	if n.TimedOut {
		return OutcomeTimedOut
	}
	return OutcomeExpired
}

// describe reads the stored event into an Action. An event it cannot read
// is still shown, by type and size.
func describe(raw json.RawMessage) Action {
	act := Action{EventBytes: len(raw)}
	if len(raw) <= MaxEventBytes {
		act.Event = raw
	} else {
		act.EventOmitted = true
	}
	var ev struct {
		EventType string          `json:"event_type"`
		Payload   json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(raw, &ev) != nil {
		act.Summary = "(the stored event could not be read)"
		return act
	}
	act.EventType = ev.EventType
	var p struct {
		ToolName  string          `json:"tool_name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(ev.Payload, &p)
	act.Tool = p.ToolName
	act.Summary = cut(summarize(p.Arguments, ev.Payload), maxSummary)
	return act
}

// summarize picks the line a person reads first: a command, else a path
// or URL, else the arguments (or the payload) as compact JSON.
func summarize(args, payload json.RawMessage) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(args, &fields) == nil {
		for _, k := range []string{"command", "cmd", "file_path", "path", "url", "query"} {
			var s string
			if json.Unmarshal(fields[k], &s) == nil && s != "" {
				return s
			}
		}
	}
	src := args
	if len(bytes.TrimSpace(src)) == 0 || string(bytes.TrimSpace(src)) == "null" {
		src = payload
	}
	var buf bytes.Buffer
	if json.Compact(&buf, src) != nil {
		return ""
	}
	return buf.String()
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
