package harness

import (
	"context"
	"errors"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// An approval is never answered by the principal whose event raised it,
// whatever roles that principal holds, and that is decided from the stored
// record too, when no request waits any more (after a restart).
func TestApprovalNotAnsweredByItsRequester(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	done := make(chan protocol.Decision, 1)
	go func() {
		d, _ := f.client.Event(ctx, protocol.EventPreAction, action("./deploy.sh prod"))
		done <- d
	}()
	ids := waitPending(t, f, 1)
	stored, err := f.db.Approvals().Get(ctx, ids[0])
	if err != nil || stored.RequestedBy != "agent-1" {
		t.Fatalf("stored approval: requested_by %q, %v; want agent-1", stored.RequestedBy, err)
	}
	// Same id as the agent, with the approver role: refused.
	self := &transport.Principal{ID: "agent-1", Roles: []string{"approver"}}
	if _, err := f.h.Decide(ctx, ids[0], true, self, "me"); !errors.Is(err, ErrSelfApproval) {
		t.Fatalf("requester approving its own approval: %v, want ErrSelfApproval", err)
	}
	if _, err := f.h.Decide(ctx, ids[0], false, &transport.Principal{ID: "alice", Roles: []string{"approver"}}, "no"); err != nil {
		t.Fatal(err)
	}
	if d := <-done; d.Kind != protocol.DecisionBlock {
		t.Fatalf("after deny: %+v", d)
	}

	// No waiter (as after a restart): the stored requester still counts.
	orphan := &store.Approval{SessionID: "s", AgentID: "a", RequestedBy: "agent-1", RuleID: "r", Reason: "x"}
	if err := f.db.Approvals().Create(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	if _, err := f.h.Decide(ctx, orphan.ID, true, self, ""); !errors.Is(err, ErrSelfApproval) {
		t.Fatalf("requester approving a stored approval: %v, want ErrSelfApproval", err)
	}
	if got, _ := f.db.Approvals().Get(ctx, orphan.ID); got.Status != store.ApprovalPending {
		t.Fatalf("refused decision changed the record: %+v", got)
	}
}
