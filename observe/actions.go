package observe

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/ahp-go/ahp/store"
)

// Channels.
const (
	// RootChannel is the catalogue: sessions, pending approvals, harness
	// status and the loaded policy.
	RootChannel = "ahp-root://"
	// sessionPrefix starts the URI of a session channel.
	sessionPrefix = "ahp-session:/"
)

// SessionChannel returns the channel URI of a session.
func SessionChannel(id string) string { return sessionPrefix + url.PathEscape(id) }

// sessionOf returns the session id of a session channel URI.
func sessionOf(channel string) (string, bool) {
	rest, ok := strings.CutPrefix(channel, sessionPrefix)
	if !ok || rest == "" {
		return "", false
	}
	id, err := url.PathUnescape(rest)
	return id, err == nil && id != ""
}

// supervisedTurn is the turn id of every tool call: a supervised session
// is one open turn (the harness does not see the agent's turns).
const supervisedTurn = "supervised"

// opKind names the generator of an action. A published action is kept
// in the replay index as an op and the key of its source in the store, so
// that it can be rebuilt from the store when the ring no longer holds it.
type opKind uint8

const (
	opRecorded     opKind = iota + 1 // ahp/recorded: a timeline entry
	opStart                          // chat/toolCallStart
	opReady                          // chat/toolCallReady
	opConfirmed                      // chat/toolCallConfirmed (from a record or an approval)
	opComplete                       // chat/toolCallComplete
	opInputSet                       // session/inputNeededSet
	opInputRemoved                   // session/inputNeededRemoved
	opRun                            // ahp/runChanged
)

// op is one action to publish and what it is built from.
type op struct {
	kind     opKind
	toolCall string // tool call id
	approved bool   // for opConfirmed
	how      string // for opConfirmed: setting, user-action (approved) or denied
	// Sources: exactly one of entry, appr and run is set.
	entry *Entry
	appr  *store.Approval
	run   json.RawMessage
}

// approvalToolCallID is the tool call id of an approval's request.
func approvalToolCallID(approvalID string) string { return "ap-" + approvalID }

// meta wraps harness data for the Host Protocol's _meta member.
func meta(key string, v any) map[string]any { return map[string]any{key: v} }

// build returns the action of o.
func (o *op) build(channel string) map[string]any {
	switch o.kind {
	case opRecorded:
		return map[string]any{"type": "ahp/recorded", "entry": o.entry}
	case opStart:
		name := o.toolName()
		return map[string]any{"type": "chat/toolCallStart", "turnId": supervisedTurn, "toolCallId": o.toolCall,
			"toolName": name, "displayName": name}
	case opReady:
		a := map[string]any{"type": "chat/toolCallReady", "turnId": supervisedTurn, "toolCallId": o.toolCall,
			"invocationMessage": o.invocation(), "toolInput": o.toolInput()}
		if o.appr != nil {
			a["confirmationTitle"] = "Approval required (rule " + o.appr.RuleID + ")"
			a["_meta"] = meta("ahpApproval", approvalJSON(*o.appr))
		}
		return a
	case opConfirmed:
		a := map[string]any{"type": "chat/toolCallConfirmed", "turnId": supervisedTurn, "toolCallId": o.toolCall, "approved": o.approved}
		if o.approved {
			a["confirmed"] = o.how
		} else {
			a["reason"] = "denied"
			a["reasonMessage"] = o.reason()
		}
		if o.entry != nil {
			a["_meta"] = meta("ahp", o.entry)
		} else if o.appr != nil {
			a["_meta"] = meta("ahpApproval", approvalJSON(*o.appr))
		}
		return a
	case opComplete:
		ok := o.entry.Error == ""
		msg := "Ran " + o.entry.ToolName
		if o.entry.ToolName == "" {
			msg = "Action completed"
		}
		return map[string]any{"type": "chat/toolCallComplete", "turnId": supervisedTurn, "toolCallId": o.toolCall,
			"result": map[string]any{"success": ok, "pastTenseMessage": msg}, "_meta": meta("ahp", o.entry)}
	case opInputSet:
		return map[string]any{"type": "session/inputNeededSet", "request": o.inputRequest(channel)}
	case opInputRemoved:
		return map[string]any{"type": "session/inputNeededRemoved", "id": o.toolCall}
	case opRun:
		return map[string]any{"type": "ahp/runChanged", "run": o.run}
	}
	return map[string]any{"type": "ahp/unknown"}
}

// inputRequest is the Host Protocol's SessionToolConfirmationRequest of a
// pending approval.
func (o *op) inputRequest(channel string) map[string]any {
	name := o.toolName()
	return map[string]any{"id": o.toolCall, "kind": "toolConfirmation", "chat": channel, "turnId": supervisedTurn,
		"toolCall": map[string]any{"status": "pending-confirmation", "toolCallId": o.toolCall, "toolName": name,
			"displayName": name, "invocationMessage": o.invocation(), "toolInput": o.toolInput(),
			"confirmationTitle": "Approval required (rule " + o.appr.RuleID + ")"},
		"_meta": meta("ahpApproval", approvalJSON(*o.appr))}
}

// eventOf returns the event JSON of the op's source.
func (o *op) eventOf() json.RawMessage {
	switch {
	case o.appr != nil:
		return o.appr.Event
	case o.entry != nil:
		return o.entry.Event
	}
	return nil
}

func (o *op) toolName() string {
	if o.entry != nil && o.entry.ToolName != "" {
		return o.entry.ToolName
	}
	var ev struct {
		Type    string `json:"event_type"`
		Payload struct {
			ToolName string `json:"tool_name"`
		} `json:"payload"`
	}
	_ = json.Unmarshal(o.eventOf(), &ev)
	if ev.Payload.ToolName != "" {
		return ev.Payload.ToolName
	}
	if ev.Type != "" {
		return ev.Type
	}
	return "action"
}

func (o *op) toolInput() string {
	var ev struct {
		Payload json.RawMessage `json:"payload"`
	}
	_ = json.Unmarshal(o.eventOf(), &ev)
	return string(ev.Payload)
}

func (o *op) invocation() string {
	if o.appr != nil {
		return o.appr.Reason
	}
	return "Supervised call of " + o.toolName()
}

func (o *op) reason() string {
	if o.entry != nil {
		if o.entry.Reason != "" {
			return o.entry.Reason
		}
		return "decision: " + o.entry.Outcome
	}
	if o.appr != nil {
		r := string(o.appr.Status)
		if o.appr.DecidedBy != "" {
			r += " by " + o.appr.DecidedBy
		}
		if o.appr.DecisionReason != "" {
			r += ": " + o.appr.DecisionReason
		}
		return r
	}
	return ""
}

// allowed reports whether a decision tag lets the action proceed.
func allowed(outcome string) bool {
	switch outcome {
	case "allow", "modify", "approve":
		return true
	}
	return false
}

// recordOps returns the actions of an audit record for session s, and
// updates the session's tool-call bookkeeping.
func (s *session) recordOps(e *Entry) []op {
	switch {
	case e.EventType == "pre_action" && e.Blocking:
		if e.ApprovalID != "" {
			e.ToolCallID = approvalToolCallID(e.ApprovalID)
		} else {
			e.ToolCallID = "ev-" + itoa(e.AuditID)
		}
		if allowed(e.Outcome) && e.ToolName != "" {
			s.open[e.ToolName] = e.ToolCallID
		}
		if e.ApprovalID != "" && s.announced[e.ToolCallID] {
			delete(s.announced, e.ToolCallID)
			if s.confirmed[e.ToolCallID] {
				delete(s.confirmed, e.ToolCallID)
				return []op{{kind: opRecorded, entry: e}}
			}
			return []op{{kind: opConfirmed, toolCall: e.ToolCallID, approved: allowed(e.Outcome), how: "setting", entry: e}}
		}
		return []op{
			{kind: opStart, toolCall: e.ToolCallID, entry: e},
			{kind: opReady, toolCall: e.ToolCallID, entry: e},
			{kind: opConfirmed, toolCall: e.ToolCallID, approved: allowed(e.Outcome), how: "setting", entry: e},
		}
	case e.EventType == "post_action":
		id, ok := s.open[e.ToolName]
		if ok {
			delete(s.open, e.ToolName)
		} else {
			id = "post-" + itoa(e.Time.UnixNano())
		}
		e.ToolCallID = id
		return []op{{kind: opComplete, toolCall: id, entry: e}}
	}
	return []op{{kind: opRecorded, entry: e}}
}

// approvalOps returns the actions of an approval that was raised or
// decided, and updates the session's bookkeeping.
func (s *session) approvalOps(a *store.Approval) []op {
	id := approvalToolCallID(a.ID)
	if a.Status == store.ApprovalPending {
		s.announced[id] = true
		return []op{{kind: opStart, toolCall: id, appr: a}, {kind: opReady, toolCall: id, appr: a}, {kind: opInputSet, toolCall: id, appr: a}}
	}
	if !s.announced[id] {
		return nil
	}
	ops := []op{{kind: opInputRemoved, toolCall: id, appr: a}}
	var evType string
	var ev struct {
		Type string `json:"event_type"`
	}
	if json.Unmarshal(a.Event, &ev) == nil {
		evType = ev.Type
	}
	switch {
	case a.Status == store.ApprovalApproved:
		s.confirmed[id] = true
		ops = append([]op{{kind: opConfirmed, toolCall: id, approved: true, how: "user-action", appr: a}}, ops...)
	case a.Status == store.ApprovalDenied || evType != "pre_action":
		// An expired pre_action waits for its record: the fallback decides.
		s.confirmed[id] = true
		ops = append([]op{{kind: opConfirmed, toolCall: id, approved: false, appr: a}}, ops...)
	}
	if evType != "pre_action" {
		delete(s.announced, id)
	}
	return ops
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
