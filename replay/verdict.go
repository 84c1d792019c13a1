package replay

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/ahp-go/ahp/internal/jsonscan"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// Verdict is one decision as replay compares it.
type Verdict struct {
	// Decision is what the policy decided. For generic events (pre_action,
	// pre_prompt) it is the decision kind: allow, block, modify, defer or
	// escalate. For typed events it is block when the policy refused the
	// event and allow when it did not.
	Decision string `json:"decision"`
	// RuleID is the rule that decided, "" for the default outcome.
	RuleID string `json:"rule_id"`
	// Answer is what the agent got, when that differs from Decision: the
	// typed decision (skip, reject, defer, ...) or the result of a human
	// approval ("approval denied: block").
	Answer string `json:"answer,omitempty"`
	// Reason is the decision's reason, when it has one.
	Reason string `json:"reason,omitempty"`
	// Error says why the evaluation failed (a fail-closed block).
	Error string `json:"error,omitempty"`
	// Guidance lists the ids of the operator's guidance entries that
	// applied to a planning or reasoning event (policy "guidance:").
	Guidance []string `json:"guidance,omitempty"`
}

// refusal is the typed decision with which the harness answers a policy
// block, per typed event type.
var refusal = map[protocol.EventType]string{
	protocol.EventIdle:              "defer",
	protocol.EventIntentDetection:   "block",
	protocol.EventContextPerception: "block",
	protocol.EventMemoryRecall:      "block",
	protocol.EventPlanning:          "block",
	protocol.EventReasoning:         "block",
	protocol.EventRateLimit:         "skip",
	protocol.EventConfirmation:      "reject",
}

// pendingReason is the reason of an idle deferred because approvals wait.
var pendingReason = regexp.MustCompile(`^[0-9]+ approval\(s\) pending$`)

// refusedOutsidePolicy reports whether a recorded typed refusal came from
// the harness itself rather than from the policy: an idle deferred while
// approvals waited, context or memory that could not be read, a
// confirmation a human rejected. The reasons are the harness's own texts.
func refusedOutsidePolicy(t protocol.EventType, reason string) bool {
	switch t {
	case protocol.EventIdle:
		return pendingReason.MatchString(reason)
	case protocol.EventContextPerception:
		return strings.HasPrefix(reason, "context could not be gathered: ")
	case protocol.EventMemoryRecall:
		return strings.HasPrefix(reason, "memory could not be searched: ")
	case protocol.EventConfirmation:
		return strings.HasPrefix(reason, "denied by ")
	}
	return false
}

// recordedDecision is the part of a recorded decision replay reads.
type recordedDecision struct {
	Reason         string   // "reason"
	ApprovalStatus string   // "metadata"."approval_status"
	Guidance       []string // "guidance": the guidance ids the harness recorded
}

// parseRecorded reads a recorded decision; what it cannot read stays "".
func parseRecorded(d json.RawMessage) recordedDecision {
	var rd recordedDecision
	_ = jsonscan.Object(d, func(k, v []byte) error {
		switch string(k) {
		case "reason":
			rd.Reason, _ = jsonscan.String(v)
		case "guidance":
			var ids []string
			if json.Unmarshal(v, &ids) == nil && len(ids) <= 64 {
				rd.Guidance = ids
			}
		case "metadata":
			if jsonscan.Kind(v) == '{' {
				_ = jsonscan.ObjectValid(v, func(k, v []byte) error {
					if string(k) == "approval_status" {
						rd.ApprovalStatus, _ = jsonscan.String(v)
					}
					return nil
				})
			}
		}
		return nil
	})
	return rd
}

// approvalStorePrefix starts the audit error of an escalation whose
// approval could not be stored (the harness then blocks).
const approvalStorePrefix = "approval store: "

// oldVerdict derives what the recorded policy decided. human reports
// whether the event went to a human approval (whose answer is the
// recorded outcome).
func oldVerdict(rec *store.AuditRecord, t protocol.EventType) (v Verdict, human bool) {
	v = Verdict{Decision: rec.Outcome, RuleID: rec.RuleID, Error: rec.Error}
	if t.Typed() {
		v.Answer = rec.Outcome
		v.Decision = string(protocol.DecisionAllow)
		if tag, ok := refusal[t]; ok && rec.Outcome == tag {
			v.Reason = parseRecorded(rec.Decision).Reason
			if !refusedOutsidePolicy(t, v.Reason) {
				v.Decision = string(protocol.DecisionBlock)
			}
		}
		return v, false
	}
	switch {
	case bytes.Contains(rec.Decision, []byte(`"approval_status"`)):
		rd := parseRecorded(rec.Decision)
		if rd.ApprovalStatus != "" {
			v.Decision = string(protocol.DecisionEscalate)
			v.Answer = "approval " + rd.ApprovalStatus + ": " + rec.Outcome
			return v, true
		}
	case strings.HasPrefix(rec.Error, approvalStorePrefix):
		v.Decision = string(protocol.DecisionEscalate)
		v.Answer = "approval not stored: " + rec.Outcome
		return v, false
	}
	return v, false
}

// newVerdict turns the new policy's result into a Verdict.
func newVerdict(res *policy.Result, t protocol.EventType) Verdict {
	v := Verdict{Decision: string(res.Decision.Kind), RuleID: res.RuleID, Reason: res.Decision.Reason}
	if res.Err != nil {
		v.Error = res.Err.Error()
	}
	if t.Typed() {
		k := res.Decision.Kind
		if k == protocol.DecisionBlock || (t == protocol.EventIdle && k == protocol.DecisionDefer) {
			v.Decision, v.Answer = string(protocol.DecisionBlock), refusal[t]
		} else {
			v.Decision, v.Reason = string(protocol.DecisionAllow), ""
		}
		return v
	}
	if res.Approval != nil && res.Decision.Kind == protocol.DecisionEscalate {
		v.Answer = "awaits approval"
	}
	return v
}
