package protocol

import (
	"encoding/json"
	"fmt"
)

// EventType names a control point. Its rules (blocking or not, batchable or
// not, which decision shape answers it) come from spec section 4.
type EventType string

// The event types of AHP 2.4.
const (
	EventHandshake         EventType = "handshake"
	EventQuery             EventType = "query"
	EventPreAction         EventType = "pre_action"
	EventPrePrompt         EventType = "pre_prompt"
	EventPostAction        EventType = "post_action"
	EventPostResponse      EventType = "post_response"
	EventSessionStart      EventType = "session_start"
	EventSessionEnd        EventType = "session_end"
	EventError             EventType = "error"
	EventHeartbeat         EventType = "heartbeat"
	EventSuccess           EventType = "success"
	EventRunLifecycle      EventType = "run_lifecycle"
	EventTaskList          EventType = "task_list"
	EventVerification      EventType = "verification"
	EventIdle              EventType = "idle"
	EventIntentDetection   EventType = "intent_detection"
	EventContextPerception EventType = "context_perception"
	EventMemoryRecall      EventType = "memory_recall"
	EventPlanning          EventType = "planning"
	EventReasoning         EventType = "reasoning"
	EventRateLimit         EventType = "rate_limit"
	EventConfirmation      EventType = "confirmation"
)

// AllEventTypes lists every event type of AHP 2.4 in spec order.
var AllEventTypes = []EventType{
	EventHandshake, EventQuery, EventPreAction, EventPrePrompt, EventPostAction,
	EventPostResponse, EventSessionStart, EventSessionEnd, EventError, EventHeartbeat,
	EventSuccess, EventRunLifecycle, EventTaskList, EventVerification, EventIdle,
	EventIntentDetection, EventContextPerception, EventMemoryRecall, EventPlanning,
	EventReasoning, EventRateLimit, EventConfirmation,
}

const (
	flagKnown = 1 << iota
	flagBlocking
	flagBatchable
	flagTyped
)

func (t EventType) flags() uint8 {
	switch t {
	case EventHandshake, EventQuery:
		return flagKnown | flagBlocking
	case EventPreAction, EventPrePrompt:
		return flagKnown | flagBlocking | flagBatchable
	case EventPostAction, EventPostResponse, EventSessionStart, EventSessionEnd,
		EventError, EventHeartbeat, EventSuccess, EventRunLifecycle, EventTaskList,
		EventVerification:
		return flagKnown | flagBatchable
	case EventIdle, EventIntentDetection, EventContextPerception, EventMemoryRecall,
		EventPlanning, EventReasoning, EventRateLimit, EventConfirmation:
		return flagKnown | flagBlocking | flagTyped
	}
	return 0
}

// Known reports whether t is one of the event types of AHP 2.4.
func (t EventType) Known() bool { return t.flags()&flagKnown != 0 }

// Blocking reports whether t is sent as a request that waits for a decision.
// Every other known type is fire-and-forget and is sent as a notification.
func (t EventType) Blocking() bool { return t.flags()&flagBlocking != 0 }

// Batchable reports whether t may travel inside an ahp/batch request.
func (t EventType) Batchable() bool { return t.flags()&flagBatchable != 0 }

// Typed reports whether t is answered by a specialized decision (IdleDecision,
// PlanningDecision, ...) rather than the generic Decision.
func (t EventType) Typed() bool { return t.flags()&flagTyped != 0 }

// RunContract reports whether t is one of the run contract events whose
// payloads are validated even when sent as notifications.
func (t EventType) RunContract() bool {
	return t == EventRunLifecycle || t == EventTaskList || t == EventVerification
}

// UnmarshalJSON accepts only the event types of AHP 2.4.
func (t *EventType) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("event_type: %w", err)
	}
	if !EventType(s).Known() {
		return fmt.Errorf("event_type: unknown event type %.64q", s)
	}
	*t = EventType(s)
	return nil
}

// Event is the envelope of every event: the params of ahp/event and each
// item of a batch. Payload stays raw JSON until a handler needs it.
type Event struct {
	EventType EventType       `json:"event_type"`
	SessionID string          `json:"session_id"`
	AgentID   string          `json:"agent_id"`
	Timestamp string          `json:"timestamp"`
	Depth     uint32          `json:"depth"`
	Payload   json.RawMessage `json:"payload"`
	Context   *EventContext   `json:"context,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// Validate checks the envelope fields that have no zero value on the wire.
func (e *Event) Validate() error {
	if !e.EventType.Known() {
		if e.EventType == "" {
			return fmt.Errorf("missing field event_type")
		}
		return fmt.Errorf("event_type: unknown event type %.64q", e.EventType)
	}
	if len(e.Payload) == 0 {
		return fmt.Errorf("missing field payload")
	}
	return nil
}

// EventContext is optional context an agent sends along with an event.
type EventContext struct {
	RecentFacts   []Fact          `json:"recent_facts,omitempty"`
	MemorySummary *MemorySummary  `json:"memory_summary,omitempty"`
	SessionStats  *SessionStats   `json:"session_stats,omitempty"`
	CurrentTask   string          `json:"current_task,omitempty"`
	Capabilities  json.RawMessage `json:"capabilities,omitempty"`
}

// Fact is one piece of knowledge with its source and a confidence in [0,1].
type Fact struct {
	Content    string  `json:"content"`
	Source     string  `json:"source"`
	Confidence float32 `json:"confidence"`
}

// UnmarshalJSON checks the required fields.
func (f *Fact) UnmarshalJSON(b []byte) error {
	type plain Fact
	return strictDecode(b, "fact", []string{"content", "source", "confidence"}, (*plain)(f))
}

// MemorySummary summarizes an agent's memory.
type MemorySummary struct {
	MemoryType   string   `json:"memory_type"`
	TotalItems   uint64   `json:"total_items"`
	RecentTopics []string `json:"recent_topics"`
}

// UnmarshalJSON checks the required fields.
func (m *MemorySummary) UnmarshalJSON(b []byte) error {
	type plain MemorySummary
	return strictDecode(b, "memory_summary", []string{"memory_type", "total_items", "recent_topics"}, (*plain)(m))
}

// MarshalJSON writes recent_topics as [] when empty.
func (m MemorySummary) MarshalJSON() ([]byte, error) {
	type plain MemorySummary
	m.RecentTopics = emptyIfNil(m.RecentTopics)
	return json.Marshal(plain(m))
}

// SessionStats are an agent's own counters for the session.
type SessionStats struct {
	TotalActions uint64 `json:"total_actions"`
	TotalTokens  int32  `json:"total_tokens"`
	DurationMs   uint64 `json:"duration_ms"`
	ErrorCount   uint64 `json:"error_count"`
}

// UnmarshalJSON checks the required fields.
func (s *SessionStats) UnmarshalJSON(b []byte) error {
	type plain SessionStats
	return strictDecode(b, "session_stats", []string{"total_actions", "total_tokens", "duration_ms", "error_count"}, (*plain)(s))
}

// BatchRequest is the params of ahp/batch.
type BatchRequest struct {
	Events []Event `json:"events"`
}

// UnmarshalJSON checks the required fields; an error names the index of
// the bad event.
func (r *BatchRequest) UnmarshalJSON(b []byte) error {
	m, err := members(b, "batch")
	if err != nil {
		return err
	}
	if err := checkMembers(m, "batch", []string{"events"}, nil); err != nil {
		return err
	}
	events, err := decodeList[Event](m["events"], "batch.events")
	if err != nil {
		return err
	}
	*r = BatchRequest{Events: events}
	return nil
}

// MarshalJSON writes events as [] when empty.
func (r BatchRequest) MarshalJSON() ([]byte, error) {
	type plain BatchRequest
	r.Events = emptyIfNil(r.Events)
	return json.Marshal(plain(r))
}

// BatchResponse is the result of ahp/batch: one decision per event, in order.
type BatchResponse struct {
	Decisions []Decision `json:"decisions"`
}

// UnmarshalJSON checks the required fields; an error names the index of
// the bad decision.
func (r *BatchResponse) UnmarshalJSON(b []byte) error {
	m, err := members(b, "batch response")
	if err != nil {
		return err
	}
	if err := checkMembers(m, "batch response", []string{"decisions"}, nil); err != nil {
		return err
	}
	decisions, err := decodeList[Decision](m["decisions"], "batch response.decisions")
	if err != nil {
		return err
	}
	*r = BatchResponse{Decisions: decisions}
	return nil
}

// MarshalJSON writes decisions as [] when empty.
func (r BatchResponse) MarshalJSON() ([]byte, error) {
	type plain BatchResponse
	r.Decisions = emptyIfNil(r.Decisions)
	return json.Marshal(plain(r))
}
