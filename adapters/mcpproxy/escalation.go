package mcpproxy

import (
	"encoding/json"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// escalationWait is the metadata of a pre_action that tells the harness
// how long the proxy waits (metadata.escalation.wait_ms, see
// harness.EscalationHint): a rule with await_approval then answers block
// before the proxy's Timeout, instead of the proxy giving up on a request
// the harness still holds. Two seconds are left for that answer.
func escalationWait(timeout time.Duration) json.RawMessage {
	wait := timeout - 2*time.Second
	if wait < time.Millisecond {
		wait = time.Millisecond
	}
	b, _ := json.Marshal(map[string]any{"escalation": map[string]int64{"wait_ms": wait.Milliseconds()}})
	return b
}

// expiredApproval says whether a block is a held approval that nobody
// answered in time, with its id and rule.
func expiredApproval(d protocol.Decision) (id, rule string, expired bool) {
	var m struct {
		ID     string `json:"approval_id"`
		Status string `json:"approval_status"`
		Rule   string `json:"rule_id"`
	}
	if len(d.Metadata) == 0 || json.Unmarshal(d.Metadata, &m) != nil || m.ID == "" {
		return "", "", false
	}
	return m.ID, m.Rule, m.Status == "expired"
}
