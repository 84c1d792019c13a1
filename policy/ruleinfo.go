package policy

import (
	"sort"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/traits"

	"github.com/ahp-go/ahp/protocol"
)

// RuleInfo describes a compiled rule for people and agents who ask what
// applies (ahp/query "rules"). Condition is empty for a rule marked
// private: true, whose condition is never shown.
type RuleInfo struct {
	ID          string   `json:"id"`
	Description string   `json:"description,omitempty"`
	Pack        string   `json:"pack,omitempty"`
	Priority    int64    `json:"priority"`
	EventTypes  []string `json:"event_types,omitempty"` // empty: every event type
	Tools       []string `json:"tools,omitempty"`       // empty: any tool, or none
	Agents      []string `json:"agents,omitempty"`      // empty: any agent
	DepthMin    uint32   `json:"depth_min,omitempty"`
	DepthMax    *uint32  `json:"depth_max,omitempty"` // nil: no maximum
	Outcome     Outcome  `json:"outcome"`
	Condition   string   `json:"condition,omitempty"`
	// Private reports that the rule's condition is withheld.
	Private bool `json:"private,omitempty"`
}

// Outcome is what a rule decides when it matches.
type Outcome struct {
	Decision         protocol.DecisionKind `json:"decision"`
	Reason           string                `json:"reason,omitempty"`
	RetryAfterMs     uint64                `json:"retry_after_ms,omitempty"`
	EscalationTarget string                `json:"escalation_target,omitempty"`
	// Approval is set for an escalate that waits for a human.
	Approval *ApprovalInfo `json:"await_approval,omitempty"`
	// Modifies reports that the rule rewrites the payload (a CEL
	// expression, not shown).
	Modifies bool `json:"modifies_payload,omitempty"`
}

// ApprovalInfo is an ApprovalSpec as shown to agents.
type ApprovalInfo struct {
	TimeoutMs    int64                 `json:"timeout_ms"`
	Fallback     protocol.DecisionKind `json:"fallback"`
	ApproverRole string                `json:"approver_role,omitempty"`
}

// NewApprovalInfo returns the agent-facing form of a (nil when a is nil).
func NewApprovalInfo(a *ApprovalSpec) *ApprovalInfo {
	if a == nil {
		return nil
	}
	return &ApprovalInfo{TimeoutMs: a.Timeout.Milliseconds(), Fallback: a.Fallback, ApproverRole: a.ApproverRole}
}

// RuleFilter selects the rules that could apply to an event. Zero fields
// match everything.
type RuleFilter struct {
	EventType protocol.EventType
	ToolName  string
	AgentID   string
}

// Rules returns the rules that could decide events matching f (their
// targets allow it; their conditions are not evaluated), in evaluation
// order: highest priority first, then load order. Shadow rules, which never
// decide, are left out.
func (s *Set) Rules(f RuleFilter) []RuleInfo {
	var out []RuleInfo
	for _, r := range s.rules {
		if r.shadow {
			continue // a shadow rule never decides
		}
		if f.EventType != "" && !r.appliesToType(f.EventType) {
			continue
		}
		if f.ToolName != "" && r.tools != nil && !globAny(r.tools, f.ToolName) {
			continue
		}
		if f.AgentID != "" && r.agents != nil && !globAny(r.agents, f.AgentID) {
			continue
		}
		out = append(out, r.info())
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Priority > out[j].Priority })
	return out
}

func (r *rule) info() RuleInfo {
	ri := RuleInfo{
		ID: r.id, Description: r.description, Pack: r.pack, Priority: r.priority,
		Tools: append([]string(nil), r.tools...), Agents: append([]string(nil), r.agents...),
		DepthMin: r.depthMin, Private: r.private,
		Outcome: Outcome{
			Decision: r.decision.Kind, Reason: r.decision.Reason, RetryAfterMs: r.decision.RetryAfterMs,
			EscalationTarget: r.decision.EscalationTarget, Approval: NewApprovalInfo(r.approval),
			Modifies: r.modify != nil,
		},
	}
	for _, t := range r.eventTypes {
		ri.EventTypes = append(ri.EventTypes, string(t))
	}
	if r.depthMax != ^uint32(0) {
		m := r.depthMax
		ri.DepthMax = &m
	}
	if !r.private {
		ri.Condition = r.condText
	}
	return ri
}

// Param returns the value of config.NAME (a pack default or the
// operator's parameter) and whether it is set.
func (s *Set) Param(name string) (any, bool) {
	m, ok := s.config.(traits.Mapper)
	if !ok {
		return nil, false
	}
	v, found := m.Find(types.String(name))
	if !found {
		return nil, false
	}
	return v.Value(), true
}

// Default returns the decision that applies when no rule matches.
func (s *Set) Default() protocol.DecisionKind { return s.def.Decision.Kind }
