package protocol

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The event envelope and the handshake reject what 2.4 rejects.
func TestEnvelopeRejects(t *testing.T) {
	cases := []struct{ typ, input, want string }{
		{"Event", `{"event_type":"pre_tool","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{}}`, `unknown event type "pre_tool"`},
		{"Event", `{"event_type":"","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{}}`, `unknown event type ""`},
		{"Event", `{"event_type":"PRE_ACTION","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{}}`, `unknown event type`},
		{"Event", `{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":-1,"payload":{}}`, "depth"},
		{"Event", `{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":4294967296,"payload":{}}`, "depth"},
		{"Event", `{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":1.5,"payload":{}}`, "depth"},
		{"Event", `{"event_type":"pre_action","session_id":7,"agent_id":"a","timestamp":"t","depth":0,"payload":{}}`, "session_id"},
		{"Event", `{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{},"context":{"recent_facts":[{"content":"c"}]}}`, "missing field source"},
		{"Event", `{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{},"context":{"session_stats":{"total_actions":1}}}`, "missing field total_tokens"},
		{"Event", `[]`, "expected a JSON object"},
		{"Event", `null`, "event"},
		{"BatchRequest", `{"events":[{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{}},{"event_type":"pre_action"}]}`, "events[1]"},
		{"BatchRequest", `{"events":null}`, "events must not be null"},
		{"HandshakeRequest", `{"protocol_version":"2.4","agent_info":{"version":"1"},"session_id":"s","agent_id":"a"}`, "agent_info: missing field framework"},
		{"HandshakeRequest", `{"protocol_version":"2.4","agent_info":{"framework":"f","version":"1","capabilities":"all"},"session_id":"s","agent_id":"a"}`, "capabilities"},
		{"HandshakeResponse", `{"protocol_version":"2.4","harness_info":{"name":"n","version":"1"},"config":{"timeout_ms":-1}}`, "timeout_ms"},
		{"HandshakeResponse", `{"protocol_version":"2.4","harness_info":{"name":"n","version":"1"},"config":{"max_depth":4294967296}}`, "max_depth"},
	}
	for _, c := range cases {
		v, err := decodeAs(t, c.typ, []byte(c.input))
		if err == nil {
			t.Errorf("%s %s: decoded to %+v", c.typ, c.input, v)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: error %q does not contain %q", c.typ, c.input, err, c.want)
		}
	}
}

func TestEventValidate(t *testing.T) {
	ok := Event{EventType: EventPreAction, Payload: json.RawMessage(`{}`)}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid event: %v", err)
	}
	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{Payload: json.RawMessage(`{}`)}, "missing field event_type"},
		{Event{EventType: "nope", Payload: json.RawMessage(`{}`)}, `unknown event type "nope"`},
		{Event{EventType: EventPreAction}, "missing field payload"},
	} {
		if err := c.e.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.e, err, c.want)
		}
	}
}

// Strings with bytes that are not UTF-8 decode as encoding/json decodes
// them (each bad byte becomes U+FFFD), by either decoder, so the value is
// stable across a round trip.
func TestEventInvalidUTF8(t *testing.T) {
	in := []byte("{\"event_type\":\"pre_prompt\",\"session_id\":\"a\xffb\",\"agent_id\":\"\xed\xa0\x80\"," +
		"\"timestamp\":\"\xdc\",\"depth\":0,\"payload\":{}}")
	var viaJSON, direct Event
	if err := json.Unmarshal(in, &viaJSON); err != nil {
		t.Fatal(err)
	}
	if err := DecodeEvent(in, &direct); err != nil {
		t.Fatal(err)
	}
	if viaJSON.SessionID != "a\uFFFDb" || viaJSON.AgentID != "\uFFFD\uFFFD\uFFFD" || viaJSON.Timestamp != "\uFFFD" {
		t.Errorf("got %q %q %q", viaJSON.SessionID, viaJSON.AgentID, viaJSON.Timestamp)
	}
	if direct.SessionID != viaJSON.SessionID || direct.AgentID != viaJSON.AgentID || direct.Timestamp != viaJSON.Timestamp {
		t.Errorf("DecodeEvent %q %q %q differs from encoding/json", direct.SessionID, direct.AgentID, direct.Timestamp)
	}
}

// DecodeEvent, used by the server on raw message bytes, rejects what the
// 2.4 implementation rejects and names the field.
func TestDecodeEventDirect(t *testing.T) {
	const ok = `"session_id":"s","agent_id":"a","timestamp":"t","depth":2,"payload":{"k":1}`
	cases := []struct{ input, want string }{
		{`{"event_type":5,` + ok + `}`, "event_type"},
		{`{"event_type":"nope",` + ok + `}`, `unknown event type "nope"`},
		{`{"event_type":"idle","session_id":1,"agent_id":"a","timestamp":"t","depth":0,"payload":{}}`, "session_id"},
		{`{"event_type":"idle","session_id":"s","agent_id":null,"timestamp":"t","depth":0,"payload":{}}`, "agent_id"},
		{`{"event_type":"idle","session_id":"s","agent_id":"a","timestamp":[],"depth":0,"payload":{}}`, "timestamp"},
		{`{"event_type":"idle","session_id":"s","agent_id":"a","timestamp":"t","depth":"0","payload":{}}`, "depth"},
		{`{"event_type":"idle","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{},"context":[]}`, "context"},
		{`{"event_type":"idle","session_id":"s","agent_id":"a","timestamp":"t","depth":0}`, "missing field payload"},
		{`{"session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{}}`, "missing field event_type"},
		{`{"event_type":"idle","agent_id":"a","timestamp":"t","depth":0,"payload":{}}`, "missing field session_id"},
		{`{"event_type":"idle","session_id":"s","timestamp":"t","depth":0,"payload":{}}`, "missing field agent_id"},
		{`{"event_type":"idle","session_id":"s","agent_id":"a","depth":0,"payload":{}}`, "missing field timestamp"},
		{`{"event_type":"idle","session_id":"s","agent_id":"a","timestamp":"t","payload":{}}`, "missing field depth"},
		// A member that is a field's name in other letter case is read as
		// that field by Go's encoding/json and ignored by exact readers.
		{`{"event_type":"idle",` + ok + `,"metAdAtA":{"k":1}}`, `member "metAdAtA": differs from "metadata" only in letter case`},
		{`{"event_type":"idle","ſession_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{}}`, `differs from "session_id"`},
		{`{"event_type":"idle","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"Payload":{}}`, `differs from "payload"`},
		{`[1]`, "expected a JSON object"},
		{`{"event_type":"idle",`, ""},
		{``, ""},
	}
	for _, c := range cases {
		var e Event
		err := DecodeEvent([]byte(c.input), &e)
		if err == nil {
			t.Errorf("%s: decoded to %+v", c.input, e)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not contain %q", c.input, err, c.want)
		}
	}

	var e Event
	in := []byte(`{"metadata":null,"context":null,"event_type":"pre_prompt","session_id":"s\u00e9","agent_id":"a","timestamp":"t","depth":2,"payload":{"k":1},"unknown":{"x":[1]},"payloads":1,"meta":2}`)
	if err := DecodeEvent(in, &e); err != nil {
		t.Fatal(err)
	}
	if e.EventType != EventPrePrompt || e.SessionID != "sé" || e.Depth != 2 || string(e.Payload) != `{"k":1}` || e.Context != nil || e.Metadata != nil {
		t.Errorf("got %+v", e)
	}
}

// Decoding errors keep the error they wrap.
func TestDecodeErrorsUnwrap(t *testing.T) {
	var p RunLifecyclePayload
	err := json.Unmarshal([]byte(`{"run_id":"r","session_id":"s","status":"created","updated_at":5}`), &p)
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		t.Fatalf("error %v (%T) does not wrap *json.UnmarshalTypeError", err, err)
	}
	if !strings.HasPrefix(err.Error(), "run_lifecycle: ") || !strings.Contains(err.Error(), "updated_at") {
		t.Errorf("error %q", err)
	}
}

// AppendJSON writes what json.Marshal writes.
func TestEventAppendJSONMatchesMarshal(t *testing.T) {
	events := []Event{
		{EventType: EventPreAction, SessionID: "s\"1<>", AgentID: "a\u00e9", Timestamp: "2026-11-21T10:00:00Z", Depth: 3,
			Payload: json.RawMessage(`{"tool_name":"bash","arguments":{"command":"ls"}}`)},
		{EventType: EventPrePrompt, SessionID: "s", AgentID: "a", Timestamp: "t", Payload: json.RawMessage(`"text"`),
			Context:  &EventContext{CurrentTask: "x", RecentFacts: []Fact{{Content: "c", Source: "s", Confidence: 0.5}}},
			Metadata: json.RawMessage(`{"k":[1,2]}`)},
	}
	for _, e := range events {
		want, err := json.Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if json.Unmarshal(got, &a) != nil || json.Unmarshal(want, &b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("AppendJSON:\n%s\njson.Marshal:\n%s", got, want)
		}
	}
}
