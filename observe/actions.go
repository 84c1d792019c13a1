package observe

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/internal/jsonscan"
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

// opKind names the generator of an action. A published action is kept
// in the replay index as an op and the key of its source in the store, so
// that it can be rebuilt from the store when the ring no longer holds it.
type opKind uint8

const (
	opRecorded     opKind = iota + 1 // ahp/recorded: a timeline entry (session channel)
	opStart                          // chat/toolCallStart
	opReady                          // chat/toolCallReady
	opConfirmed                      // chat/toolCallConfirmed (from a record or an approval)
	opComplete                       // chat/toolCallComplete
	opInputSet                       // session/inputNeededSet
	opInputRemoved                   // session/inputNeededRemoved
	opRun                            // ahp/runChanged
	opTurnStarted                    // chat/turnStarted
	opTurnComplete                   // chat/turnComplete
)

// onChat reports whether actions of kind k go to the session's chat
// channel (else to the session channel).
func (k opKind) onChat() bool {
	switch k {
	case opStart, opReady, opConfirmed, opComplete, opTurnStarted, opTurnComplete:
		return true
	}
	return false
}

// origin is the Host Protocol's ActionOrigin: the client whose dispatch
// an action answers.
type origin struct {
	ClientID  string `json:"clientId"`
	ClientSeq uint64 `json:"clientSeq"`
}

// op is one action to publish and what it is built from.
type op struct {
	kind     opKind
	toolCall string // tool call id
	turnID   string // the chat turn of a chat action
	approved bool   // for opConfirmed
	how      string // for opConfirmed and opReady: setting or user-action (approved)
	dur      int64  // for opTurnComplete: milliseconds
	// Sources: at most one of entry, appr and run is set.
	entry   *Entry
	appr    *store.Approval
	run     json.RawMessage
	effects []effects.Effect // of appr's action, when the hub reads them
	origin  *origin          // the dispatch this action answers
}

// approvalToolCallID is the tool call id of an approval's request.
func approvalToolCallID(approvalID string) string { return "ap-" + approvalID }

// refJSON is what a chat action says of its audit record in _meta.ahp
// (the whole entry is on the session channel).
type refJSON struct {
	AuditID    int64  `json:"auditId"`
	Outcome    string `json:"outcome"`
	EventType  string `json:"eventType"`
	RuleID     string `json:"ruleId,omitempty"`
	ApprovalID string `json:"approvalId,omitempty"`
}

// toolMeta is the _meta of a chat action or tool call: {ahp: …}.
type toolMeta struct {
	AHP any `json:"ahp"`
}

func ref(e *Entry) *toolMeta {
	return &toolMeta{AHP: &refJSON{AuditID: e.AuditID, Outcome: e.Outcome, EventType: e.EventType, RuleID: e.RuleID, ApprovalID: e.ApprovalID}}
}

// build returns the action of o.
func (o *op) build(channel string) map[string]any {
	switch o.kind {
	case opRecorded:
		return map[string]any{"type": "ahp/recorded", "entry": o.entry}
	case opTurnStarted:
		return map[string]any{"type": "chat/turnStarted", "turnId": o.turnID, "startedAt": o.at().UTC(), "message": o.message()}
	case opTurnComplete:
		return map[string]any{"type": "chat/turnComplete", "turnId": o.turnID, "duration": o.dur}
	case opStart:
		name := o.toolName()
		a := map[string]any{"type": "chat/toolCallStart", "turnId": o.turnID, "toolCallId": o.toolCall,
			"toolName": name, "displayName": name}
		if in := o.intention(); in != "" {
			a["intention"] = in
		}
		return a
	case opReady:
		tc := o.readyState()
		a := map[string]any{"type": "chat/toolCallReady", "turnId": o.turnID, "toolCallId": o.toolCall,
			"invocationMessage": tc.InvocationMessage, "toolInput": tc.ToolInput}
		if tc.Intention != "" {
			a["intention"] = tc.Intention
		}
		if tc.ConfirmationTitle != "" {
			a["confirmationTitle"] = tc.ConfirmationTitle
			a["riskAssessment"] = tc.RiskAssessment
		}
		if o.how != "" {
			a["confirmed"] = o.how
		}
		if tc.Meta != nil {
			a["_meta"] = tc.Meta
		}
		return a
	case opConfirmed:
		a := map[string]any{"type": "chat/toolCallConfirmed", "turnId": o.turnID, "toolCallId": o.toolCall, "approved": o.approved}
		if o.approved {
			a["confirmed"] = o.how
		} else {
			a["reason"] = "denied"
			a["reasonMessage"] = o.reason()
		}
		if o.entry != nil {
			a["_meta"] = ref(o.entry)
		} else if o.appr != nil {
			a["_meta"] = map[string]any{"ahp": map[string]any{"approvalId": o.appr.ID, "status": string(o.appr.Status),
				"decidedBy": o.appr.DecidedBy, "decisionReason": o.appr.DecisionReason}}
		}
		return a
	case opComplete:
		r := o.result()
		return map[string]any{"type": "chat/toolCallComplete", "turnId": o.turnID, "toolCallId": o.toolCall,
			"result": map[string]any{"success": *r.Success, "pastTenseMessage": r.PastTenseMessage}, "_meta": ref(o.entry)}
	case opInputSet:
		return map[string]any{"type": "session/inputNeededSet", "request": o.inputRequest(channel)}
	case opInputRemoved:
		return map[string]any{"type": "session/inputNeededRemoved", "id": o.toolCall}
	case opRun:
		return map[string]any{"type": "ahp/runChanged", "run": o.run}
	}
	return map[string]any{"type": "ahp/unknown"}
}

// at is when the op's source happened.
func (o *op) at() time.Time {
	switch {
	case o.entry != nil:
		return o.entry.Time
	case o.appr != nil:
		return o.appr.Created
	}
	return time.Time{}
}

// message is the Message that opens a turn: the prompt of a pre_prompt,
// else a system notice (the harness did not see what started the turn).
func (o *op) message() message {
	if o.entry != nil && o.entry.EventType == "pre_prompt" {
		if p := promptText(o.entry.Event); p != "" {
			return newMessage(cut(p, maxChatText), "user")
		}
		return newMessage("(prompt not shown: its event is larger than 16 KiB)", "user")
	}
	return newMessage("Supervised tool calls", "systemNotification")
}

// readyState is the tool call's state after chat/toolCallReady.
func (o *op) readyState() *toolCallState {
	name := o.toolName()
	tc := &toolCallState{Status: "pending-confirmation", ToolCallID: o.toolCall, ToolName: name, DisplayName: name,
		InvocationMessage: o.invocation(), ToolInput: o.toolInput(), turn: o.turnID}
	if o.how != "" {
		tc.Status, tc.Confirmed = "running", o.how
	}
	switch {
	case o.appr != nil:
		tc.Intention = o.intention()
		tc.ConfirmationTitle = "Approval required (rule " + o.appr.RuleID + ")"
		reason := "Rule " + o.appr.RuleID + ": " + o.appr.Reason
		if tc.Intention != "" {
			reason += ". What it does: " + tc.Intention
		}
		// The policy escalated: it could not call the action safe or
		// unsafe on its own, so the score is the middle of the scale.
		tc.RiskAssessment = &riskAssessment{Kind: "judge", Status: "complete", Reason: reason, Safety: 0.5}
		tc.Meta = &toolMeta{AHP: map[string]any{"approval": approvalJSON(*o.appr)}}
	case o.entry != nil:
		tc.Meta = ref(o.entry)
	}
	return tc
}

// intention says what a pending approval's action does, from its effects.
func (o *op) intention() string {
	if o.appr == nil {
		return ""
	}
	return describeEffects(o.effects)
}

// result is the state a completed tool call takes from its post_action.
func (o *op) result() toolCallState {
	ok := o.entry.Error == ""
	msg := "Ran " + o.entry.ToolName
	if o.entry.ToolName == "" {
		msg = "Action completed"
	}
	return toolCallState{Success: &ok, PastTenseMessage: msg}
}

// inputRequest is the Host Protocol's SessionToolConfirmationRequest of a
// pending approval.
func (o *op) inputRequest(channel string) map[string]any {
	id, _ := sessionOf(channel)
	return map[string]any{"id": o.toolCall, "kind": "toolConfirmation", "chat": ChatChannel(id), "turnId": o.turnID,
		"toolCall": o.readyState()}
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

// toolInput is the event's payload, as JSON text cut at maxChatInput
// bytes (read with one scan, and not copied when short: the chat's state
// takes it on the decision path, and the event is held anyway).
func (o *op) toolInput() text {
	var payload []byte
	if o.entry != nil && o.appr == nil {
		payload = o.entry.payload // found by entryOf's scan
	} else {
		payload = payloadOf(o.eventOf())
	}
	if len(payload) > maxChatInput {
		return text(cut(string(payload), maxChatInput))
	}
	return text(payload)
}

// payloadOf returns the payload member of an event JSON (nil when none).
func payloadOf(ev []byte) []byte {
	var payload []byte
	if jsonscan.Kind(ev) == '{' {
		_ = jsonscan.ObjectValid(ev, func(k, v []byte) error {
			if string(k) == "payload" {
				payload = v
			}
			return nil
		})
	}
	return payload
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

// confirm applies a chat/toolCallConfirmed op to the chat's state.
func (s *session) confirm(o *op) {
	tc := s.chat.calls[o.toolCall]
	if tc == nil || tc.Status != "pending-confirmation" {
		return
	}
	if o.approved {
		tc.Status, tc.Confirmed = "running", o.how
	} else {
		tc.Status, tc.Reason, tc.ReasonMessage = "cancelled", "denied", o.reason()
	}
}

// callOps returns the ops that open a tool call in the chat (a turn
// first when none is open) and adds it to the chat's state.
func (s *session) callOps(src op, t time.Time) []op {
	ops := s.turnOpen(t, "turn-"+src.toolCall, src)
	turn := s.chat.active.id
	src.turnID = turn
	start, ready := src, src
	start.kind, ready.kind = opStart, opReady
	s.addCall(ready.readyState(), t)
	return append(ops, start, ready)
}

// recordOps returns the actions of an audit record for session s, and
// updates the session's tool-call and chat bookkeeping.
func (s *session) recordOps(e *Entry) []op {
	n := 2 // room for the ops of the record's kind, allocated once
	switch e.EventType {
	case "pre_action":
		n = 6
	case "pre_prompt":
		n = 3
	}
	ops := make([]op, 1, n)
	ops[0] = op{kind: opRecorded, entry: e}
	switch {
	case e.EventType == "pre_prompt":
		ops = append(ops, s.turnEnd(e.Time)...)
		ops = append(ops, s.turnOpen(e.Time, "turn-"+itoa(e.Time.UnixNano()), op{entry: e})...)
	case e.EventType == "post_response" || e.EventType == "session_end":
		ops = append(ops, s.turnEnd(e.Time)...)
	case e.EventType == "pre_action" && e.Blocking:
		if e.ApprovalID != "" {
			e.ToolCallID = approvalToolCallID(e.ApprovalID)
		} else {
			e.ToolCallID = "ev-" + itoa(e.AuditID)
		}
		ok := allowed(e.Outcome)
		if ok && e.ToolName != "" {
			s.open[e.ToolName] = e.ToolCallID
		}
		if e.ApprovalID != "" && s.announced[e.ToolCallID] {
			delete(s.announced, e.ToolCallID)
			if s.confirmed[e.ToolCallID] {
				delete(s.confirmed, e.ToolCallID)
				return ops
			}
			c := op{kind: opConfirmed, toolCall: e.ToolCallID, approved: ok, how: "setting", entry: e}
			if tc := s.chat.calls[e.ToolCallID]; tc != nil {
				c.turnID = tc.turn
			}
			s.confirm(&c)
			return append(ops, c)
		}
		src := op{toolCall: e.ToolCallID, entry: e}
		if ok {
			src.how = "setting"
		}
		ops = append(ops, s.callOps(src, e.Time)...)
		if !ok {
			c := op{kind: opConfirmed, toolCall: e.ToolCallID, turnID: s.chat.active.id, entry: e}
			s.confirm(&c)
			ops = append(ops, c)
		}
	case e.EventType == "post_action":
		id, ok := s.open[e.ToolName]
		if !ok {
			return ops
		}
		delete(s.open, e.ToolName)
		e.ToolCallID = id
		tc := s.chat.calls[id]
		if tc == nil || tc.Status != "running" || s.chat.active == nil || tc.turn != s.chat.active.id {
			return ops
		}
		c := op{kind: opComplete, toolCall: id, turnID: tc.turn, entry: e}
		r := c.result()
		tc.Status, tc.Success, tc.PastTenseMessage = "completed", r.Success, r.PastTenseMessage
		s.chat.modified = e.Time
		ops = append(ops, c)
	}
	return ops
}

// approvalOps returns the actions of an approval that was raised or
// decided, and updates the session's bookkeeping. fx are the effects of
// the approval's action (nil when unknown).
func (s *session) approvalOps(a *store.Approval, fx []effects.Effect) []op {
	id := approvalToolCallID(a.ID)
	if a.Status == store.ApprovalPending {
		s.announced[id] = true
		ops := s.callOps(op{toolCall: id, appr: a, effects: fx}, a.Created)
		return append(ops, op{kind: opInputSet, toolCall: id, turnID: s.chat.active.id, appr: a, effects: fx})
	}
	if !s.announced[id] {
		return nil
	}
	turn := ""
	if tc := s.chat.calls[id]; tc != nil {
		turn = tc.turn
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
		c := op{kind: opConfirmed, toolCall: id, turnID: turn, approved: true, how: "user-action", appr: a}
		s.confirm(&c)
		ops = append([]op{c}, ops...)
	case a.Status == store.ApprovalDenied || evType != "pre_action":
		// An expired pre_action waits for its record: the fallback decides.
		s.confirmed[id] = true
		c := op{kind: opConfirmed, toolCall: id, turnID: turn, appr: a}
		s.confirm(&c)
		ops = append([]op{c}, ops...)
	}
	if evType != "pre_action" {
		delete(s.announced, id)
	}
	return ops
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
