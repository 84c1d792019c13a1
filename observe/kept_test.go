package observe

import (
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store/sqlite"
	"github.com/ahp-go/ahp/transport"
)

// keptHub is a hub with a clock the test moves.
func keptHub(t *testing.T, shared bool) (*Hub, func(time.Duration)) {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	var mu sync.Mutex
	now := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	h, err := New(Options{Store: db, Now: clock, SharedSeq: shared})
	if err != nil {
		t.Fatal(err)
	}
	return h, func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
}

func keptObserver(h *Hub) *observer {
	return &observer{h: h, p: &transport.Principal{ID: "watcher", Roles: []string{"observer"}}, q: make(chan outMsg, 64),
		failed: make(chan struct{}), done: make(chan struct{}), subs: map[string]bool{}}
}

// reconnectType reconnects a fresh observer to ch from lastSeen and
// returns the answer's type and its number of actions.
func reconnectType(t *testing.T, h *Hub, ch string, lastSeen uint64) (string, int) {
	t.Helper()
	o := keptObserver(h)
	h.reconnect(t.Context(), o, json.RawMessage(`1`), lastSeen, []string{ch})
	var res struct {
		Result struct {
			Type    string            `json:"type"`
			Actions []json.RawMessage `json:"actions"`
		} `json:"result"`
	}
	if err := json.Unmarshal((<-o.q).bytes(false), &res); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	for ch := range o.subs {
		h.dropSubscriberLocked(o, ch)
	}
	h.mu.Unlock()
	return res.Result.Type, len(res.Result.Actions)
}

// With nobody watching, a decision's actions are numbered but nothing is
// kept for them (no ring frame, no index entry); a reconnect that missed
// such actions gets a snapshot, never a replay with a hole. A channel
// whose subscriber just left keeps its actions for keepAfterUnsubscribe,
// so that the subscriber can come back and replay them.
func TestUnwatchedActionsAreNumberedNotKept(t *testing.T) {
	h, advance := keptHub(t, false)
	ch := SessionChannel("s")
	h.Recorded(fanoutPreAction(1, "s"))
	seq0 := h.ServerSeq()
	h.Recorded(fanoutPreAction(2, "s"))
	h.mu.Lock()
	ringLen, indexLen, seq := h.ringLen, h.sessions["s"].index.len(), h.seq
	h.mu.Unlock()
	if ringLen != 0 || indexLen != 0 {
		t.Fatalf("nobody watches, yet %d ring frames and %d index entries were kept", ringLen, indexLen)
	}
	if seq <= seq0 {
		t.Fatalf("serverSeq %d after %d: unwatched actions must still be numbered", seq, seq0)
	}
	if typ, _ := reconnectType(t, h, ch, seq0); typ != "snapshot" {
		t.Fatalf("reconnect after unkept actions: %q, want snapshot", typ)
	}

	// A subscriber comes and goes: its channel is kept a while.
	o := keptObserver(h)
	h.mu.Lock()
	h.subscribeLocked(o, ch)
	h.dropSubscriberLocked(o, ch)
	h.mu.Unlock()
	seq1 := h.ServerSeq()
	h.Recorded(fanoutPreAction(3, "s"))
	if typ, n := reconnectType(t, h, ch, seq1); typ != "replay" || n != 1 {
		t.Fatalf("reconnect right after leaving: %q with %d actions, want a replay of 1", typ, n)
	}

	// Long after the last subscriber left, actions are no longer kept.
	advance(keepAfterUnsubscribe + time.Second)
	seq2 := h.ServerSeq()
	h.Recorded(fanoutPreAction(4, "s"))
	if typ, _ := reconnectType(t, h, ch, seq2); typ != "snapshot" {
		t.Fatalf("reconnect long after leaving: %q, want snapshot", typ)
	}
	// The chat channel was never watched: not kept either.
	h.mu.Lock()
	unkeptChat := h.sessions["s"].unkeptChat
	h.mu.Unlock()
	if unkeptChat <= seq0 {
		t.Fatalf("chat actions nobody watched: last unkept %d", unkeptChat)
	}
}

// Replicas (SharedSeq) keep every action: an observer may reconnect from
// another replica, where it watched.
func TestSharedSeqKeepsUnwatchedActions(t *testing.T) {
	h, _ := keptHub(t, true)
	h.Recorded(fanoutPreAction(1, "s"))
	seq0 := h.ServerSeq()
	h.Recorded(fanoutPreAction(2, "s"))
	if typ, n := reconnectType(t, h, SessionChannel("s"), seq0); typ != "replay" || n != 1 {
		t.Fatalf("SharedSeq reconnect: %q with %d actions, want a replay of 1", typ, n)
	}
}
