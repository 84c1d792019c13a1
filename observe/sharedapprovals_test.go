package observe

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// sharedHub is a SharedSeq hub (as on a replica) over a store the test
// changes behind its back, as another replica would.
func sharedHub(t *testing.T) (*Hub, store.Store) {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	h, err := New(Options{Store: db, SharedSeq: true})
	if err != nil {
		t.Fatal(err)
	}
	return h, db
}

// published returns "channel type" of every action in the hub's ring,
// oldest first, with the action's JSON.
func published(h *Hub) (kinds []string, raw []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	start := (h.ringEnd - h.ringLen + len(h.ring)) % len(h.ring)
	for i := range h.ringLen {
		f := &h.ring[(start+i)%len(h.ring)]
		var p struct {
			Channel string `json:"channel"`
			Action  struct {
				Type string `json:"type"`
			} `json:"action"`
		}
		b := f.encoded()
		_ = json.Unmarshal(b, &p)
		kinds = append(kinds, p.Channel+" "+p.Action.Type)
		raw = append(raw, string(b))
	}
	return kinds, raw
}

func pendingIDs(h *Hub) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ids []string
	for id := range h.approvals {
		ids = append(ids, id)
	}
	return ids
}

func raise(t *testing.T, db store.Store, session string) store.Approval {
	t.Helper()
	a := store.Approval{SessionID: session, AgentID: "coder", RuleID: "ask-deploy", Reason: "deploys need an approval",
		Event: json.RawMessage(`{"event_type":"pre_action","session_id":"` + session + `","payload":{"tool_name":"bash","arguments":{"command":"deploy"}}}`)}
	if err := db.Approvals().Create(t.Context(), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// A poll shows an approval another replica raised, once however often it
// is heard of; one decided behind the hub's back is cleared by the next
// poll with its final status; and a pending list read before a
// resolution the hub heard from its harness does not show it again.
func TestSharedHubFollowsStoreApprovals(t *testing.T) {
	h, db := sharedHub(t)
	ctx := t.Context()
	x := raise(t, db, "s1")
	for range 3 {
		if err := h.syncApprovals(ctx); err != nil {
			t.Fatal(err)
		}
	}
	h.ApprovalChanged(x) // the raising harness's own word comes late
	kinds, _ := published(h)
	want := []string{"ahp-chat:/s1 chat/turnStarted", "ahp-chat:/s1 chat/toolCallStart", "ahp-chat:/s1 chat/toolCallReady",
		"ahp-session:/s1 session/inputNeededSet", "ahp-root:// ahp/approvalAdded"}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Fatalf("after the polls: %v, want %v", kinds, want)
	}

	// Denied through another replica: the next poll clears it.
	if _, err := db.Approvals().Decide(ctx, x.ID, store.Resolution{Status: store.ApprovalDenied, By: "bob", Reason: "not today"}); err != nil {
		t.Fatal(err)
	}
	if err := h.syncApprovals(ctx); err != nil {
		t.Fatal(err)
	}
	kinds, raw := published(h)
	want = append(want, "ahp-chat:/s1 chat/toolCallConfirmed", "ahp-session:/s1 session/inputNeededRemoved", "ahp-root:// ahp/approvalRemoved")
	if strings.Join(kinds, ",") != strings.Join(want, ",") || !strings.Contains(raw[len(raw)-1], `"status":"denied"`) ||
		!strings.Contains(raw[len(raw)-3], "denied by bob: not today") {
		t.Fatalf("after the denial: %v\n%s", kinds, strings.Join(raw[4:], "\n"))
	}
	if len(pendingIDs(h)) != 0 {
		t.Fatalf("still pending: %v", pendingIDs(h))
	}

	// The harness (say, expiry on this replica) resolves y while a poll
	// is reading the list: the list, read before, still holds y pending.
	y := raise(t, db, "s2")
	if err := h.syncApprovals(ctx); err != nil {
		t.Fatal(err)
	}
	stale, err := db.Approvals().List(ctx, store.ApprovalFilter{Status: store.ApprovalPending})
	if err != nil || len(stale) != 1 {
		t.Fatalf("pending list: %v %v", stale, err)
	}
	done, err := db.Approvals().Decide(ctx, y.ID, store.Resolution{Status: store.ApprovalExpired, By: "ahp", Reason: "timeout"})
	if err != nil {
		t.Fatal(err)
	}
	h.ApprovalChanged(done)
	before, _ := published(h)
	h.ApprovalChanged(stale[0]) // what the racing poll does with its list
	h.ApprovalChanged(done)     // and the resolution heard a second time
	after, _ := published(h)
	if len(after) != len(before) || len(pendingIDs(h)) != 0 {
		t.Fatalf("a stale list or a repeated resolution published %v; pending %v", after[len(before):], pendingIDs(h))
	}
}

// A decision record read from the store names an approval the hub still
// shows pending (its resolution on another replica was not heard yet):
// the prompt is cleared first, so the tool call is confirmed by the user's
// answer and its prompt removed, as on the replica that raised it.
func TestSharedHubClearsApprovalBeforeItsRecord(t *testing.T) {
	h, db := sharedHub(t)
	ctx := t.Context()
	x := raise(t, db, "s1")
	if err := h.syncApprovals(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Approvals().Decide(ctx, x.ID, store.Resolution{Status: store.ApprovalApproved, By: "bob"}); err != nil {
		t.Fatal(err)
	}
	rec := store.AuditRecord{ID: 7, Time: time.Now(), SessionID: "s1", AgentID: "coder", EventType: "pre_action", Blocking: true,
		Outcome: "allow", Event: x.Event, Decision: json.RawMessage(`{"decision":"allow","metadata":{"approval_id":"` + x.ID + `","approval_status":"approved"}}`)}
	h.resolveBeforeRecord(ctx, &rec)
	h.Recorded(&rec)
	kinds, raw := published(h)
	want := []string{"ahp-chat:/s1 chat/turnStarted", "ahp-chat:/s1 chat/toolCallStart", "ahp-chat:/s1 chat/toolCallReady",
		"ahp-session:/s1 session/inputNeededSet", "ahp-root:// ahp/approvalAdded",
		"ahp-chat:/s1 chat/toolCallConfirmed", "ahp-session:/s1 session/inputNeededRemoved", "ahp-root:// ahp/approvalRemoved",
		"ahp-session:/s1 ahp/recorded"}
	if strings.Join(kinds, ",") != strings.Join(want, ",") || !strings.Contains(raw[5], `"confirmed":"user-action"`) {
		t.Fatalf("published %v, want %v\n%s", kinds, want, strings.Join(raw, "\n"))
	}
	if len(pendingIDs(h)) != 0 {
		t.Fatalf("still pending: %v", pendingIDs(h))
	}
}

// Without SharedSeq (one harness, its own store) ApprovalChanged keeps
// publishing every change it is given, as before.
func TestApprovalChangedUnsharedUnchanged(t *testing.T) {
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err := New(Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	a := raise(t, db, "s1")
	d := a
	d.Status, d.DecidedBy = store.ApprovalApproved, "bob"
	h.ApprovalChanged(d) // decided, never shown: the root still hears of it
	kinds, _ := published(h)
	if strings.Join(kinds, ",") != "ahp-root:// ahp/approvalRemoved" {
		t.Fatalf("published %v", kinds)
	}
	if h.resolved != nil {
		t.Fatal("an unshared hub keeps resolved approvals")
	}
}
