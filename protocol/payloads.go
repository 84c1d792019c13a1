package protocol

import (
	"encoding/json"
)

// IdlePayload is the payload of an idle event.
type IdlePayload struct {
	IdleDurationMs  uint64 `json:"idle_duration_ms"`
	IdleReason      string `json:"idle_reason"`
	LastEventType   string `json:"last_event_type,omitempty"`
	SuggestedAction string `json:"suggested_action,omitempty"`
}

// UnmarshalJSON checks the required fields.
func (p *IdlePayload) UnmarshalJSON(b []byte) error {
	type plain IdlePayload
	return strictDecode(b, "idle", []string{"idle_duration_ms", "idle_reason"}, (*plain)(p))
}

// HeartbeatPayload is the payload of a heartbeat event.
type HeartbeatPayload struct {
	UptimeMs             uint64          `json:"uptime_ms"`
	TotalEventsProcessed uint64          `json:"total_events_processed"`
	CurrentState         string          `json:"current_state"`
	CPUPercent           *float32        `json:"cpu_percent,omitempty"`
	MemoryBytes          *uint64         `json:"memory_bytes,omitempty"`
	ActiveTools          json.RawMessage `json:"active_tools,omitempty"`
	PendingActions       json.RawMessage `json:"pending_actions,omitempty"`
	QueueDepth           *uint64         `json:"queue_depth,omitempty"`
	TokensUsed           *int32          `json:"tokens_used,omitempty"`
}

// UnmarshalJSON checks the required fields.
func (p *HeartbeatPayload) UnmarshalJSON(b []byte) error {
	type plain HeartbeatPayload
	return strictDecode(b, "heartbeat", []string{"uptime_ms", "total_events_processed", "current_state"}, (*plain)(p))
}

// IntentDetectionPayload is the payload of an intent_detection event.
type IntentDetectionPayload struct {
	SessionID    string `json:"session_id"`
	Prompt       string `json:"prompt"`
	Workspace    string `json:"workspace"`
	LanguageHint string `json:"language_hint,omitempty"`
}

// UnmarshalJSON checks the required fields.
func (p *IntentDetectionPayload) UnmarshalJSON(b []byte) error {
	type plain IntentDetectionPayload
	return strictDecode(b, "intent_detection", []string{"session_id", "prompt", "workspace"}, (*plain)(p))
}

// ContextPerceptionPayload is the payload of a context_perception event.
// Absent optional enums take the 2.4 defaults (general, any, normal, static)
// and are always written.
type ContextPerceptionPayload struct {
	SessionID         string                 `json:"session_id"`
	Intent            PerceptionIntent       `json:"intent"`
	Target            PerceptionTarget       `json:"target"`
	Domain            PerceptionDomain       `json:"domain"`
	PreferredModality PerceptionModality     `json:"preferred_modality"`
	Urgency           PerceptionUrgency      `json:"urgency"`
	Freshness         PerceptionFreshness    `json:"freshness"`
	Context           PerceptionContext      `json:"context"`
	Constraints       *PerceptionConstraints `json:"constraints,omitempty"`
	Metadata          json.RawMessage        `json:"metadata,omitempty"`
}

// UnmarshalJSON checks the required fields and fills the defaults.
func (p *ContextPerceptionPayload) UnmarshalJSON(b []byte) error {
	type plain ContextPerceptionPayload
	var v plain
	if err := strictDecode(b, "context_perception", []string{"session_id", "intent", "target", "context"}, &v); err != nil {
		return err
	}
	if v.Domain == "" {
		v.Domain = "general"
	}
	if v.PreferredModality == "" {
		v.PreferredModality = "any"
	}
	if v.Urgency == "" {
		v.Urgency = "normal"
	}
	if v.Freshness == "" {
		v.Freshness = "static"
	}
	v.Metadata = nullToNil(v.Metadata)
	*p = ContextPerceptionPayload(v)
	return nil
}

// MarshalJSON writes the payload with the 2.4 defaults in place of empty
// optional enums, so that what it writes always decodes.
func (p ContextPerceptionPayload) MarshalJSON() ([]byte, error) {
	type plain ContextPerceptionPayload
	if p.Domain == "" {
		p.Domain = "general"
	}
	if p.PreferredModality == "" {
		p.PreferredModality = "any"
	}
	if p.Urgency == "" {
		p.Urgency = "normal"
	}
	if p.Freshness == "" {
		p.Freshness = "static"
	}
	return json.Marshal(plain(p))
}

// PerceptionContext is where an agent works and what it is doing.
type PerceptionContext struct {
	Workspace       string        `json:"workspace"`
	CurrentTask     string        `json:"current_task,omitempty"`
	Query           string        `json:"query,omitempty"`
	RelevantHistory []HistoryItem `json:"relevant_history,omitempty"`
}

// UnmarshalJSON checks the required fields.
func (p *PerceptionContext) UnmarshalJSON(b []byte) error {
	type plain PerceptionContext
	return strictDecode(b, "context", []string{"workspace"}, (*plain)(p))
}

// HistoryItem is one item of relevant history.
type HistoryItem struct {
	ItemType  string `json:"item_type"`
	Content   string `json:"content"`
	Timestamp int64  `json:"timestamp"`
}

// UnmarshalJSON checks the required fields.
func (h *HistoryItem) UnmarshalJSON(b []byte) error {
	type plain HistoryItem
	return strictDecode(b, "relevant_history", []string{"item_type", "content", "timestamp"}, (*plain)(h))
}

// PerceptionConstraints bound what the harness returns.
type PerceptionConstraints struct {
	MaxResults       *uint64 `json:"max_results"`
	MaxContextLength *uint64 `json:"max_context_length"`
	IncludeSources   bool    `json:"include_sources"`
}

// UnmarshalJSON defaults include_sources to true.
func (c *PerceptionConstraints) UnmarshalJSON(b []byte) error {
	type plain PerceptionConstraints
	v := plain{IncludeSources: true}
	if err := json.Unmarshal(b, &v); err != nil {
		return prefixErr("constraints", err)
	}
	*c = PerceptionConstraints(v)
	return nil
}

// MemoryRecallPayload is the payload of a memory_recall event.
type MemoryRecallPayload struct {
	SessionID        string `json:"session_id"`
	Query            string `json:"query"`
	MemoryType       string `json:"memory_type"`
	MaxResults       uint64 `json:"max_results"`
	WorkingDirectory string `json:"working_directory"`
}

// UnmarshalJSON checks the required fields.
func (p *MemoryRecallPayload) UnmarshalJSON(b []byte) error {
	type plain MemoryRecallPayload
	return strictDecode(b, "memory_recall", []string{"session_id", "query", "memory_type", "max_results", "working_directory"}, (*plain)(p))
}

// PlanningPayload is the payload of a planning event.
type PlanningPayload struct {
	SessionID           string             `json:"session_id"`
	TaskDescription     string             `json:"task_description"`
	AvailableStrategies []PlanningStrategy `json:"available_strategies"`
	Constraints         json.RawMessage    `json:"constraints,omitempty"`
}

// UnmarshalJSON checks the required fields.
func (p *PlanningPayload) UnmarshalJSON(b []byte) error {
	type plain PlanningPayload
	if err := strictDecode(b, "planning", []string{"session_id", "task_description", "available_strategies"}, (*plain)(p)); err != nil {
		return err
	}
	p.Constraints = nullToNil(p.Constraints)
	return nil
}

// MarshalJSON writes available_strategies as [] when empty.
func (p PlanningPayload) MarshalJSON() ([]byte, error) {
	type plain PlanningPayload
	p.AvailableStrategies = emptyIfNil(p.AvailableStrategies)
	return json.Marshal(plain(p))
}

// ReasoningPayload is the payload of a reasoning event.
type ReasoningPayload struct {
	SessionID        string        `json:"session_id"`
	ReasoningType    ReasoningType `json:"reasoning_type"`
	ProblemStatement string        `json:"problem_statement"`
	Hints            []string      `json:"hints,omitempty"`
}

// UnmarshalJSON checks the required fields.
func (p *ReasoningPayload) UnmarshalJSON(b []byte) error {
	type plain ReasoningPayload
	return strictDecode(b, "reasoning", []string{"session_id", "reasoning_type", "problem_statement"}, (*plain)(p))
}

// SuccessPayload is the payload of a success event.
type SuccessPayload struct {
	SessionID     string `json:"session_id"`
	ActionType    string `json:"action_type"`
	ActionSummary string `json:"action_summary"`
	DurationMs    uint64 `json:"duration_ms"`
}

// UnmarshalJSON checks the required fields.
func (p *SuccessPayload) UnmarshalJSON(b []byte) error {
	type plain SuccessPayload
	return strictDecode(b, "success", []string{"session_id", "action_type", "action_summary", "duration_ms"}, (*plain)(p))
}

// RateLimitPayload is the payload of a rate_limit event.
type RateLimitPayload struct {
	SessionID    string        `json:"session_id"`
	LimitType    RateLimitType `json:"limit_type"`
	RetryAfterMs uint64        `json:"retry_after_ms"`
	CurrentUsage string        `json:"current_usage"`
}

// UnmarshalJSON checks the required fields.
func (p *RateLimitPayload) UnmarshalJSON(b []byte) error {
	type plain RateLimitPayload
	return strictDecode(b, "rate_limit", []string{"session_id", "limit_type", "retry_after_ms", "current_usage"}, (*plain)(p))
}

// ConfirmationPayload is the payload of a confirmation event.
type ConfirmationPayload struct {
	SessionID        string           `json:"session_id"`
	ConfirmationType ConfirmationType `json:"confirmation_type"`
	Message          string           `json:"message"`
	Options          []string         `json:"options,omitempty"`
}

// UnmarshalJSON checks the required fields.
func (p *ConfirmationPayload) UnmarshalJSON(b []byte) error {
	type plain ConfirmationPayload
	return strictDecode(b, "confirmation", []string{"session_id", "confirmation_type", "message"}, (*plain)(p))
}

// ActionPayload is the conventional payload of pre_action and post_action.
// It is not validated: agents may send any object.
type ActionPayload struct {
	ActionType string          `json:"action_type,omitempty"`
	ToolName   string          `json:"tool_name"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
}
