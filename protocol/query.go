package protocol

import (
	"encoding/json"
	"time"
)

// Query types answered by ahp serve (docs/query.md). They are this
// project's extension of ahp/query: the 2.4 wire leaves query_type and the
// answer free-form.
const (
	QueryCheck    = "check"    // what-if: the decision a blocking event would get now
	QueryBudget   = "budget"   // the session's counters and what is left of its limits
	QueryApproval = "approval" // an approval's status, or the session's pending approvals
	QueryRules    = "rules"    // the rules that could decide an event type or tool
	QueryPolicy   = "policy"   // the loaded policy: version, packs, last reload
)

// CheckQuery is the payload of a check query: the hypothetical event.
// EventType defaults to pre_action.
type CheckQuery struct {
	EventType EventType       `json:"event_type,omitempty"`
	Payload   json.RawMessage `json:"payload"`
	Depth     uint32          `json:"depth,omitempty"`
	Context   *EventContext   `json:"context,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// CheckAnswer is the answer to a check query.
type CheckAnswer struct {
	// EventType is the event type that was checked.
	EventType EventType `json:"event_type"`
	// Decision is the decision the event would get now, as the event itself
	// would get it (secrets in a modified payload shown as redaction
	// markers). An escalate that would wait for a human is reported as the
	// escalate, and Approval says what it would wait for.
	Decision Decision `json:"decision"`
	// RuleID is the rule that would decide: "" for the default outcome,
	// "descriptor" for a refusal by the agent's harness descriptor.
	RuleID string `json:"rule_id"`
	// Pack is the built-in pack of the rule, if any.
	Pack string `json:"pack,omitempty"`
	// Approval is set when the event would wait for a human approval.
	Approval *ApprovalSpecInfo `json:"await_approval,omitempty"`
	// PolicyVersion is the version of the policy that answered.
	PolicyVersion string `json:"policy_version"`
	// InterpretedAs is the event a free-text question was read as.
	InterpretedAs *InterpretedEvent `json:"interpreted_as,omitempty"`
}

// InterpretedEvent is the event a free-text question was read as.
type InterpretedEvent struct {
	EventType EventType       `json:"event_type"`
	Payload   json.RawMessage `json:"payload"`
}

// ApprovalSpecInfo says what an escalation waits for.
type ApprovalSpecInfo struct {
	TimeoutMs int64 `json:"timeout_ms"`
	// Fallback is the decision when nobody answers in time.
	Fallback     DecisionKind `json:"fallback"`
	ApproverRole string       `json:"approver_role,omitempty"`
}

// BudgetAnswer is the answer to a budget query.
type BudgetAnswer struct {
	SessionID string `json:"session_id"`
	// Counters are the session's counters as policies read them.
	Counters SessionCounters `json:"counters"`
	// Limits are the limits loaded rules set on the counters, by counter
	// name (actions, tokens, errors); empty when none is set.
	Limits map[string]BudgetLimit `json:"limits"`
	// QueryRate is the session's ahp/query rate limit.
	QueryRate RateLimitInfo `json:"query_rate"`
}

// SessionCounters are the harness's counters of a session (CEL: session).
type SessionCounters struct {
	Actions     int64    `json:"actions"`
	Tokens      int64    `json:"tokens"`
	Errors      int64    `json:"errors"`
	RecentTools []string `json:"recent_tools"`
	RunStatus   string   `json:"run_status"`
}

// BudgetLimit is one limit on a session counter.
type BudgetLimit struct {
	Limit     int64  `json:"limit"`
	Used      int64  `json:"used"`
	Remaining int64  `json:"remaining"`
	RuleID    string `json:"rule_id"`
	// Then is the decision once Remaining is 0: block or defer.
	Then DecisionKind `json:"then"`
}

// RateLimitInfo is a token-bucket limit and what is left of it.
type RateLimitInfo struct {
	PerSecond float64 `json:"per_second"`
	Burst     int     `json:"burst"`
	Available int     `json:"available"`
}

// ApprovalQuery is the payload of an approval query; an empty ApprovalID
// asks for the session's pending approvals.
type ApprovalQuery struct {
	ApprovalID string `json:"approval_id,omitempty"`
}

// ApprovalAnswer is the answer to an approval query about one approval.
type ApprovalAnswer struct {
	ApprovalID string `json:"approval_id"`
	// Status is pending, approved, denied or expired.
	Status    string `json:"status"`
	SessionID string `json:"session_id"`
	RuleID    string `json:"rule_id"`
	// Reason is why approval was needed.
	Reason  string    `json:"reason"`
	Created time.Time `json:"created"`
	// Waiting reports that a request is still waiting on the approval.
	Waiting        bool       `json:"waiting"`
	DecidedBy      string     `json:"decided_by,omitempty"`
	DecidedAt      *time.Time `json:"decided_at,omitempty"`
	DecisionReason string     `json:"decision_reason,omitempty"`
}

// PendingApprovals is the answer to an approval query without an id.
type PendingApprovals struct {
	SessionID string           `json:"session_id"`
	Pending   []ApprovalAnswer `json:"pending"`
}

// RulesQuery is the payload of a rules query; empty fields match all.
type RulesQuery struct {
	EventType EventType `json:"event_type,omitempty"`
	ToolName  string    `json:"tool_name,omitempty"`
}

// RulesAnswer is the answer to a rules query.
type RulesAnswer struct {
	// Rules could decide (their targets fit; conditions not evaluated), in
	// evaluation order. A private rule's condition is withheld.
	Rules []RuleInfo `json:"rules"`
	// Total is how many rules fit; more than len(Rules) when truncated.
	Total int `json:"total"`
	// Default is the decision when no rule matches.
	Default       DecisionKind `json:"default"`
	PolicyVersion string       `json:"policy_version"`
}

// RuleInfo describes a policy rule to an agent.
type RuleInfo struct {
	ID          string      `json:"id"`
	Description string      `json:"description,omitempty"`
	Pack        string      `json:"pack,omitempty"`
	Priority    int64       `json:"priority"`
	EventTypes  []string    `json:"event_types,omitempty"`
	Tools       []string    `json:"tools,omitempty"`
	Agents      []string    `json:"agents,omitempty"`
	DepthMin    uint32      `json:"depth_min,omitempty"`
	DepthMax    *uint32     `json:"depth_max,omitempty"`
	Outcome     RuleOutcome `json:"outcome"`
	// Condition is the rule's CEL condition, empty for a private rule.
	Condition string `json:"condition,omitempty"`
	Private   bool   `json:"private,omitempty"`
}

// RuleOutcome is what a rule decides when it matches.
type RuleOutcome struct {
	Decision         DecisionKind      `json:"decision"`
	Reason           string            `json:"reason,omitempty"`
	RetryAfterMs     uint64            `json:"retry_after_ms,omitempty"`
	EscalationTarget string            `json:"escalation_target,omitempty"`
	Approval         *ApprovalSpecInfo `json:"await_approval,omitempty"`
	// Modifies reports that the rule rewrites the payload.
	Modifies bool `json:"modifies_payload,omitempty"`
}

// PolicyAnswer is the answer to a policy query.
type PolicyAnswer struct {
	Version string   `json:"version"`
	Packs   []string `json:"packs"`
	Rules   int      `json:"rules"`
	// Default is the decision when no rule matches.
	Default DecisionKind `json:"default"`
	// LoadedAt is when this policy was loaded (at start or by a reload).
	LoadedAt time.Time `json:"loaded_at"`
	// Reloads counts the successful reloads since the harness started.
	Reloads        int64    `json:"reloads"`
	DescriptorHash string   `json:"descriptor_hash,omitempty"`
	QueryTypes     []string `json:"query_types"`
}
