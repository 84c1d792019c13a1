package policy

import (
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// Input is everything a policy may look at for one event.
type Input struct {
	// Event is the event to decide on. Its payload is decoded lazily, and
	// only the parts that rules read.
	Event *protocol.Event
	// Principal is the authenticated caller (the agent's credentials).
	Principal Principal
	// Session holds the harness's own counters for the event's session.
	Session SessionState
	// Transport names the transport the event arrived on (stdio, http, ...).
	Transport string
}

// Principal is the authenticated identity behind an event (CEL: principal).
type Principal struct {
	ID    string   `json:"id" yaml:"id"`
	Roles []string `json:"roles" yaml:"roles"`
}

// SessionState is what the harness counted for a session so far
// (CEL: session). The harness updates it; the engine only reads it.
type SessionState struct {
	Actions     int64    `json:"actions" yaml:"actions"`
	Tokens      int64    `json:"tokens" yaml:"tokens"`
	Errors      int64    `json:"errors" yaml:"errors"`
	RecentTools []string `json:"recent_tools" yaml:"recent_tools"`
	RunStatus   string   `json:"run_status" yaml:"run_status"`
}

// Result is the engine's answer for one event.
type Result struct {
	// Decision is the generic decision to send. Its Metadata holds
	// {"rule_id": ..., "policy_version": ...} (rule_id is absent when no rule
	// matched). The wire format carries metadata only for allow, modify and
	// block.
	Decision protocol.Decision
	// RuleID is the id of the rule that made the decision, "" for the
	// default outcome.
	RuleID string
	// Pack is the built-in pack the rule came from, "" for policy files.
	Pack string
	// Matched reports whether a rule made the decision (false: the default
	// outcome applied).
	Matched bool
	// Approval is set when the decision is an escalate whose rule asks to
	// wait for a human approval. It is shared and must not be modified.
	Approval *ApprovalSpec
	// PayloadSecrets says whether a rule (the secrets pack) scanned the
	// whole payload with the built-in secret detectors, and what it found,
	// so that the harness's redaction need not scan a clean payload again.
	PayloadSecrets SecretScan
	// Err is the evaluation error behind a fail-closed block, nil otherwise.
	// It may quote parts of the event, so log it with care.
	Err error
	// Shadow lists what the shadow rules that matched would have decided
	// (at most MaxShadowMatches, in priority order); nil when none did.
	// They never change Decision.
	Shadow []ShadowMatch
}

// ApprovalSpec says how to wait for a human on an escalate decision.
type ApprovalSpec struct {
	// Timeout is how long to wait for an answer.
	Timeout time.Duration
	// Fallback is the decision when nobody answers in time: allow or block.
	Fallback protocol.DecisionKind
	// ApproverRole is the principal role allowed to answer, "" for any.
	ApproverRole string
}
