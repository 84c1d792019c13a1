package protocol

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rpcMessage is just enough JSON-RPC to reach params and result; the id is
// kept raw so its JSON type can be checked.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
}

func readCompat(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "compat", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readRPC(t *testing.T, name string) rpcMessage {
	t.Helper()
	var m rpcMessage
	if err := json.Unmarshal(readCompat(t, name), &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if m.JSONRPC != "2.0" {
		t.Errorf("%s: jsonrpc %q", name, m.JSONRPC)
	}
	return m
}

// decodeCompatEvent decodes an event, checks the envelope and validates the
// payload as the server would.
func decodeCompatEvent(t *testing.T, raw []byte, wantType EventType) (Event, any) {
	t.Helper()
	var e Event
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("event: %v", err)
	}
	if err := e.Validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
	if e.EventType != wantType || e.SessionID == "" || e.AgentID == "" || e.Timestamp == "" {
		t.Errorf("envelope: %+v", e)
	}
	p, err := ValidatePayload(e.EventType, e.Payload)
	if err != nil {
		t.Fatalf("payload: %v", err)
	}
	return e, p
}

func TestCompatReadme24Request(t *testing.T) {
	m := readRPC(t, "readme24_pre_action_request.json")
	if m.Method != "ahp/event" || string(m.ID) != `"req-123"` {
		t.Errorf("method %q id %s", m.Method, m.ID)
	}
	e, _ := decodeCompatEvent(t, m.Params, EventPreAction)
	if !e.EventType.Blocking() {
		t.Error("pre_action must be sent as a request")
	}
	if e.SessionID != "sess-abc" || e.AgentID != "agent-xyz" || e.Depth != 0 || e.Context != nil || e.Metadata != nil {
		t.Errorf("envelope: %+v", e)
	}
	var a ActionPayload
	if err := json.Unmarshal(e.Payload, &a); err != nil || a.ToolName != "bash" {
		t.Errorf("payload: %+v, %v", a, err)
	}
	assertSameJSON(t, a.Arguments, []byte(`{"command":"cargo test"}`))
}

func TestCompatReadme24Notification(t *testing.T) {
	m := readRPC(t, "readme24_post_action_notification.json")
	if m.ID != nil || m.Method != "ahp/event" {
		t.Errorf("a notification has no id: %s", m.ID)
	}
	e, p := decodeCompatEvent(t, m.Params, EventPostAction)
	if e.EventType.Blocking() || p != nil {
		t.Errorf("post_action: blocking=%v payload=%v", e.EventType.Blocking(), p)
	}
}

func TestCompatRunContractEvents(t *testing.T) {
	_, p := decodeCompatEvent(t, readCompat(t, "readme24_run_lifecycle_event.json"), EventRunLifecycle)
	run := p.(*RunLifecyclePayload)
	if run.RunID != "run-123" || run.Status != RunExecuting || run.Prompt != "fix the failing tests" ||
		run.StartedAt != "2026-05-01T00:00:00Z" || run.UpdatedAt != "2026-05-01T00:00:01Z" || run.Status.Terminal() {
		t.Errorf("run_lifecycle: %+v", run)
	}

	_, p = decodeCompatEvent(t, readCompat(t, "readme24_task_list_event.json"), EventTaskList)
	tl := p.(*TaskListPayload)
	if len(tl.Tasks) != 1 || tl.Tasks[0].ID != "step-1" || tl.Tasks[0].Status != "completed" ||
		len(tl.Tasks[0].Evidence) != 1 || tl.Tasks[0].Evidence[0].Kind != "log" ||
		tl.Tasks[0].Evidence[0].Summary != "cargo test reproduced the failure" {
		t.Errorf("task_list: %+v", tl)
	}

	_, p = decodeCompatEvent(t, readCompat(t, "readme24_verification_event.json"), EventVerification)
	v := p.(*VerificationPayload)
	if v.Status != "passed" || len(v.Checks) != 1 || v.Checks[0].Command != "cargo test --all-features" ||
		v.ResidualRisks == nil || len(v.ResidualRisks) != 0 {
		t.Errorf("verification: %+v", v)
	}
	// These are notifications that may also travel in a batch.
	for _, et := range []EventType{EventRunLifecycle, EventTaskList, EventVerification} {
		if et.Blocking() || !et.Batchable() || !et.RunContract() {
			t.Errorf("%s: wrong rules", et)
		}
	}
}

func TestCompatClientPayloads(t *testing.T) {
	for _, name := range []string{"readme24_client_pre_action_payload.json", "readme23_client_pre_action_payload.json"} {
		var a ActionPayload
		if err := json.Unmarshal(readCompat(t, name), &a); err != nil || a.ToolName != "bash" || len(a.Arguments) == 0 {
			t.Errorf("%s: %+v, %v", name, a, err)
		}
	}
	var a ActionPayload
	_ = json.Unmarshal(readCompat(t, "readme23_client_pre_action_payload.json"), &a)
	if a.ActionType != "tool_call" {
		t.Errorf("action_type %q", a.ActionType)
	}

	// The typed-event example leaves out every optional enum: the 2.4
	// defaults apply.
	p, err := ValidatePayload(EventContextPerception, readCompat(t, "readme24_client_context_perception_payload.json"))
	if err != nil {
		t.Fatal(err)
	}
	cp := p.(*ContextPerceptionPayload)
	if cp.Intent != "understand" || cp.Target.Variant() != "location" || cp.Target.Location.Path != "." ||
		cp.Target.Location.LocationType != "workspace" || cp.Context.Workspace != "/repo" ||
		cp.Context.Query != "How is the protocol structured?" || cp.Constraints != nil ||
		cp.Domain != "general" || cp.PreferredModality != "any" || cp.Urgency != "normal" || cp.Freshness != "static" {
		t.Errorf("context_perception: %+v", cp)
	}
}

func TestCompatReadme23Request(t *testing.T) {
	m := readRPC(t, "readme23_event_request.json")
	e, _ := decodeCompatEvent(t, m.Params, EventPreAction)
	if e.Context == nil || e.Context.RecentFacts != nil || e.Context.SessionStats != nil {
		t.Errorf("context: %+v", e.Context)
	}
}

// Harness responses as the seed's examples write them decode as decisions,
// with the id kept as sent (string or number).
func TestCompatHarnessResponses(t *testing.T) {
	cases := []struct {
		file, id string
		want     Decision
	}{
		{"readme24_allow_response.json", `"req-123"`, Allow()},
		{"readme23_allow_response.json", `"req-123"`, Allow()},
		{"python_harness_block_response.json", `1`, Block("Dangerous action")},
		{"python_harness_allow_response.json", `"8f14e45f-ceea-467f-a8f2-5a4c1b2d9e10"`, Allow()},
	}
	for _, c := range cases {
		m := readRPC(t, c.file)
		if string(m.ID) != c.id {
			t.Errorf("%s: id %s, want %s", c.file, m.ID, c.id)
		}
		var d Decision
		if err := json.Unmarshal(m.Result, &d); err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if d.Kind != c.want.Kind || d.Reason != c.want.Reason || d.ModifiedPayload != nil || d.Metadata != nil {
			t.Errorf("%s: %+v, want %+v", c.file, d, c.want)
		}
	}
}

func TestCompatTypedDecisions(t *testing.T) {
	var id IntentDetectionDecision
	if err := json.Unmarshal(readCompat(t, "readme23_intent_allow_decision.json"), &id); err != nil {
		t.Fatal(err)
	}
	if id.Decision != "allow" || id.DetectedIntent != "locate" || id.Confidence != 0.95 || id.TargetHints == nil ||
		*id.TargetHints != (TargetHints{TargetType: "function", TargetName: "authenticate", Domain: "coding"}) {
		t.Errorf("intent allow: %+v", id)
	}
	if err := json.Unmarshal(readCompat(t, "readme23_intent_block_decision.json"), &id); err != nil ||
		id.Decision != "block" || id.Reason != "intent detection disabled by policy" {
		t.Errorf("intent block: %+v, %v", id, err)
	}
	var cp ContextPerceptionDecision
	if err := json.Unmarshal(readCompat(t, "readme23_context_block_decision.json"), &cp); err != nil ||
		cp.Decision != "block" || cp.Reason != "context forbidden by policy" {
		t.Errorf("context block: %+v, %v", cp, err)
	}
}

// Two decision shapes of the 2.3 README are not 2.4 shapes; a 2.4 reader
// rejects them and says which field is missing.
func TestCompatReadme23ShapesRejected(t *testing.T) {
	cases := map[string]string{
		"readme23_context_allow_decision.json":  "missing field structure_description",
		"readme23_context_refine_decision.json": "missing field scope_hints",
	}
	for file, want := range cases {
		var cp ContextPerceptionDecision
		err := json.Unmarshal(readCompat(t, file), &cp)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", file, err, want)
		}
	}
}

// Every compat file is used by a test above.
func TestCompatFilesAllUsed(t *testing.T) {
	used := []string{
		"readme24_pre_action_request.json", "readme24_allow_response.json", "readme24_post_action_notification.json",
		"readme24_run_lifecycle_event.json", "readme24_task_list_event.json", "readme24_verification_event.json",
		"readme24_client_pre_action_payload.json", "readme24_client_context_perception_payload.json",
		"readme23_event_request.json", "readme23_allow_response.json", "readme23_client_pre_action_payload.json",
		"python_harness_block_response.json", "python_harness_allow_response.json",
		"readme23_intent_allow_decision.json", "readme23_intent_block_decision.json",
		"readme23_context_allow_decision.json", "readme23_context_block_decision.json", "readme23_context_refine_decision.json",
	}
	files, err := filepath.Glob(filepath.Join("testdata", "compat", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		base := filepath.Base(f)
		found := false
		for _, u := range used {
			found = found || u == base
		}
		if !found {
			t.Errorf("%s is not decoded by any test", base)
		}
	}
	if len(files) != len(used) {
		t.Errorf("%d compat files, %d used", len(files), len(used))
	}
}
