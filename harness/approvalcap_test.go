package harness

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// Escalations past the bound of pending approvals are blocked at once:
// no approval is stored, the agent is not held, and other sessions are not
// affected until the harness-wide bound.
func TestPendingApprovalsBounded(t *testing.T) {
	f := newFixture(t)
	for range MaxPendingApprovalsPerSession {
		if err := f.h.approvals.reserve("sess-1"); err != nil {
			t.Fatal(err)
		}
	}
	d, err := f.client.Event(context.Background(), protocol.EventPreAction, action("./deploy.sh prod"))
	if err != nil || d.Kind != protocol.DecisionBlock || !strings.Contains(d.Reason, "64 approvals are already pending in this session") {
		t.Fatalf("escalation past the session bound: %+v %v", d, err)
	}
	if list, _ := f.db.Approvals().List(context.Background(), store.ApprovalFilter{}); len(list) != 0 {
		t.Fatalf("%d approvals stored", len(list))
	}
	// Another session still gets its approval slots.
	if err := f.h.approvals.reserve("sess-2"); err != nil {
		t.Fatalf("other session: %v", err)
	}
	f.h.approvals.release("sess-2")
	// Releasing frees the slot again.
	f.h.approvals.release("sess-1")
	if err := f.h.approvals.reserve("sess-1"); err != nil {
		t.Fatalf("after a release: %v", err)
	}

	var w approvalWaiters
	for i := range MaxPendingApprovals {
		if err := w.reserve("s" + strconv.Itoa(i%100)); err != nil {
			t.Fatalf("slot %d: %v", i, err)
		}
	}
	if err := w.reserve("z2"); err == nil || !strings.Contains(err.Error(), "pending in this harness") {
		t.Fatalf("past the harness bound: %v", err)
	}
}
