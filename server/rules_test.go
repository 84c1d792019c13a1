package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// Spec §1: a numeric id is echoed back as a number, a string id as a string.
func TestIDEchoedWithSameType(t *testing.T) {
	p := startServer(t, &recorder{}, Options{})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if got := string(p.recvRaw()); got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("numeric id: %s", got)
	}
	p.send(`{"jsonrpc":"2.0","id":"550e8400-e29b-41d4-a716-446655440000","method":"ping","params":{}}`)
	if got := string(p.recvRaw()); got != `{"jsonrpc":"2.0","id":"550e8400-e29b-41d4-a716-446655440000","result":{}}` {
		t.Fatalf("string id: %s", got)
	}
	p.send(`{"jsonrpc":"2.0","id":12345678901234,"method":"ahp/event","params":` + event("pre_action", 0, `{"tool_name":"ls"}`) + `}`)
	if got := string(p.recvRaw()); got != `{"jsonrpc":"2.0","id":12345678901234,"result":{"decision":"allow"}}` {
		t.Fatalf("large numeric id: %s", got)
	}
}

// Spec §7.7: -32700 for a line that is not JSON, with id null.
func TestParseError(t *testing.T) {
	p := startServer(t, &recorder{}, Options{})
	p.send(`{"jsonrpc":"2.0","id":1,"method":`)
	if got := string(p.recvRaw()); got != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` {
		t.Fatalf("got %s", got)
	}
	// The connection survives.
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := p.recv(); m["id"].(float64) != 2 {
		t.Fatalf("after parse error: %v", m)
	}
}

// Spec §7.7: -32600 for JSON that is not a JSON-RPC message.
func TestInvalidRequest(t *testing.T) {
	p := startServer(t, &recorder{}, Options{})
	for _, msg := range []string{
		`[1,2,3]`, `"hello"`, `42`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","id":1,"method":7}`,
	} {
		p.send(msg)
		m := p.recv()
		if errCode(t, m) != -32600 {
			t.Errorf("%s: code %v", msg, m["error"])
		}
	}
}

func TestMethodNotFound(t *testing.T) {
	p := startServer(t, &recorder{}, Options{})
	p.send(`{"jsonrpc":"2.0","id":"x","method":"ahp/unknown","params":{}}`)
	m := p.recv()
	if errCode(t, m) != -32601 || m["id"] != "x" {
		t.Fatalf("got %v", m)
	}
	// Unknown notifications are ignored.
	p.send(`{"jsonrpc":"2.0","method":"ahp/unknown","params":{}}`)
	p.noMessage()
}

// Spec §2: ping is answered before the handshake.
func TestPingBeforeHandshake(t *testing.T) {
	p := startServer(t, &recorder{}, Options{})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if m := p.recv(); m["result"] == nil {
		t.Fatalf("got %v", m)
	}
}

// Spec §3: handshake response and version check.
func TestHandshake(t *testing.T) {
	p := startServer(t, &recorder{}, Options{Name: "test-harness", Version: "9.9", MaxDepth: 4, BatchSize: 7, TimeoutMs: 1500})
	// The 2.4 Python example: integer id, no capabilities.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ahp/handshake","params":{"protocol_version":"2.4","agent_info":{"framework":"python","version":"1.0"},"session_id":"s","agent_id":"a"}}`)
	m := p.recv()
	res := m["result"].(map[string]any)
	if res["protocol_version"] != "2.4" {
		t.Fatalf("protocol_version %v", res["protocol_version"])
	}
	hi := res["harness_info"].(map[string]any)
	if hi["name"] != "test-harness" || hi["version"] != "9.9" {
		t.Fatalf("harness_info %v", hi)
	}
	caps := hi["capabilities"].([]any)
	if len(caps) != len(protocol.DefaultCapabilities) {
		t.Fatalf("capabilities %v", caps)
	}
	cfg := res["config"].(map[string]any)
	if cfg["timeout_ms"].(float64) != 1500 || cfg["batch_size"].(float64) != 7 || cfg["max_depth"].(float64) != 4 {
		t.Fatalf("config %v", cfg)
	}
	for _, v := range []string{"3.0", "1.9", ""} {
		p.send(`{"jsonrpc":"2.0","id":2,"method":"ahp/handshake","params":{"protocol_version":"` + v + `","agent_info":{"framework":"x","version":"1"},"session_id":"s","agent_id":"a"}}`)
		m := p.recv()
		if errCode(t, m) != -32000 || errMessage(m) != "Unsupported protocol version: "+v {
			t.Fatalf("version %q: %v", v, m)
		}
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"ahp/handshake","params":{"protocol_version":2}}`)
	if errCode(t, p.recv()) != -32602 {
		t.Fatal("bad handshake params not -32602")
	}
}

// Spec §7.1: depth over max_depth is rejected (request: -32602; notification: dropped).
func TestDepthLimit(t *testing.T) {
	r := &recorder{}
	p := startServer(t, r, Options{MaxDepth: 3})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":` + event("pre_action", 3, `{}`) + `}`)
	if m := p.recv(); m["result"] == nil {
		t.Fatalf("depth 3 refused: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ahp/event","params":` + event("pre_action", 4, `{}`) + `}`)
	m := p.recv()
	if errCode(t, m) != -32602 || !strings.Contains(errMessage(m), "max_depth") {
		t.Fatalf("depth 4: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"ahp/event","params":` + event("post_action", 4, `{}`) + `}`)
	p.noMessage()
	events, notes, rejected := r.snapshot()
	if len(events) != 1 || len(notes) != 0 || len(rejected) != 1 {
		t.Fatalf("events %d notes %d rejected %v", len(events), len(notes), rejected)
	}
}

// Spec §7.2: a blocking event sent as a notification is rejected.
func TestBlockingAsNotification(t *testing.T) {
	r := &recorder{}
	p := startServer(t, r, Options{})
	p.send(`{"jsonrpc":"2.0","method":"ahp/event","params":` + event("pre_action", 0, `{}`) + `}`)
	p.noMessage()
	events, notes, rejected := r.snapshot()
	if len(events) != 0 || len(notes) != 0 || len(rejected) != 1 || !strings.Contains(rejected[0], "must be sent as a request") {
		t.Fatalf("events %d notes %d rejected %v", len(events), len(notes), rejected)
	}
}

// Spec §7.3: a fire-and-forget event sent as a request gets -32602.
func TestFireAndForgetAsRequest(t *testing.T) {
	r := &recorder{}
	p := startServer(t, r, Options{})
	for _, typ := range []string{"post_action", "post_response", "session_start", "session_end", "error", "heartbeat", "success", "run_lifecycle", "task_list", "verification"} {
		p.send(`{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":` + event(typ, 0, `{}`) + `}`)
		m := p.recv()
		if errCode(t, m) != -32602 || !strings.Contains(errMessage(m), "must be sent as a notification") {
			t.Fatalf("%s: %v", typ, m)
		}
	}
	if events, notes, _ := r.snapshot(); len(events)+len(notes) != 0 {
		t.Fatal("handler saw a refused event")
	}
}

// Spec §7.4: run contract payloads are validated even as notifications.
func TestRunContractValidated(t *testing.T) {
	r := &recorder{}
	p := startServer(t, r, Options{})
	good := map[string]string{
		"run_lifecycle": `{"run_id":"r1","session_id":"s1","status":"executing","updated_at":"2026-11-21T10:00:00Z"}`,
		"task_list":     `{"run_id":"r1","session_id":"s1","tasks":[{"id":"t1","title":"Write code","status":"in_progress"}],"updated_at":"2026-11-21T10:00:00Z"}`,
		"verification":  `{"run_id":"r1","session_id":"s1","status":"passed","checks":[{"id":"c1","subject":"tests","status":"passed"}],"updated_at":"2026-11-21T10:00:00Z"}`,
	}
	bad := map[string]string{
		"run_lifecycle": `{"run_id":"r1","session_id":"s1","status":"exploding","updated_at":"x"}`,
		"task_list":     `{"run_id":"r1","session_id":"s1","tasks":[{"id":"t1","status":"pending"}],"updated_at":"x"}`,
		"verification":  `{"run_id":"r1","session_id":"s1","status":"passed"}`,
	}
	for typ, pl := range good {
		p.send(`{"jsonrpc":"2.0","method":"ahp/event","params":` + event(typ, 0, pl) + `}`)
	}
	for typ, pl := range bad {
		p.send(`{"jsonrpc":"2.0","method":"ahp/event","params":` + event(typ, 0, pl) + `}`)
	}
	// A ping after the notifications: they are handled in order before it.
	p.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	p.recv()
	_, notes, rejected := r.snapshot()
	if len(notes) != 3 || len(rejected) != 3 {
		t.Fatalf("notes %d rejected %v", len(notes), rejected)
	}
	joined := strings.Join(rejected, "\n")
	for _, want := range []string{"exploding", "title", "updated_at"} {
		if !strings.Contains(joined, want) {
			t.Errorf("rejections %q do not mention %q", joined, want)
		}
	}
}

// Spec §7.5: batch limits, non-batchable events, order, fail-closed items.
func TestBatch(t *testing.T) {
	r := &recorder{decide: func(ev *protocol.Event) (protocol.Decision, error) {
		var p struct {
			N int `json:"n"`
		}
		_ = json.Unmarshal(ev.Payload, &p)
		switch p.N {
		case 2:
			return protocol.Block("two"), nil
		case 3:
			return protocol.Decision{}, errors.New("handler exploded")
		}
		return protocol.Allow(), nil
	}}
	p := startServer(t, r, Options{BatchSize: 4})
	items := []string{
		event("pre_action", 0, `{"n":1}`), event("pre_prompt", 0, `{"n":2}`),
		event("pre_action", 0, `{"n":3}`), event("post_action", 0, `{"n":4}`),
	}
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ahp/batch","params":{"events":[` + strings.Join(items, ",") + `]}}`)
	got := string(p.recvRaw())
	want := `{"jsonrpc":"2.0","id":1,"result":{"decisions":[{"decision":"allow"},{"decision":"block","reason":"two"},{"decision":"block","reason":"handler error: handler exploded"},{"decision":"allow"}]}}`
	if got != want {
		t.Fatalf("batch:\n got %s\nwant %s", got, want)
	}
	// Too many events.
	five := strings.Join(append(items, event("pre_action", 0, `{}`)), ",")
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ahp/batch","params":{"events":[` + five + `]}}`)
	if m := p.recv(); errCode(t, m) != -32602 || !strings.Contains(errMessage(m), "batch_size") {
		t.Fatalf("oversized batch: %v", m)
	}
	// A non-batchable event.
	p.send(`{"jsonrpc":"2.0","id":3,"method":"ahp/batch","params":{"events":[` + event("idle", 0, `{"idle_duration_ms":1,"idle_reason":"x"}`) + `]}}`)
	if m := p.recv(); errCode(t, m) != -32602 || !strings.Contains(errMessage(m), "cannot be batched") {
		t.Fatalf("non-batchable: %v", m)
	}
	// A bad run contract item is blocked, not accepted.
	p.send(`{"jsonrpc":"2.0","id":4,"method":"ahp/batch","params":{"events":[` + event("run_lifecycle", 0, `{"run_id":"r"}`) + `]}}`)
	if got := string(p.recvRaw()); !strings.Contains(got, `"decision":"block"`) || !strings.Contains(got, "session_id") {
		t.Fatalf("bad run contract in batch: %s", got)
	}
}

// Spec §7.6: a typed payload that does not parse is -32602; a handler
// failure on a single request is -32603.
func TestTypedPayloadAndHandlerErrors(t *testing.T) {
	r := &recorder{decide: func(*protocol.Event) (protocol.Decision, error) { return protocol.Decision{}, errors.New("boom") }}
	p := startServer(t, r, Options{})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":` + event("planning", 0, `{"session_id":"s"}`) + `}`)
	if m := p.recv(); errCode(t, m) != -32602 || !strings.Contains(errMessage(m), "task_description") {
		t.Fatalf("typed payload: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ahp/event","params":` + event("pre_action", 0, `{}`) + `}`)
	if m := p.recv(); errCode(t, m) != -32603 || !strings.Contains(errMessage(m), "boom") {
		t.Fatalf("handler error: %v", m)
	}
	// Envelope errors are invalid params too.
	for _, params := range []string{
		`{"event_type":"pre_action"}`,
		`{"event_type":"no_such_type","session_id":"s","agent_id":"a",` + ts + `,"depth":0,"payload":{}}`,
		`{"event_type":"pre_action","session_id":"s","agent_id":"a",` + ts + `,"depth":-1,"payload":{}}`,
		`{"event_type":"pre_action","session_id":1,"agent_id":"a",` + ts + `,"depth":0,"payload":{}}`,
		`[]`,
	} {
		p.send(`{"jsonrpc":"2.0","id":3,"method":"ahp/event","params":` + params + `}`)
		if m := p.recv(); errCode(t, m) != -32602 {
			t.Fatalf("%s: %v", params, m)
		}
	}
}

// Each typed event reaches its handler method and is answered with its
// specialized decision.
func TestTypedEventsDefaults(t *testing.T) {
	p := startServer(t, &recorder{}, Options{})
	cases := []struct{ typ, payload, want string }{
		{"idle", `{"idle_duration_ms":5000,"idle_reason":"waiting"}`, `{"decision":"allow"}`},
		{"intent_detection", `{"session_id":"s","prompt":"where is the config?","workspace":"/w"}`, `{"decision":"allow","detected_intent":"locate","confidence":0.9,"target_hints":{"target_type":"concept","target_name":"config"}}`},
		{"context_perception", `{"session_id":"s","intent":"locate","target":{"location":{"path":".","location_type":"workspace"}},"context":{"workspace":"/w"}}`, `{"decision":"allow","injected_context":{"facts":[]}}`},
		{"memory_recall", `{"session_id":"s","query":"q","memory_type":"episodic","max_results":5,"working_directory":"/w"}`, `{"decision":"allow","injected_facts":[]}`},
		{"planning", `{"session_id":"s","task_description":"t","available_strategies":[{"custom":"mine"},"none"]}`, `{"decision":"allow","selected_strategy":{"custom":"mine"}}`},
		{"reasoning", `{"session_id":"s","reasoning_type":"re_act","problem_statement":"p"}`, `{"decision":"allow"}`},
		{"rate_limit", `{"session_id":"s","limit_type":"llm_token_limit","retry_after_ms":1500,"current_usage":"90%"}`, `{"decision":"retry","retry_after_ms":1500}`},
		{"confirmation", `{"session_id":"s","confirmation_type":"safety_confirm","message":"delete?"}`, `{"decision":"escalate"}`},
	}
	for i, c := range cases {
		p.send(`{"jsonrpc":"2.0","id":` + itoa(i) + `,"method":"ahp/event","params":` + event(c.typ, 0, c.payload) + `}`)
		got := string(p.recvRaw())
		want := `{"jsonrpc":"2.0","id":` + itoa(i) + `,"result":` + c.want + `}`
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.typ, got, want)
		}
	}
}

// handshake and query event types must use their own methods.
func TestHandshakeAndQueryEventTypes(t *testing.T) {
	p := startServer(t, &recorder{}, Options{})
	for _, typ := range []string{"handshake", "query"} {
		p.send(`{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":` + event(typ, 0, `{}`) + `}`)
		if m := p.recv(); errCode(t, m) != -32602 {
			t.Fatalf("%s: %v", typ, m)
		}
	}
}

func TestQuery(t *testing.T) {
	p := startServer(t, &recorder{}, Options{})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ahp/query","params":{"session_id":"s","agent_id":"a","query_type":"policy","payload":{"q":1}}}`)
	got := string(p.recvRaw())
	if got != `{"jsonrpc":"2.0","id":1,"result":{"answer":null,"reason":"no answer for query type policy"}}` {
		t.Fatalf("got %s", got)
	}
}

// HandleMessage serves stateless transports.
func TestHandleMessage(t *testing.T) {
	s := New(&recorder{}, Options{})
	ctx := context.Background()
	if out := s.HandleMessage(ctx, []byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)); string(out) != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Fatalf("ping: %s", out)
	}
	if out := s.HandleMessage(ctx, []byte(`{"jsonrpc":"2.0","method":"ahp/event","params":`+event("post_action", 0, `{}`)+`}`)); out != nil {
		t.Fatalf("notification answered: %s", out)
	}
	if out := s.HandleMessage(ctx, []byte(`nope`)); !strings.Contains(string(out), "-32700") {
		t.Fatalf("parse error: %s", out)
	}
}
