package protocol

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ahp-go/ahp/jsonrpc"
)

// stdValue decodes raw with encoding/json, numbers kept as written.
func stdValue(t *testing.T, raw []byte) any {
	t.Helper()
	if raw == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("encoding/json cannot decode %q: %v", raw, err)
	}
	return v
}

// FuzzEventDifferential reads the same bytes as the server does (the
// params of an ahp/event request, through jsonrpc.Decode and
// DecodeValidEvent: what the policy sees) and with encoding/json (what most other
// readers, such as an audit consumer or a proxy, see). Either our side
// refuses the event, or both read every field to the same value: a
// duplicate key, an invalid UTF-8 string or an escaped key must not let
// the two disagree about what the event says.
func FuzzEventDifferential(f *testing.F) {
	for _, s := range []string{
		`{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"2026-01-01T00:00:00Z","depth":0,"payload":{"tool_name":"bash","arguments":{"command":"ls"}}}`,
		`{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":1,"payload":{"tool_name":"bash","tool_name":"read_file"}}`,
		`{"event_type":"pre_action","event_type":"post_action","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{}}`,
		`{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{"tool_name":"b\u0061sh","arguments":{"command":"rm -rf /"}}}`,
		`{"event_type":"pre_\u0061ction","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{"tool_name":"\ud800"}}`,
		"{\"event_type\":\"pre_action\",\"session_id\":\"s\xff\",\"agent_id\":\"a\",\"timestamp\":\"t\",\"depth\":0,\"payload\":{}}",
		`{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":1e400,"payload":{"n":1e400}}`,
		`{"event_type":"pre_prompt","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{"prompt":"x"},"context":{"current_task":"t"},"metadata":{"k":[1,2]}}`,
		// Found by this target: encoding/json reads a member named as a
		// field in other letter case as that field.
		`{"event_type":"pre_prompt","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{"prompt":"x"},"context":{"curreKKKKKsk":"t"},"metAdAtA":{"0":[0,0]}}`,
		`{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{},"PAYLOAD":{"tool_name":"bash"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		// The server's path: the message is decoded (and validated) by
		// jsonrpc.Decode, its params by DecodeValidEvent.
		msg := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":`), b...), '}')
		m, err := jsonrpc.Decode(msg)
		if err != nil || m.Params == nil {
			return
		}
		var ev Event
		if DecodeValidEvent(m.Params, &ev) != nil {
			return
		}
		var std struct {
			EventType *string         `json:"event_type"`
			SessionID *string         `json:"session_id"`
			AgentID   *string         `json:"agent_id"`
			Timestamp *string         `json:"timestamp"`
			Depth     *uint32         `json:"depth"`
			Payload   json.RawMessage `json:"payload"`
			Context   json.RawMessage `json:"context"`
			Metadata  json.RawMessage `json:"metadata"`
		}
		if err := json.Unmarshal(b, &std); err != nil {
			t.Fatalf("accepted %q, encoding/json refuses it: %v", b, err)
		}
		same := func(field string, ours string, theirs *string) {
			if theirs == nil || *theirs != ours {
				t.Fatalf("%s: we read %q, encoding/json reads %v\ninput: %q", field, ours, theirs, b)
			}
		}
		same("event_type", string(ev.EventType), std.EventType)
		same("session_id", ev.SessionID, std.SessionID)
		same("agent_id", ev.AgentID, std.AgentID)
		same("timestamp", ev.Timestamp, std.Timestamp)
		if std.Depth == nil || *std.Depth != ev.Depth {
			t.Fatalf("depth: we read %d, encoding/json reads %v\ninput: %q", ev.Depth, std.Depth, b)
		}
		if !reflect.DeepEqual(stdValue(t, nullToNil(ev.Payload)), stdValue(t, nullToNil(std.Payload))) {
			t.Fatalf("payload: we read %s, encoding/json reads %s\ninput: %q", ev.Payload, std.Payload, b)
		}
		if !reflect.DeepEqual(stdValue(t, nullToNil(ev.Metadata)), stdValue(t, nullToNil(std.Metadata))) {
			t.Fatalf("metadata: we read %s, encoding/json reads %s\ninput: %q", ev.Metadata, std.Metadata, b)
		}
	})
}
