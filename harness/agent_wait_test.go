package harness

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

func hintedEvent(t *testing.T, cmd, meta string) *protocol.Event {
	t.Helper()
	p, _ := json.Marshal(action(cmd))
	return &protocol.Event{EventType: protocol.EventPreAction, SessionID: "sess-hint", AgentID: "agent-1",
		Timestamp: time.Now().UTC().Format(time.RFC3339Nano), Payload: p, Metadata: json.RawMessage(meta)}
}

// An agent that asks its own user gets the escalation at once, recorded,
// with nothing left in the approval queue.
func TestEscalationHintAsksUser(t *testing.T) {
	f := newFixture(t)
	start := time.Now()
	d, err := f.h.HandleEvent(context.Background(), hintedEvent(t, "deploy prod", `{"escalation":{"asks_user":true}}`))
	if err != nil || d.Kind != protocol.DecisionEscalate || d.Reason != "deploys need an approval" || time.Since(start) > time.Second {
		t.Fatalf("asks_user: %+v %v after %v", d, err, time.Since(start))
	}
	if n := f.h.Pending(); n != 0 {
		t.Fatalf("%d approvals pending", n)
	}
	recs := f.audit(t, store.AuditFilter{SessionID: "sess-hint", RuleID: "approve-deploy"})
	if len(recs) != 1 || recs[0].Outcome != "escalate" {
		t.Fatalf("audit: %+v", recs)
	}
}

// An agent that waits less than the rule's timeout is answered block when
// its wait ends, never the rule's fallback (allow here); a longer wait
// than the rule's changes nothing.
func TestEscalationHintWait(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	d, err := f.h.HandleEvent(ctx, hintedEvent(t, "deploy prod", `{"escalation":{"wait_ms":150}}`))
	var meta map[string]any
	_ = json.Unmarshal(d.Metadata, &meta)
	if err != nil || d.Kind != protocol.DecisionBlock || meta["approval_status"] != "expired" || !strings.Contains(d.Reason, "150ms") {
		t.Fatalf("short wait on a 2s rule: %+v %v", d, err)
	}
	d, err = f.h.HandleEvent(ctx, hintedEvent(t, "quick-fallback-allow", `{"escalation":{"wait_ms":50}}`))
	if err != nil || d.Kind != protocol.DecisionBlock {
		t.Fatalf("short wait on a fallback-allow rule: %+v %v", d, err)
	}
	d, err = f.h.HandleEvent(ctx, hintedEvent(t, "quick-fallback-allow", `{"escalation":{"wait_ms":60000}}`))
	if err != nil || d.Kind != protocol.DecisionAllow {
		t.Fatalf("long wait: the rule's fallback applies: %+v %v", d, err)
	}
	for _, bad := range []string{`{"escalation":{"wait_ms":-5}}`, `{"escalation":"soon"}`, `[1]`} {
		if d, err := f.h.HandleEvent(ctx, hintedEvent(t, "quick-fallback-allow", bad)); err != nil || d.Kind != protocol.DecisionAllow {
			t.Fatalf("unreadable hint %s is no hint: %+v %v", bad, d, err)
		}
	}
}
