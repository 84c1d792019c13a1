package server

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ahp-go/ahp/internal/jsonscan"
)

// FuzzHandleMessage feeds arbitrary messages to the server's dispatch
// (every §7 rule) with the base handler. Whatever comes in, the server
// must not panic; an answer must be one well-formed I-JSON JSON-RPC
// response, and a request that encoding/json reads with an id must be
// answered with that same id.
func FuzzHandleMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","method":"ahp/handshake","params":{"protocol_version":"2.4","agent_info":{"framework":"f","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ahp/event","params":{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{"tool_name":"bash"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ahp/event","params":{"event_type":"planning","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{"session_id":"s","task_description":"x","available_strategies":["none",{"custom":"c"}]}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"ahp/batch","params":{"events":[{"event_type":"run_lifecycle","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{"run_id":"r","session_id":"s","status":"created","updated_at":"t"}}]}}`,
		`{"jsonrpc":"2.0","id":5,"method":"ahp/query","params":{"session_id":"s","agent_id":"a","query_type":"check","payload":null}}`,
		`{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"post_action","session_id":"s","agent_id":"a","timestamp":"t","depth":99,"payload":{}}}`,
		`{"jsonrpc":"2.0","id":6,"id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`[]`, `null`, `{`,
	} {
		f.Add([]byte(s))
	}
	s := New(BaseHandler{}, Options{MaxDepth: 10, BatchSize: 8})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		out := s.HandleMessage(context.Background(), b)
		if out == nil {
			return
		}
		if err := jsonscan.Check(out); err != nil {
			t.Fatalf("answer %q to %q is not I-JSON: %v", out, b, err)
		}
		var resp struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(out, &resp); err != nil || resp.JSONRPC != "2.0" || (resp.Result == nil) == (resp.Error == nil) {
			t.Fatalf("answer %q to %q is not a JSON-RPC response", out, b)
		}
		// A map, not a struct: encoding/json matches struct fields ignoring
		// case ("iD" would be the id), map keys exactly, as JSON-RPC does.
		var req map[string]json.RawMessage
		if jsonscan.Check(b) != nil || json.Unmarshal(b, &req) != nil || req["id"] == nil || req["method"] == nil || bytes.Equal(req["id"], []byte("null")) {
			return
		}
		var method string
		if json.Unmarshal(req["method"], &method) != nil {
			return
		}
		var want, got any
		_ = json.Unmarshal(req["id"], &want)
		_ = json.Unmarshal(resp.ID, &got)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("request id %s answered with id %s\ninput: %q\nanswer: %q", req["id"], resp.ID, b, out)
		}
	})
}
