package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

func fanoutHub(t *testing.T) *Hub {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	h, err := New(Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func fanoutPreAction(id int64, session string) *store.AuditRecord {
	return &store.AuditRecord{ID: id, Time: time.Now(), SessionID: session, AgentID: "agent-main", EventType: "pre_action",
		Blocking: true, Outcome: "allow", Transport: "unix",
		Event:    json.RawMessage(`{"event_type":"pre_action","session_id":"` + session + `","payload":{"tool_name":"bash","arguments":{"command":"ls"}}}`),
		Decision: json.RawMessage(`{"decision":"allow"}`)}
}

// Publishing to many observers queues one action to all of them, not
// encoded yet: the observers' writers encode it once, off the hub's lock
// and the decision path, and share the bytes. The action's wire is the
// same as before (a whole JSON-RPC notification with its serverSeq).
func TestPublishQueuesOneSharedActionEncodedOnce(t *testing.T) {
	h := fanoutHub(t)
	h.Recorded(fanoutPreAction(1, "s"))
	obs := make([]*observer, 5)
	h.mu.Lock()
	for i := range obs {
		obs[i] = &observer{h: h, q: make(chan outMsg, 16), failed: make(chan struct{}), done: make(chan struct{}), subs: map[string]bool{}}
		h.subscribeLocked(obs[i], SessionChannel("s"))
	}
	h.mu.Unlock()
	h.Recorded(fanoutPreAction(2, "s"))
	var first *shared
	for i, o := range obs {
		if len(o.q) != 1 {
			t.Fatalf("observer %d has %d messages queued; want 1 (ahp/recorded; the chat channel has no subscriber)", i, len(o.q))
		}
		m := <-o.q
		if m.a == nil {
			t.Fatalf("observer %d was queued bytes, not the shared action", i)
		}
		if first == nil {
			first = m.a
			if m.a.data != nil {
				t.Fatal("the action was encoded while publishing (under the hub's lock, on the decision path)")
			}
		} else if m.a != first {
			t.Fatalf("observer %d was queued its own copy of the action", i)
		}
		obs[i].q <- m
	}
	var wg sync.WaitGroup
	got := make([][]byte, len(obs))
	for i, o := range obs {
		wg.Go(func() { got[i] = (<-o.q).bytes(false) })
	}
	wg.Wait()
	for i := range got {
		if &got[i][0] != &got[0][0] {
			t.Fatalf("observer %d got bytes of its own encoding", i)
		}
	}
	var n struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  struct {
			Channel   string `json:"channel"`
			ServerSeq uint64 `json:"serverSeq"`
			Action    struct {
				Type string `json:"type"`
			} `json:"action"`
		} `json:"params"`
	}
	if err := json.Unmarshal(got[0], &n); err != nil {
		t.Fatal(err)
	}
	if n.JSONRPC != "2.0" || n.Method != "action" || n.Params.Channel != SessionChannel("s") || n.Params.Action.Type != "ahp/recorded" {
		t.Fatalf("queued action: %s", got[0])
	}
	// The ring replays the very bytes the observers were sent.
	h.mu.Lock()
	acts, ok := h.ringReplayLocked([]string{SessionChannel("s")}, n.Params.ServerSeq-1)
	h.mu.Unlock()
	if !ok || len(acts) != 1 || !bytes.Contains(got[0], acts[0].env) {
		t.Fatalf("replay from the ring: ok=%v %d actions", ok, len(acts))
	}
}

// countWrites counts the writes to the server's side of every
// connection, each of which takes delay (a peer that reads slowly).
type countWrites struct {
	net.Listener
	n     *atomic.Int64
	delay time.Duration
}

func (l countWrites) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	return countedConn{c, l.n, l.delay}, err
}

type countedConn struct {
	net.Conn
	n     *atomic.Int64
	delay time.Duration
}

func (c countedConn) Write(p []byte) (int, error) {
	c.n.Add(1)
	time.Sleep(c.delay)
	return c.Conn.Write(p)
}

// An observer that is behind gets the actions queued for it in a few
// writes to its socket, not one per action; each is still one WebSocket
// message, in serverSeq order, none lost.
func TestObserverBehindGetsActionsInFewWrites(t *testing.T) {
	var writes atomic.Int64
	hub, _, url := limitsServerOn(t, Options{}, func(l net.Listener) net.Listener {
		return countWrites{l, &writes, 5 * time.Millisecond}
	})
	hub.Recorded(fanoutPreAction(1, "s"))
	c, _ := dialObserve(t, url, true, nil)
	if _, e := rpc(t, c, 1, "initialize", map[string]any{"channel": RootChannel, "protocolVersions": []string{"1.0.0"},
		"clientId": "slow", "initialSubscriptions": []string{SessionChannel("s")}}); e != nil {
		t.Fatalf("initialize: %+v", e)
	}
	writes.Store(0)
	const n = 300
	for i := range int64(n) {
		hub.Recorded(fanoutPreAction(2+i, "s"))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var last uint64
	for got := 0; got < n; {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("after %d actions: %v", got, err)
		}
		var m actionMsg
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("message %d is not one JSON-RPC message: %v", got, err)
		}
		if m.Method != "action" || m.Params.Action.Type != "ahp/recorded" {
			continue
		}
		if m.Params.ServerSeq <= last {
			t.Fatalf("serverSeq %d after %d", m.Params.ServerSeq, last)
		}
		last = m.Params.ServerSeq
		got++
	}
	if w := writes.Load(); w > n/5 {
		t.Fatalf("%d actions took %d writes to the socket; want at most %d (batched when behind)", n, w, n/5)
	}
}

type recordingConn struct {
	net.Conn
	writes [][]byte
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, bytes.Clone(p))
	return len(p), nil
}

func (c *recordingConn) SetWriteDeadline(time.Time) error { return nil }

// A corked connection passes writes through, except between hold and
// flush, when it sends them in one write (up to maxCork bytes).
func TestCorkConn(t *testing.T) {
	rc := &recordingConn{}
	c := newCorkConn(rc)
	_, _ = c.Write([]byte("a"))
	c.hold()
	_, _ = c.Write([]byte("b"))
	_, _ = c.Write([]byte("c"))
	if len(rc.writes) != 1 {
		t.Fatalf("held writes went out: %q", rc.writes)
	}
	if err := c.flush(time.Second); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("d"))
	want := []string{"a", "bc", "d"}
	if len(rc.writes) != len(want) {
		t.Fatalf("writes %q; want %q", rc.writes, want)
	}
	for i := range want {
		if string(rc.writes[i]) != want[i] {
			t.Fatalf("writes %q; want %q", rc.writes, want)
		}
	}
	rc.writes = nil
	c.hold()
	_, _ = c.Write([]byte("x"))
	_, _ = c.Write(make([]byte, maxCork)) // more than it holds: what was held, then this
	if len(rc.writes) != 2 || string(rc.writes[0]) != "x" || len(rc.writes[1]) != maxCork {
		t.Fatalf("over maxCork: %d writes", len(rc.writes))
	}
	if err := c.flush(time.Second); err != nil || len(rc.writes) != 2 {
		t.Fatalf("flush with nothing held: %v, %d writes", err, len(rc.writes))
	}
	var nilCork *corkConn
	nilCork.hold()
	if err := nilCork.flush(time.Second); err != nil {
		t.Fatal(err)
	}
}
