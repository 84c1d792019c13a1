package observe

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"
)

// A client that asks for lean timeline entries (_meta.ahp.leanTimeline)
// gets ahp/recorded without the event, its size still told, and the
// event with ahp/event; one that does not ask gets it inline, as before.
// ahp/event finds records the hub holds and records only the store has.
func TestLeanTimelineEntriesAndEventOnDemand(t *testing.T) {
	hub, _, url := limitsServerOn(t, Options{}, func(l net.Listener) net.Listener { return l })
	rec := fanoutPreAction(1, "s")
	if err := hub.o.Store.Audit().Append(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	hub.Recorded(rec)
	for _, lean := range []bool{true, false} {
		c, _ := dialObserve(t, url, true, nil)
		params := map[string]any{"channel": RootChannel, "protocolVersions": []string{"1.0.0"},
			"clientId": "lean", "initialSubscriptions": []string{SessionChannel("s")}}
		if lean {
			params["_meta"] = map[string]any{"ahp": map[string]any{"batchMessages": true, "leanTimeline": true}}
		}
		if _, e := rpc(t, c, 1, "initialize", params); e != nil {
			t.Fatalf("initialize: %+v", e)
		}
		rec2 := fanoutPreAction(2, "s")
		if err := hub.o.Store.Audit().Append(t.Context(), rec2); err != nil {
			t.Fatal(err)
		}
		hub.Recorded(rec2)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		var entry map[string]json.RawMessage
		for entry == nil {
			_, b, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("lean=%v: %v", lean, err)
			}
			var m struct {
				Params struct {
					Action struct {
						Type  string                     `json:"type"`
						Entry map[string]json.RawMessage `json:"entry"`
					} `json:"action"`
				} `json:"params"`
			}
			if json.Unmarshal(b, &m) == nil && m.Params.Action.Type == "ahp/recorded" {
				entry = m.Params.Action.Entry
			}
		}
		cancel()
		_, hasEvent := entry["event"]
		if hasEvent == lean || string(entry["eventBytes"]) != itoa(int64(len(rec2.Event))) || string(entry["auditId"]) != itoa(rec2.ID) {
			t.Fatalf("lean=%v: entry %v (event inline: %v)", lean, entry, hasEvent)
		}
		// The event on demand: held by the hub, or (after the loop) only
		// in the store once the hub no longer holds the entry.
		res, e := rpc(t, c, 2, "ahp/event", map[string]any{"channel": SessionChannel("s"), "auditId": rec2.ID})
		var got eventResult
		if e != nil || json.Unmarshal(res, &got) != nil || string(got.Event) != string(rec2.Event) || got.EventBytes != len(rec2.Event) {
			t.Fatalf("ahp/event: %s %+v", res, e)
		}
		if _, e := rpc(t, c, 3, "ahp/event", map[string]any{"channel": SessionChannel("s"), "auditId": 999}); e == nil || e.Code != CodeNotFound {
			t.Fatalf("ahp/event of a record that does not exist: %+v", e)
		}
		if _, e := rpc(t, c, 4, "ahp/event", map[string]any{"channel": SessionChannel("other"), "auditId": rec2.ID}); e == nil || e.Code != CodeNotFound {
			t.Fatalf("ahp/event of another session's record: %+v", e)
		}
		_ = c.CloseNow()
	}
	hub.mu.Lock()
	hub.sessions["s"].timeline = nil
	hub.mu.Unlock()
	c, _ := dialObserve(t, url, true, nil)
	if _, e := rpc(t, c, 1, "initialize", map[string]any{"channel": RootChannel, "protocolVersions": []string{"1.0.0"}, "clientId": "x"}); e != nil {
		t.Fatalf("initialize: %+v", e)
	}
	res, e := rpc(t, c, 2, "ahp/event", map[string]any{"channel": ChatChannel("s"), "auditId": rec.ID})
	var got eventResult
	if e != nil || json.Unmarshal(res, &got) != nil || string(got.Event) != string(rec.Event) {
		t.Fatalf("ahp/event from the store: %s %+v", res, e)
	}
}
