package harness

import (
	"encoding/json"
	"time"
)

// EscalationHint is what an agent may say, in an event's
// metadata.escalation, about how it takes an escalation that a rule with
// await_approval would hold for a human:
//
//	"metadata": {"escalation": {"asks_user": true}}
//	"metadata": {"escalation": {"wait_ms": 48000}}
//
// asks_user: the agent puts the question to its own user (Claude Code's
// permission prompt), so the harness records and answers escalate at once
// instead of holding the request. wait_ms: the agent stops waiting after
// that long, so a held request is answered block (never the rule's
// fallback) by then, while the agent still listens, instead of being cut
// off by the agent's own timeout. Neither can turn an escalation into an
// allow: only an approver can.
type EscalationHint struct {
	AsksUser bool  `json:"asks_user,omitempty"`
	WaitMs   int64 `json:"wait_ms,omitempty"`
}

// escalationHint reads metadata.escalation; anything unreadable is no hint.
func escalationHint(meta json.RawMessage) EscalationHint {
	var m struct {
		Escalation EscalationHint `json:"escalation"`
	}
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil {
		return EscalationHint{}
	}
	if m.Escalation.WaitMs < 0 {
		m.Escalation.WaitMs = 0
	}
	return m.Escalation
}

// wait is the agent's longest wait, 0 when it did not say.
func (e EscalationHint) wait() time.Duration {
	const most = int64(365 * 24 * time.Hour / time.Millisecond)
	if e.WaitMs <= 0 || e.WaitMs > most {
		return 0
	}
	return time.Duration(e.WaitMs) * time.Millisecond
}
