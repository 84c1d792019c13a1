package main

import (
	"encoding/json"
	"fmt"
	"time"
)

// withEscalationWait adds to an event's metadata how long ahp send waits
// (metadata.escalation.wait_ms, --timeout less 2 s; see
// harness.EscalationHint), so that a rule with await_approval answers
// block while ahp send still listens instead of ahp send giving up first.
// Metadata given with --metadata that already says it is kept as it is.
func withEscalationWait(meta json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	wait := timeout - 2*time.Second
	if wait < time.Millisecond {
		wait = time.Millisecond
	}
	m := map[string]json.RawMessage{}
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &m); err != nil || m == nil {
			return nil, fmt.Errorf("--metadata must be a JSON object")
		}
		if _, set := m["escalation"]; set {
			return meta, nil
		}
	}
	m["escalation"] = json.RawMessage(fmt.Sprintf(`{"wait_ms":%d}`, wait.Milliseconds()))
	return json.Marshal(m)
}
