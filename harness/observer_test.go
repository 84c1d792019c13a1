package harness

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/transport"
)

// recordingObserver keeps what the harness hands to its Observer.
type recordingObserver struct {
	mu        sync.Mutex
	recs      []store.AuditRecord
	approvals []store.Approval
}

func (o *recordingObserver) Recorded(rec *store.AuditRecord) {
	o.mu.Lock()
	o.recs = append(o.recs, *rec)
	o.mu.Unlock()
}

func (o *recordingObserver) ApprovalChanged(a store.Approval) {
	o.mu.Lock()
	o.approvals = append(o.approvals, a)
	o.mu.Unlock()
}

func (o *recordingObserver) snapshot() ([]store.AuditRecord, []store.Approval) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]store.AuditRecord(nil), o.recs...), append([]store.Approval(nil), o.approvals...)
}

// TestObserverGetsRedactedRecords checks that observers see what the audit
// log gets (secrets redacted), for decisions, notifications and approvals,
// and that they hear of an approval when it is raised and when answered.
func TestObserverGetsRedactedRecords(t *testing.T) {
	f := newFixture(t)
	obs := &recordingObserver{}
	f.h.opts.Observer = obs
	ctx := context.Background()
	secret := "ghp_" + strings.Repeat("Ab3x", 9)

	if err := f.client.Notify(ctx, protocol.EventPostAction, map[string]any{"tool_name": "bash", "output": "token " + secret}); err != nil {
		t.Fatal(err)
	}
	done := make(chan protocol.Decision, 1)
	go func() {
		// The secrets pack blocks tokens in tool arguments; one in the
		// event's context reaches the approval queue and must be redacted.
		ev, err := f.client.NewEvent(protocol.EventPreAction, action("deploy now"))
		if err != nil {
			done <- protocol.Decision{}
			return
		}
		ev.Context = &protocol.EventContext{CurrentTask: "ship it with " + secret}
		d, _ := f.client.SendEvent(ctx, ev)
		done <- d
	}()
	ids := waitPending(t, f, 1)
	approver := &transport.Principal{ID: "alice", Roles: []string{"approver"}}
	if _, err := f.h.Decide(ctx, ids[0], true, approver, "ok"); err != nil {
		t.Fatal(err)
	}
	if d := <-done; d.Kind != protocol.DecisionAllow {
		t.Fatalf("approved deploy: %+v", d)
	}

	recs, approvals := obs.snapshot()
	var sawPost, sawPre bool
	for _, r := range recs {
		if strings.Contains(string(r.Event), secret) || strings.Contains(string(r.Decision), secret) {
			t.Fatalf("observer got the raw secret in a %s record: %s", r.EventType, r.Event)
		}
		switch r.EventType {
		case "post_action":
			sawPost = strings.Contains(string(r.Event), "[REDACTED:")
		case "pre_action":
			sawPre = strings.Contains(string(r.Event), "[REDACTED:") && r.ID > 0 && r.Outcome == "allow"
		}
	}
	if !sawPost || !sawPre {
		t.Fatalf("observer records: post_action redacted %v, pre_action redacted and stored %v (%d records)", sawPost, sawPre, len(recs))
	}
	if len(approvals) != 2 || approvals[0].Status != store.ApprovalPending || approvals[1].Status != store.ApprovalApproved {
		t.Fatalf("approvals seen: %+v", approvals)
	}
	for _, a := range approvals {
		if strings.Contains(string(a.Event), secret) || strings.Contains(a.Reason, secret) {
			t.Fatalf("observer got the raw secret in an approval: %s", a.Event)
		}
	}
	// The stored record and the observed one are the same bytes.
	stored := f.audit(t, store.AuditFilter{SessionID: "sess-1", EventType: "pre_action"})
	for _, r := range recs {
		if r.EventType == "pre_action" && (len(stored) != 1 || string(stored[0].Event) != string(r.Event)) {
			t.Fatalf("observed event differs from the stored one:\n%s\n%s", r.Event, stored[0].Event)
		}
	}
}

// termsObserver also records the terms the harness tells of approvals.
type termsObserver struct {
	recordingObserver
	terms []approvalTermsSeen
}

type approvalTermsSeen struct {
	id       string
	deadline time.Time
	fallback string
	pending  int // approvals seen before the terms
}

func (o *termsObserver) ApprovalTerms(id string, deadline time.Time, fallback string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.terms = append(o.terms, approvalTermsSeen{id, deadline, fallback, len(o.approvals)})
}

// An observer that asks for them is told an approval's deadline (the
// rule's timeout from now) and fallback before the approval is announced,
// so that the announcement can carry them.
func TestObserverToldApprovalTerms(t *testing.T) {
	f := newFixture(t)
	obs := &termsObserver{}
	f.h.opts.Observer = obs
	ctx := context.Background()
	before := time.Now()
	done := make(chan protocol.Decision, 1)
	go func() {
		d, _ := f.client.Event(ctx, protocol.EventPreAction, action("./deploy.sh prod"))
		done <- d
	}()
	ids := waitPending(t, f, 1)
	after := time.Now()
	if _, err := f.h.Decide(ctx, ids[0], false, &transport.Principal{ID: "alice", Roles: []string{"approver"}}, "no"); err != nil {
		t.Fatal(err)
	}
	<-done
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.terms) != 1 {
		t.Fatalf("terms told %d times: %+v", len(obs.terms), obs.terms)
	}
	got := obs.terms[0]
	if got.id != ids[0] || got.fallback != "block" || got.pending != 0 {
		t.Fatalf("terms %+v for approval %s", got, ids[0])
	}
	if got.deadline.Before(before.Add(2*time.Second)) || got.deadline.After(after.Add(2*time.Second)) {
		t.Fatalf("deadline %v not 2s (the rule's timeout) after the request (%v..%v)", got.deadline, before, after)
	}
}
