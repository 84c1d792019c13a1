package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A client that asks for batches (_meta.ahp.batchMessages) and is behind
// gets the actions queued for it as JSON-RPC batches: JSON arrays of the
// same notifications, in serverSeq order, none lost, in far fewer
// WebSocket messages. A client that does not ask never gets an array.
func TestObserverAskingForBatchesGetsArrays(t *testing.T) {
	for _, asks := range []bool{true, false} {
		var writes atomic.Int64
		hub, _, url := limitsServerOn(t, Options{}, func(l net.Listener) net.Listener {
			return countWrites{l, &writes, 5 * time.Millisecond}
		})
		hub.Recorded(fanoutPreAction(1, "s"))
		c, _ := dialObserve(t, url, true, nil)
		params := map[string]any{"channel": RootChannel, "protocolVersions": []string{"1.0.0"},
			"clientId": "batched", "initialSubscriptions": []string{SessionChannel("s")}}
		if asks {
			params["_meta"] = map[string]any{"ahp": map[string]any{"batchMessages": true}}
		}
		if _, e := rpc(t, c, 1, "initialize", params); e != nil {
			t.Fatalf("initialize: %+v", e)
		}
		const n = 300
		for i := range int64(n) {
			hub.Recorded(fanoutPreAction(2+i, "s"))
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		var last uint64
		messages, arrays := 0, 0
		for got := 0; got < n; {
			_, b, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("asks=%v: after %d actions: %v", asks, got, err)
			}
			messages++
			var batch []json.RawMessage
			if b[0] == '[' {
				arrays++
				if err := json.Unmarshal(b, &batch); err != nil || len(batch) < 2 {
					t.Fatalf("asks=%v: a batch that is not an array of messages (%d): %v", asks, len(batch), err)
				}
			} else {
				batch = []json.RawMessage{b}
			}
			for _, one := range batch {
				var m actionMsg
				if err := json.Unmarshal(one, &m); err != nil || m.JSONRPC != "2.0" {
					t.Fatalf("asks=%v: %s is not a JSON-RPC message: %v", asks, one, err)
				}
				if m.Method != "action" || m.Params.Action.Type != "ahp/recorded" {
					continue
				}
				if m.Params.ServerSeq <= last {
					t.Fatalf("asks=%v: serverSeq %d after %d", asks, m.Params.ServerSeq, last)
				}
				last = m.Params.ServerSeq
				got++
			}
		}
		cancel()
		if !asks && arrays > 0 {
			t.Fatalf("a client that did not ask got %d arrays", arrays)
		}
		if asks && (arrays == 0 || messages > n/5) {
			t.Fatalf("%d actions came in %d WebSocket messages (%d arrays); want batches, at most %d messages", n, messages, arrays, n/5)
		}
	}
}

// A client that asked for batches is written to about once every
// arrayPace while actions keep coming, whatever their rate: 600 ms of an
// action every millisecond comes in a few arrays, every action in order;
// an answer to a request is not held back by the pacing.
func TestBatchClientIsPaced(t *testing.T) {
	hub, _, url := limitsServerOn(t, Options{}, func(l net.Listener) net.Listener { return l })
	hub.Recorded(fanoutPreAction(1, "s"))
	c, _ := dialObserve(t, url, true, nil)
	if _, e := rpc(t, c, 1, "initialize", map[string]any{"channel": RootChannel, "protocolVersions": []string{"1.0.0"},
		"clientId": "paced", "initialSubscriptions": []string{SessionChannel("s")},
		"_meta": map[string]any{"ahp": map[string]any{"batchMessages": true}}}); e != nil {
		t.Fatalf("initialize: %+v", e)
	}
	const n = 600
	go func() {
		for i := range int64(n) {
			hub.Recorded(fanoutPreAction(2+i, "s"))
			time.Sleep(time.Millisecond)
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	messages, got := 0, 0
	var last uint64
	for got < n {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("after %d actions: %v", got, err)
		}
		messages++
		batch := []json.RawMessage{b}
		if b[0] == '[' {
			if err := json.Unmarshal(b, &batch); err != nil {
				t.Fatal(err)
			}
		}
		for _, one := range batch {
			var m actionMsg
			if json.Unmarshal(one, &m) != nil || m.Params.Action.Type != "ahp/recorded" {
				continue
			}
			if m.Params.ServerSeq <= last {
				t.Fatalf("serverSeq %d after %d", m.Params.ServerSeq, last)
			}
			last = m.Params.ServerSeq
			got++
		}
	}
	// 600 ms (longer on a loaded machine, with as many fewer messages)
	// paced at 50 ms is about 12 writes; unpaced it was one per ~10 ms.
	if messages > 30 {
		t.Fatalf("%d actions came in %d WebSocket messages; want at most 30 (one per %v)", n, messages, arrayPace)
	}
	// An answer goes out at once, paced or not.
	go func() {
		for i := range int64(200) {
			hub.Recorded(fanoutPreAction(1000+i, "s"))
			time.Sleep(time.Millisecond)
		}
	}()
	time.Sleep(20 * time.Millisecond)
	t0 := time.Now()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "ping"})
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(`"id":9`)) {
			break
		}
	}
	t.Logf("%d actions in %d messages; ping answered in %v", n, messages, time.Since(t0))
}

// actionMsg is what the tests read of an action notification.
type actionMsg struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  struct {
		ServerSeq uint64 `json:"serverSeq"`
		Action    struct {
			Type string `json:"type"`
		} `json:"action"`
	} `json:"params"`
}
