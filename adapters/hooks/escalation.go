package hooks

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// hintEscalation tells the harness, in metadata.escalation, how this hook
// takes an escalation that a rule with await_approval would hold for a
// human (harness.EscalationHint): a Claude Code tool call in a mode where
// "ask" prompts the user gets the escalation at once (asks_user); any
// other call says how long the hook can wait (wait_ms), so that the
// harness answers before the hook has to give up.
func hintEscalation(ctx context.Context, t Tool, kind Kind, in *Input, ev *protocol.Event, opts Options, now time.Time) {
	hint := map[string]any{}
	switch dl, ok := ctx.Deadline(); {
	case t == ClaudeCode && kind == KindPreTool && askModes[in.PermissionMode]:
		hint["asks_user"] = true
	case ok:
		// Room for the harness to expire the approval, record the block
		// and send it before the hook's own deadline.
		wait := dl.Sub(now) - 2*margin(opts)
		if wait < time.Millisecond {
			wait = time.Millisecond
		}
		hint["wait_ms"] = wait.Milliseconds()
	default:
		return
	}
	var meta map[string]any
	if json.Unmarshal(ev.Metadata, &meta) != nil || meta == nil {
		meta = map[string]any{}
	}
	meta["escalation"] = hint
	if b, err := json.Marshal(meta); err == nil {
		ev.Metadata = b
	}
}

// margin is the time kept free before the deadline when waiting for a human.
func margin(opts Options) time.Duration {
	if opts.Margin > 0 {
		return opts.Margin
	}
	return time.Second
}

// held is what a decision's metadata says about an approval the harness
// held the request for (approval_id, approval_status, decided_by, ...).
type held struct {
	ID     string `json:"approval_id"`
	Status string `json:"approval_status"`
	Rule   string `json:"rule_id"`
	By     string `json:"decided_by"`
	Reason string `json:"approval_reason"`
}

func heldApproval(d protocol.Decision) held {
	var h held
	if len(d.Metadata) > 0 {
		_ = json.Unmarshal(d.Metadata, &h)
	}
	if h.ID == "" {
		return held{}
	}
	return h
}
