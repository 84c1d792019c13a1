package server

import (
	"context"
	"strings"
	"testing"
)

// A message that common JSON parsers read in different ways is refused as
// a whole: the handler never sees it, so nothing can be allowed on the
// strength of one reading while the agent acts on another.
func TestOneReadingOfEveryMessage(t *testing.T) {
	const env = `"session_id":"s","agent_id":"a","timestamp":"2026-11-23T00:00:00Z","depth":0`
	for _, tc := range []struct {
		name, msg string
		code      int
		id        any // the id echoed (nil: null)
		says      []string
	}{
		{
			name: "duplicate argument, harmless first",
			msg:  `{"jsonrpc":"2.0","id":2,"method":"ahp/event","params":{"event_type":"pre_action",` + env + `,"payload":{"tool_name":"bash","arguments":{"command":"ls","command":"rm -rf /"}}}}`,
			code: -32602, id: 2.0, says: []string{`duplicate member name "command"`, "params.payload.arguments.command"},
		},
		{
			name: "duplicate argument, destructive first",
			msg:  `{"jsonrpc":"2.0","id":"x","method":"ahp/event","params":{"event_type":"pre_action",` + env + `,"payload":{"tool_name":"bash","arguments":{"command":"rm -rf /","command":"ls"}}}}`,
			code: -32602, id: "x", says: []string{"params.payload.arguments.command"},
		},
		{
			name: "duplicate envelope key",
			msg:  `{"jsonrpc":"2.0","id":3,"method":"ahp/event","params":{"event_type":"post_action","event_type":"pre_action",` + env + `,"payload":{"tool_name":"bash"}}}`,
			code: -32602, id: 3.0, says: []string{"params.event_type"},
		},
		{
			name: "escaped duplicate",
			msg:  `{"jsonrpc":"2.0","id":4,"method":"ahp/event","params":{"event_type":"pre_action",` + env + `,"payload":{"tool_name":"bash","arguments":{"command":"ls","\u0063ommand":"rm -rf /"}}}}`,
			code: -32602, id: 4.0, says: []string{"params.payload.arguments.command"},
		},
		{
			name: "names that differ only in case (Go's encoding/json folds them)",
			msg:  `{"jsonrpc":"2.0","id":11,"method":"ahp/event","params":{"event_type":"pre_action",` + env + `,"payload":{"tool_name":"bash","arguments":{"command":"ls","Command":"rm -rf /"}}}}`,
			code: -32602, id: 11.0, says: []string{"differ only in letter case", "params.payload.arguments.Command"},
		},
		{
			name: "duplicate method",
			msg:  `{"jsonrpc":"2.0","id":5,"method":"ping","method":"ahp/event","params":{}}`,
			code: -32700, id: 5.0, says: []string{`duplicate member name "method"`},
		},
		{
			name: "duplicate id",
			msg:  `{"jsonrpc":"2.0","id":6,"id":7,"method":"ping"}`,
			code: -32700, id: nil, says: []string{`"id"`},
		},
		{
			name: "invalid UTF-8",
			msg:  "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ahp/event\",\"params\":{\"event_type\":\"pre_action\"," + env + ",\"payload\":{\"tool_name\":\"bash\",\"arguments\":{\"command\":\"rm -rf /\xff\"}}}}",
			code: -32602, id: 8.0, says: []string{"invalid UTF-8", "params.payload.arguments.command"},
		},
		{
			name: "unpaired surrogate",
			msg:  `{"jsonrpc":"2.0","id":9,"method":"ahp/event","params":{"event_type":"pre_action",` + env + `,"payload":{"tool_name":"b\ud800ash"}}}`,
			code: -32602, id: 9.0, says: []string{"surrogate", "params.payload.tool_name"},
		},
		{
			name: "batch with a duplicate in one event",
			msg:  `{"jsonrpc":"2.0","id":10,"method":"ahp/batch","params":{"events":[{"event_type":"post_action",` + env + `,"payload":{}},{"event_type":"post_action",` + env + `,"payload":{"result":"a","result":"b"}}]}}`,
			code: -32602, id: 10.0, says: []string{"params.events[1].payload.result"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{}
			p := startServer(t, r, Options{})
			p.send(tc.msg)
			m := p.recv()
			if got := errCode(t, m); got != tc.code {
				t.Errorf("code %d, want %d (%v)", got, tc.code, m)
			}
			if m["id"] != tc.id {
				t.Errorf("id %v, want %v", m["id"], tc.id)
			}
			for _, s := range tc.says {
				if !strings.Contains(errMessage(m), s) {
					t.Errorf("message %q does not say %q", errMessage(m), s)
				}
			}
			if _, ok := m["result"]; ok {
				t.Errorf("a result was sent: %v", m)
			}
			if r.calls.Load() != 0 {
				t.Errorf("the handler decided %d events", r.calls.Load())
			}
			// The connection stays usable.
			p.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
			if m := p.recv(); m["id"] != "after" {
				t.Errorf("after the refusal: %v", m)
			}
		})
	}
}

// A notification that does not read one way gets no answer; it is
// dropped, reported to the RejectionObserver (which counts it), and never
// reaches HandleNotification.
func TestOneReadingNotificationDropped(t *testing.T) {
	r := &recorder{}
	p := startServer(t, r, Options{})
	p.send(`{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"post_action","session_id":"s","session_id":"t","agent_id":"a","timestamp":"2026-11-23T00:00:00Z","depth":0,"payload":{}}}`)
	p.noMessage()
	_, notes, rejected := r.snapshot()
	if len(notes) != 0 || len(rejected) != 1 || !strings.Contains(rejected[0], "params.session_id") {
		t.Fatalf("notes %d rejected %v", len(notes), rejected)
	}
}

// HandleMessage (the HTTP and gRPC unary path) applies the same rule.
func TestOneReadingHandleMessage(t *testing.T) {
	r := &recorder{}
	s := New(r, Options{})
	ctx := context.Background()
	out := s.HandleMessage(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"2026-11-23T00:00:00Z","depth":0,"payload":{"tool_name":"bash","arguments":{"command":"ls","command":"rm -rf /"}}}}`))
	if !strings.Contains(string(out), `"code":-32602`) || r.calls.Load() != 0 {
		t.Fatalf("got %s, handler calls %d", out, r.calls.Load())
	}
	if out := s.HandleMessage(ctx, []byte(`{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"post_action","event_type":"pre_action"}}`)); out != nil {
		t.Fatalf("a refused notification was answered: %s", out)
	}
}
