package storetest

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
)

func approval(session, rule string) *store.Approval {
	return &store.Approval{
		SessionID:   session,
		AgentID:     "agent-1",
		RequestedBy: "key:agent-1",
		Replica:     "host-1-4242-ab12cd34",
		Event:       json.RawMessage(`{"event_type":"pre_action","payload":{"tool_name":"bash","arguments":{"command":"rm -rf build"}}}`),
		RuleID:      rule,
		Reason:      "destructive command needs a human",
	}
}

func runApprovals(t *testing.T, newDB NewDatabase) {
	t.Run("CreateGetList", func(t *testing.T) {
		s, _ := openFresh(t, newDB)
		ctx := t.Context()
		a := approval("s1", "r1")
		if err := s.Approvals().Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		if a.ID == "" || a.Created.IsZero() || a.Status != store.ApprovalPending {
			t.Fatalf("Create did not fill id/created/status: %+v", a)
		}
		b := approval("s2", "r2")
		b.ID, b.Created = "chosen-id", base
		if err := s.Approvals().Create(ctx, b); err != nil {
			t.Fatal(err)
		}
		if b.ID != "chosen-id" {
			t.Errorf("Create replaced a given ID with %q", b.ID)
		}
		if err := s.Approvals().Create(ctx, approval("s3", "r3")); err != nil {
			t.Fatal(err)
		}
		dup := approval("s2", "r2")
		dup.ID = "chosen-id"
		if err := s.Approvals().Create(ctx, dup); err == nil {
			t.Error("Create with an existing ID succeeded")
		}
		got, err := s.Approvals().Get(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.SessionID != "s1" || got.RuleID != "r1" || got.Reason != a.Reason || got.Status != store.ApprovalPending ||
			got.RequestedBy != "key:agent-1" || got.Replica != a.Replica ||
			!got.DecidedAt.IsZero() || string(compact(t, got.Event)) != string(compact(t, a.Event)) {
			t.Errorf("Get = %+v", got)
		}
		if _, err := s.Approvals().Get(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get missing = %v, want ErrNotFound", err)
		}
		pending, err := s.Approvals().List(ctx, store.ApprovalFilter{Status: store.ApprovalPending})
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) != 3 || pending[0].ID != "chosen-id" {
			t.Fatalf("pending = %d approvals, first %q; want 3, oldest (chosen-id) first", len(pending), firstID(pending))
		}
		bySession, err := s.Approvals().List(ctx, store.ApprovalFilter{SessionID: "s1"})
		if err != nil || len(bySession) != 1 || bySession[0].ID != a.ID {
			t.Errorf("List by session = %v, %v", bySession, err)
		}
		if _, err := s.Approvals().List(ctx, store.ApprovalFilter{Status: "maybe"}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("List with unknown status = %v, want ErrInvalid", err)
		}
	})

	t.Run("DecideExactlyOnce", func(t *testing.T) {
		s, _ := openFresh(t, newDB)
		ctx := t.Context()
		a := approval("s1", "r1")
		if err := s.Approvals().Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		at := base.Add(time.Minute)
		got, err := s.Approvals().Decide(ctx, a.ID, store.Resolution{Status: store.ApprovalApproved, By: "bob", Reason: "checked", At: at})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != store.ApprovalApproved || got.DecidedBy != "bob" || got.DecisionReason != "checked" || !got.DecidedAt.Equal(at) {
			t.Errorf("Decide returned %+v", got)
		}
		_, err = s.Approvals().Decide(ctx, a.ID, store.Resolution{Status: store.ApprovalDenied, By: "carol"})
		if !errors.Is(err, store.ErrAlreadyDecided) {
			t.Fatalf("second Decide = %v, want ErrAlreadyDecided", err)
		}
		if msg := err.Error(); !strings.Contains(msg, "approved") || !strings.Contains(msg, "bob") || !strings.Contains(msg, a.ID) {
			t.Errorf("second Decide error %q does not say who decided what", msg)
		}
		stored, _ := s.Approvals().Get(ctx, a.ID)
		if stored.Status != store.ApprovalApproved || stored.DecidedBy != "bob" {
			t.Errorf("second Decide changed the record: %+v", stored)
		}
		if _, err := s.Approvals().Decide(ctx, "missing", store.Resolution{Status: store.ApprovalDenied}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Decide missing = %v, want ErrNotFound", err)
		}
		for _, st := range []store.ApprovalStatus{store.ApprovalPending, "maybe", ""} {
			if _, err := s.Approvals().Decide(ctx, a.ID, store.Resolution{Status: st}); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("Decide to %q = %v, want ErrInvalid", st, err)
			}
		}
	})

	t.Run("ConcurrentDecisionsOneWins", func(t *testing.T) {
		s, _ := openFresh(t, newDB)
		ctx := t.Context()
		a := approval("s1", "r1")
		if err := s.Approvals().Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		const n = 8
		var (
			wg               sync.WaitGroup
			mu               sync.Mutex
			wins, alreadyErr int
		)
		for i := range n {
			wg.Go(func() {
				st := store.ApprovalApproved
				if i%2 == 1 {
					st = store.ApprovalDenied
				}
				_, err := s.Approvals().Decide(ctx, a.ID, store.Resolution{Status: st, By: "op"})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, store.ErrAlreadyDecided):
					alreadyErr++
				default:
					t.Errorf("Decide: %v", err)
				}
			})
		}
		wg.Wait()
		if wins != 1 || alreadyErr != n-1 {
			t.Errorf("%d decisions won and %d were refused; want 1 and %d", wins, alreadyErr, n-1)
		}
	})

	t.Run("PendingSurviveReopenThenExpire", func(t *testing.T) {
		s, reopen := openFresh(t, newDB)
		ctx := t.Context()
		waiting := approval("s1", "r1")
		decided := approval("s1", "r2")
		for _, a := range []*store.Approval{waiting, decided} {
			if err := s.Approvals().Create(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Approvals().Decide(ctx, decided.ID, store.Resolution{Status: store.ApprovalDenied, By: "bob"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = reopen(t)
		pending, err := s.Approvals().List(ctx, store.ApprovalFilter{Status: store.ApprovalPending})
		if err != nil || len(pending) != 1 || pending[0].ID != waiting.ID {
			t.Fatalf("pending after reopen = %v, %v; want %s", pending, err, waiting.ID)
		}
		later := approval("s2", "r1")
		later.Created = time.Now().Add(time.Hour)
		if err := s.Approvals().Create(ctx, later); err != nil {
			t.Fatal(err)
		}
		expired, err := s.Approvals().ExpirePending(ctx, time.Now(), "harness restarted")
		if err != nil {
			t.Fatal(err)
		}
		if len(expired) != 1 || expired[0].ID != waiting.ID || expired[0].Status != store.ApprovalExpired ||
			expired[0].DecisionReason != "harness restarted" || expired[0].DecidedAt.IsZero() {
			t.Fatalf("ExpirePending = %+v; want only %s, expired with the reason", expired, waiting.ID)
		}
		kept, err := s.Approvals().Get(ctx, waiting.ID)
		if err != nil || kept.Status != store.ApprovalExpired {
			t.Errorf("expired approval = %+v, %v; want it kept as expired", kept, err)
		}
		if _, err := s.Approvals().Decide(ctx, waiting.ID, store.Resolution{Status: store.ApprovalApproved}); !errors.Is(err, store.ErrAlreadyDecided) {
			t.Errorf("approving an expired approval = %v, want ErrAlreadyDecided", err)
		}
		if got, _ := s.Approvals().Get(ctx, decided.ID); got.Status != store.ApprovalDenied {
			t.Errorf("ExpirePending touched a decided approval: %+v", got)
		}
		if got, _ := s.Approvals().Get(ctx, later.ID); got.Status != store.ApprovalPending {
			t.Errorf("ExpirePending touched an approval created after the cut-off: %+v", got)
		}
	})
}

func firstID(as []store.Approval) string {
	if len(as) == 0 {
		return ""
	}
	return as[0].ID
}
