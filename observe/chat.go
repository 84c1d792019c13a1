package observe

import (
	"encoding/json"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/internal/jsonscan"
)

// chatPrefix starts the URI of a session's chat channel. A supervised
// session has exactly one chat, whose path is the session id (escaped as
// in the session URI).
const chatPrefix = "ahp-chat:/"

// ChatChannel returns the channel URI of a session's chat.
func ChatChannel(sessionID string) string { return chatPrefix + url.PathEscape(sessionID) }

// chatOf returns the session id of a chat channel URI.
func chatOf(channel string) (string, bool) {
	rest, ok := strings.CutPrefix(channel, chatPrefix)
	if !ok || rest == "" {
		return "", false
	}
	id, err := url.PathUnescape(rest)
	return id, err == nil && id != ""
}

// The Host Protocol's SessionStatus bits (a session's and a chat's).
const (
	statusIdle        = 1
	statusInProgress  = 1 << 3
	statusInputNeeded = 1<<3 | 1<<4
)

// Bounds of a chat's state. The harness sees tool calls, not the agent's
// turns: a turn is opened by a prompt (pre_prompt) or by the first tool
// call after the last turn ended, and ends with the agent's response
// (post_response), the session's end, the next prompt, or after
// maxTurnCalls tool calls. The chat keeps completed turns while they hold
// at most maxChatCalls tool calls; a tool call's input is cut at
// maxChatInput bytes (the whole event is in the session's timeline).
const (
	maxTurnCalls = 200
	maxChatCalls = 500
	maxChatInput = 4 << 10
	maxChatText  = 2 << 10
)

// riskAssessment is the Host Protocol's ToolCallRiskAssessment, filled
// from the harness's policy decision: the rule that escalated, its reason
// and what the action does.
type riskAssessment struct {
	Kind   string  `json:"kind"`
	Status string  `json:"status"`
	Reason string  `json:"reason"`
	Safety float64 `json:"safety"`
}

// toolCallState is the Host Protocol's ToolCallState, in the variants a
// supervised tool call goes through: pending-confirmation, running,
// completed, cancelled.
type toolCallState struct {
	Status            string          `json:"status"`
	ToolCallID        string          `json:"toolCallId"`
	ToolName          string          `json:"toolName"`
	DisplayName       string          `json:"displayName"`
	Intention         string          `json:"intention,omitempty"`
	Meta              *toolMeta       `json:"_meta,omitempty"`
	InvocationMessage string          `json:"invocationMessage"`
	ToolInput         text            `json:"toolInput,omitempty"`
	ConfirmationTitle string          `json:"confirmationTitle,omitempty"`
	RiskAssessment    *riskAssessment `json:"riskAssessment,omitempty"`
	Confirmed         string          `json:"confirmed,omitempty"`
	Success           *bool           `json:"success,omitempty"`
	PastTenseMessage  string          `json:"pastTenseMessage,omitempty"`
	Reason            string          `json:"reason,omitempty"`
	ReasonMessage     string          `json:"reasonMessage,omitempty"`
	turn              string          // the turn the call belongs to
}

// text is a string held as bytes (a tool call's input, a slice of its
// event); it is sent as a JSON string.
type text []byte

// MarshalJSON writes t as a JSON string.
func (t text) MarshalJSON() ([]byte, error) { return json.Marshal(string(t)) }

// message is the Host Protocol's Message that opens a turn.
type message struct {
	Text   string `json:"text"`
	Origin struct {
		Kind string `json:"kind"`
	} `json:"origin"`
}

func newMessage(text, kind string) message {
	m := message{Text: text}
	m.Origin.Kind = kind
	return m
}

// chatTurn is one turn of a session's chat.
type chatTurn struct {
	id      string
	started time.Time
	msg     message
	calls   []*toolCallState
	done    bool
	dur     int64 // milliseconds, when done
}

// chat is the state of a session's chat channel.
type chat struct {
	turns    []*chatTurn // completed turns, oldest first
	active   *chatTurn
	calls    map[string]*toolCallState // tool calls held, by id
	nCalls   int                       // tool calls in turns
	modified time.Time
}

func newChat() chat { return chat{calls: map[string]*toolCallState{}} }

// turnOpen returns the ops that open a turn at t when none is open (or
// the open one is full, which it first completes).
func (s *session) turnOpen(t time.Time, id string, src op) []op {
	var ops []op
	c := &s.chat
	if c.active != nil && (len(c.active.calls) < maxTurnCalls || c.active.waiting()) {
		return nil // a turn with a call waiting for an approval is not rolled over
	}
	ops = append(ops, s.turnEnd(t)...)
	src.kind, src.turnID = opTurnStarted, id
	src.how, src.approved = "", false
	c.active = &chatTurn{id: id, started: t, msg: src.message()}
	c.modified = t
	return append(ops, src)
}

// turnEnd completes the open turn, if any, at t.
func (s *session) turnEnd(t time.Time) []op {
	c := &s.chat
	a := c.active
	if a == nil {
		return nil
	}
	a.done, a.dur = true, max(0, t.Sub(a.started).Milliseconds())
	for _, tc := range a.calls {
		// As the Host Protocol's reducers do: a call still in progress
		// when its turn ends is cancelled (skipped).
		if tc.Status != "completed" && tc.Status != "cancelled" {
			*tc = toolCallState{Status: "cancelled", ToolCallID: tc.ToolCallID, ToolName: tc.ToolName, DisplayName: tc.DisplayName,
				Intention: tc.Intention, Meta: tc.Meta, InvocationMessage: tc.InvocationMessage, ToolInput: tc.ToolInput,
				Reason: "skipped", turn: tc.turn}
		}
	}
	c.active = nil
	c.modified = t
	c.turns = append(c.turns, a)
	c.nCalls += len(a.calls)
	for len(c.turns) > 1 && c.nCalls > maxChatCalls {
		for _, tc := range c.turns[0].calls {
			delete(c.calls, tc.ToolCallID)
		}
		c.nCalls -= len(c.turns[0].calls)
		c.turns[0] = nil
		c.turns = c.turns[1:]
	}
	return []op{{kind: opTurnComplete, turnID: a.id, dur: a.dur}}
}

// waiting reports whether a call of the turn waits for an approval.
func (t *chatTurn) waiting() bool {
	for _, tc := range t.calls {
		if tc.Status == "pending-confirmation" {
			return true
		}
	}
	return false
}

// addCall adds a tool call to the open turn.
func (s *session) addCall(tc *toolCallState, t time.Time) {
	c := &s.chat
	c.active.calls = append(c.active.calls, tc)
	c.calls[tc.ToolCallID] = tc
	c.modified = t
}

// turnJSON is the Host Protocol's Turn (completed) or ActiveTurn.
type turnJSON struct {
	ID            string     `json:"id"`
	StartedAt     time.Time  `json:"startedAt"`
	Duration      *int64     `json:"duration,omitempty"`
	Message       message    `json:"message"`
	ResponseParts []partJSON `json:"responseParts"`
	Usage         any        `json:"usage"`
	State         string     `json:"state,omitempty"`
}

// partJSON is a ToolCallResponsePart.
type partJSON struct {
	Kind     string        `json:"kind"`
	ToolCall toolCallState `json:"toolCall"`
}

func (t *chatTurn) json() turnJSON {
	j := turnJSON{ID: t.id, StartedAt: t.started.UTC(), Message: t.msg, ResponseParts: make([]partJSON, 0, len(t.calls))}
	for _, tc := range t.calls {
		j.ResponseParts = append(j.ResponseParts, partJSON{Kind: "toolCall", ToolCall: *tc})
	}
	if t.done {
		d := t.dur
		j.Duration, j.State = &d, "complete"
	}
	return j
}

// ChatState is a chat channel's snapshot state: the Host Protocol's
// ChatState.
type ChatState struct {
	Resource   string     `json:"resource"`
	Title      string     `json:"title"`
	Status     int        `json:"status"`
	ModifiedAt time.Time  `json:"modifiedAt"`
	Origin     any        `json:"origin"`
	Turns      []turnJSON `json:"turns"`
	ActiveTurn *turnJSON  `json:"activeTurn,omitempty"`
}

// chatSummary is the Host Protocol's ChatSummary of the session's chat.
type chatSummary struct {
	Resource   string    `json:"resource"`
	Title      string    `json:"title"`
	Status     int       `json:"status"`
	ModifiedAt time.Time `json:"modifiedAt"`
	Origin     any       `json:"origin"`
}

var userOrigin = map[string]string{"kind": "user"}

// status is the session's (and its chat's) SessionStatus.
func (s *session) status() int {
	switch {
	case len(s.pending) > 0:
		return statusInputNeeded
	case s.chat.active != nil && s.summary.Meta.AHP.State != "ended":
		return statusInProgress
	}
	return statusIdle
}

func (s *session) chatModified() time.Time {
	if s.chat.modified.IsZero() {
		return s.summary.CreatedAt
	}
	return s.chat.modified.UTC()
}

func (s *session) chatSummary() chatSummary {
	return chatSummary{Resource: s.chatURI, Title: s.id, Status: s.status(), ModifiedAt: s.chatModified(), Origin: userOrigin}
}

// chatState returns the chat's snapshot state.
func (s *session) chatState() ChatState {
	st := ChatState{Resource: s.chatURI, Title: s.id, Status: s.status(), ModifiedAt: s.chatModified(),
		Origin: userOrigin, Turns: make([]turnJSON, 0, len(s.chat.turns))}
	for _, t := range s.chat.turns {
		st.Turns = append(st.Turns, t.json())
	}
	if a := s.chat.active; a != nil {
		j := a.json()
		st.ActiveTurn = &j
	}
	return st
}

// cut shortens s to at most n bytes, on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// promptText returns the prompt of a pre_prompt event, if it has one.
func promptText(ev json.RawMessage) string {
	text := ""
	_ = jsonscan.ObjectValid(ev, func(k, v []byte) error {
		if string(k) == "payload" && jsonscan.Kind(v) == '{' {
			_ = jsonscan.ObjectValid(v, func(pk, pv []byte) error {
				if string(pk) == "prompt" {
					text, _ = jsonscan.String(pv)
				}
				return nil
			})
		}
		return nil
	})
	return text
}

// describeEffects writes what an action does in a line: "run rm -rf /;
// delete / (recursive)". It is the intention of a pending tool call.
func describeEffects(es []effects.Effect) string {
	var parts []string
	for i, e := range es {
		if i == 8 {
			parts = append(parts, "and "+itoa(int64(len(es)-i))+" more")
			break
		}
		var b strings.Builder
		b.WriteString(string(e.Kind))
		switch {
		case len(e.Argv) > 0:
			b.WriteString(" " + cut(strings.Join(e.Argv, " "), 200))
		case e.Program != "" && e.Path == "":
			b.WriteString(" " + e.Program)
		}
		if e.Path != "" && len(e.Argv) == 0 {
			b.WriteString(" " + e.Path)
		}
		if e.Dest != "" {
			b.WriteString(" → " + e.Dest)
		}
		if e.URL() != "" {
			b.WriteString(" " + e.URL())
		} else if e.Host() != "" {
			b.WriteString(" " + e.Host())
			if e.Port() != "" {
				b.WriteString(":" + e.Port())
			}
		}
		if e.Recursive {
			b.WriteString(" (recursive)")
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, "; ")
}
