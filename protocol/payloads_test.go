package protocol

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// requiredFields lists, per type, the fields spec §3-§6 marks required (no
// "?", not null-able), written from the spec, and a complete instance to
// take them away from. anyValue fields are required but may be null.
var requiredFields = []struct {
	typ      string
	base     string // "group/case" of payloads.json or envelopes.json, or inline JSON
	required []string
	anyValue []string
}{
	{"Event", "Event/with_context_and_metadata", []string{"event_type", "session_id", "agent_id", "timestamp", "depth"}, []string{"payload"}},
	{"Fact", "Fact/plain", []string{"content", "source", "confidence"}, nil},
	{"MemorySummary", "MemorySummary/plain", []string{"memory_type", "total_items", "recent_topics"}, nil},
	{"SessionStats", "SessionStats/plain", []string{"total_actions", "total_tokens", "duration_ms", "error_count"}, nil},
	{"HandshakeRequest", "HandshakeRequest/with_capabilities", []string{"protocol_version", "agent_info"}, nil},
	{"AgentInfo", "AgentInfo/plain", []string{"framework", "version"}, nil},
	{"HandshakeResponse", "HandshakeResponse/full", []string{"protocol_version", "harness_info"}, nil},
	{"HarnessInfo", "HarnessInfo/plain", []string{"name", "version"}, nil},
	{"QueryRequest", "QueryRequest/object_payload", []string{"session_id", "agent_id", "query_type"}, []string{"payload"}},
	{"QueryResponse", "QueryResponse/full", nil, []string{"answer"}},
	{"BatchRequest", "BatchRequest/two_events", []string{"events"}, nil},
	{"BatchResponse", "BatchResponse/mixed", []string{"decisions"}, nil},
	{"IdlePayload", "IdlePayload/full", []string{"idle_duration_ms", "idle_reason"}, nil},
	{"HeartbeatPayload", "HeartbeatPayload/full", []string{"uptime_ms", "total_events_processed", "current_state"}, nil},
	{"IntentDetectionPayload", "IntentDetectionPayload/language_hint", []string{"session_id", "prompt", "workspace"}, nil},
	{"ContextPerceptionPayload", "ContextPerceptionPayload/full", []string{"session_id", "intent", "target", "context"}, nil},
	{"PerceptionContext", `{"workspace":"/w","current_task":"t","query":"q","relevant_history":[]}`, []string{"workspace"}, nil},
	{"HistoryItem", `{"item_type":"event","content":"c","timestamp":1}`, []string{"item_type", "content", "timestamp"}, nil},
	{"MemoryRecallPayload", "MemoryRecallPayload/plain", []string{"session_id", "query", "memory_type", "max_results", "working_directory"}, nil},
	{"PlanningPayload", "PlanningPayload/constraints", []string{"session_id", "task_description", "available_strategies"}, nil},
	{"ReasoningPayload", "ReasoningPayload/other_hints", []string{"session_id", "reasoning_type", "problem_statement"}, nil},
	{"SuccessPayload", "SuccessPayload/plain", []string{"session_id", "action_type", "action_summary", "duration_ms"}, nil},
	{"RateLimitPayload", "RateLimitPayload/custom", []string{"session_id", "limit_type", "retry_after_ms", "current_usage"}, nil},
	{"ConfirmationPayload", "ConfirmationPayload/options_custom", []string{"session_id", "confirmation_type", "message"}, nil},
	{"RunLifecyclePayload", "RunLifecyclePayload/full", []string{"run_id", "session_id", "status", "updated_at"}, nil},
	{"TaskListPayload", "TaskListPayload/full", []string{"run_id", "session_id", "tasks", "updated_at"}, nil},
	{"TaskItem", `{"id":"1","title":"t","status":"pending","depends_on":[],"error":"e"}`, []string{"id", "title", "status"}, nil},
	{"EvidenceRef", `{"kind":"log","summary":"s","artifact":{"id":"a"}}`, []string{"kind", "summary"}, nil},
	{"ArtifactRef", `{"id":"a","kind":"k","size_bytes":1}`, []string{"id"}, nil},
	{"VerificationPayload", "VerificationPayload/full", []string{"run_id", "session_id", "status", "updated_at"}, nil},
	{"VerificationCheck", `{"id":"c","subject":"s","status":"running","command":"make"}`, []string{"id", "subject", "status"}, nil},
	{"InjectedContext", `{"facts":[],"knowledge":["k"]}`, []string{"facts"}, nil},
	{"FileSnippet", `{"path":"p","snippet":"s","relevance_score":0.5}`, []string{"path", "snippet", "relevance_score"}, nil},
	{"ProjectSummary", `{"project_name":"p","language":"go","structure_description":"d"}`, []string{"project_name", "structure_description"}, nil},
}

func baseJSON(t *testing.T, base string) json.RawMessage {
	t.Helper()
	if strings.HasPrefix(base, "{") {
		return json.RawMessage(base)
	}
	typ, name, _ := strings.Cut(base, "/")
	return fixture(t, typ, name)
}

// withMember returns obj with key set to raw, or removed when raw is nil.
func withMember(t *testing.T, obj json.RawMessage, key string, raw json.RawMessage) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		t.Fatal(err)
	}
	if raw == nil {
		delete(m, key)
	} else {
		m[key] = raw
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRequiredFieldMissingOrNull(t *testing.T) {
	for _, rf := range requiredFields {
		t.Run(rf.typ, func(t *testing.T) {
			base := baseJSON(t, rf.base)
			if _, err := decodeAs(t, rf.typ, base); err != nil {
				t.Fatalf("base does not decode: %v", err)
			}
			for _, k := range append(append([]string{}, rf.required...), rf.anyValue...) {
				_, err := decodeAs(t, rf.typ, withMember(t, base, k, nil))
				if err == nil {
					t.Errorf("without %s: no error", k)
				} else if !strings.Contains(err.Error(), "missing field "+k) {
					t.Errorf("without %s: error %q does not name it", k, err)
				}
			}
			for _, k := range rf.required {
				_, err := decodeAs(t, rf.typ, withMember(t, base, k, json.RawMessage("null")))
				if err == nil {
					t.Errorf("%s null: no error", k)
				} else if !strings.Contains(err.Error(), k) {
					t.Errorf("%s null: error %q does not name it", k, err)
				}
			}
			for _, k := range rf.anyValue {
				if _, err := decodeAs(t, rf.typ, withMember(t, base, k, json.RawMessage("null"))); err != nil {
					t.Errorf("%s null (any JSON value): %v", k, err)
				}
			}
			// Every member not listed is optional: the value decodes
			// without it.
			var m map[string]json.RawMessage
			_ = json.Unmarshal(base, &m)
			for k := range m {
				if contains(rf.required, k) || contains(rf.anyValue, k) {
					continue
				}
				if _, err := decodeAs(t, rf.typ, withMember(t, base, k, nil)); err != nil {
					t.Errorf("without optional %s: %v", k, err)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Errors name the payload, the list and the index of a bad item.
func TestNestedErrorsNamePath(t *testing.T) {
	cases := []struct {
		typ   EventType
		input string
		want  string // regular expression
	}{
		{EventRunLifecycle, `{"run_id":"r","session_id":"s","status":"created"}`, `^run_lifecycle: missing field updated_at$`},
		{EventRunLifecycle, `{"run_id":"r","session_id":"s","status":"done","updated_at":"t"}`, `^run_lifecycle: .*unknown variant "done"`},
		{EventTaskList, `{"run_id":"r","session_id":"s","updated_at":"t","tasks":[{"id":"1","title":"a","status":"pending"},{"id":"2","status":"pending"}]}`,
			`^task_list\.tasks\[1\]: .*missing field title$`},
		{EventTaskList, `{"run_id":"r","session_id":"s","updated_at":"t","tasks":[{"id":"1","title":"a","status":"started"}]}`,
			`^task_list\.tasks\[0\]: .*unknown variant "started"`},
		{EventTaskList, `{"run_id":"r","session_id":"s","updated_at":"t","tasks":[{"id":"1","title":"a","status":"pending","evidence":[{"kind":"log"}]}]}`,
			`^task_list\.tasks\[0\]: .*evidence.*missing field summary$`},
		{EventTaskList, `{"run_id":"r","session_id":"s","updated_at":"t","tasks":[{"id":"1","title":"a","status":"pending","artifacts":[{"kind":"file"}]}]}`,
			`^task_list\.tasks\[0\]: .*artifact.*missing field id$`},
		{EventTaskList, `{"run_id":"r","session_id":"s","updated_at":"t","tasks":{}}`, `^task_list\.tasks: expected an array$`},
		{EventTaskList, `{"run_id":"r","session_id":"s","updated_at":"t","tasks":[1]}`, `^task_list\.tasks\[0\]: .*expected a JSON object`},
		{EventVerification, `{"run_id":"r","session_id":"s","status":"passed","updated_at":"t","checks":[{"id":"a","subject":"s","status":"passed"},{"id":"b","subject":"s"}]}`,
			`^verification\.checks\[1\]: .*missing field status$`},
		{EventVerification, `{"run_id":"r","session_id":"s","status":"green","updated_at":"t"}`, `^verification: .*unknown variant "green"`},
		{EventContextPerception, `{"session_id":"s","intent":"understand","target":{"entity":{"name":"n"}},"context":{"workspace":"/"}}`,
			`^context_perception: target\.entity: missing field entity_type$`},
		{EventContextPerception, `{"session_id":"s","intent":"understand","target":{"location":{"path":"."}},"context":{}}`,
			`missing field location_type`},
		{EventContextPerception, `{"session_id":"s","intent":"understand","target":{"location":{"path":".","location_type":"w"}},"context":{}}`,
			`^context_perception: context: missing field workspace$`},
		{EventContextPerception, `{"session_id":"s","intent":"understand","target":{"location":{"path":".","location_type":"w"}},"context":{"workspace":"/","relevant_history":[{"item_type":"x","content":"c"}]}}`,
			`missing field timestamp`},
		{EventContextPerception, `{"session_id":"s","intent":"understand","target":{"location":{"path":".","location_type":"w"}},"context":{"workspace":"/"},"urgency":"asap"}`,
			`unknown variant "asap"`},
		{EventPlanning, `{"session_id":"s","task_description":"t","available_strategies":["none",{"custom":1}]}`, `planning strategy`},
		{EventRateLimit, `{"session_id":"s","limit_type":{"custom":""},"retry_after_ms":1,"current_usage":"u"}`, `custom must not be empty`},
		{EventIdle, `null`, `^idle: expected a JSON object$`},
		{EventIdle, `[]`, `^idle: expected a JSON object$`},
		{EventIdle, `{"idle_duration_ms":-1,"idle_reason":"r"}`, `^idle: .*idle_duration_ms`},
		{EventContextPerception, `{"session_id":"s","intent":"locate","target":{"pattern":{"pattern":"p","pattern_type":"t"}},"context":{"workspace":"/"},"constraints":{"max_results":-1}}`,
			`constraints.*max_results`},
		{EventContextPerception, `{"session_id":"s","intent":"locate","target":{"resource":{"name":"n","resource_type":"t","constraints":}}},"context":{"workspace":"/"}}`,
			`invalid character`},
	}
	for _, c := range cases {
		_, err := ValidatePayload(c.typ, json.RawMessage(c.input))
		if err == nil {
			t.Errorf("%s %s: no error", c.typ, c.input)
			continue
		}
		if !regexp.MustCompile(c.want).MatchString(err.Error()) {
			t.Errorf("%s %s:\n error %q\n want /%s/", c.typ, c.input, err, c.want)
		}
	}
}

// ValidatePayload decodes the eleven checked payload types into their Go
// types and leaves the others alone.
func TestValidatePayload(t *testing.T) {
	checked := map[EventType]struct {
		fixture string
		want    any
	}{
		EventIdle:              {"IdlePayload/full", &IdlePayload{}},
		EventIntentDetection:   {"IntentDetectionPayload/minimal", &IntentDetectionPayload{}},
		EventContextPerception: {"ContextPerceptionPayload/full", &ContextPerceptionPayload{}},
		EventMemoryRecall:      {"MemoryRecallPayload/plain", &MemoryRecallPayload{}},
		EventPlanning:          {"PlanningPayload/all_strategies", &PlanningPayload{}},
		EventReasoning:         {"ReasoningPayload/minimal", &ReasoningPayload{}},
		EventRateLimit:         {"RateLimitPayload/unit", &RateLimitPayload{}},
		EventConfirmation:      {"ConfirmationPayload/minimal", &ConfirmationPayload{}},
		EventRunLifecycle:      {"RunLifecyclePayload/minimal", &RunLifecyclePayload{}},
		EventTaskList:          {"TaskListPayload/full", &TaskListPayload{}},
		EventVerification:      {"VerificationPayload/full", &VerificationPayload{}},
	}
	for _, et := range AllEventTypes {
		c, ok := checked[et]
		if !ok {
			// Free-form payloads: anything goes, nothing is returned.
			v, err := ValidatePayload(et, json.RawMessage(`{"anything":[1]}`))
			if v != nil || err != nil {
				t.Errorf("%s: got %v, %v; want nil, nil", et, v, err)
			}
			continue
		}
		typ, name, _ := strings.Cut(c.fixture, "/")
		v, err := ValidatePayload(et, fixture(t, typ, name))
		if err != nil {
			t.Errorf("%s: %v", et, err)
			continue
		}
		if reflect.TypeOf(v) != reflect.TypeOf(c.want) {
			t.Errorf("%s: got %T, want %T", et, v, c.want)
		}
		if _, err := ValidatePayload(et, nil); err == nil || !strings.Contains(err.Error(), "missing payload") {
			t.Errorf("%s without payload: %v", et, err)
		}
		if _, err := ValidatePayload(et, json.RawMessage(`{}`)); err == nil {
			t.Errorf("%s: empty object accepted", et)
		}
	}
}

func TestPerceptionTargetRejects(t *testing.T) {
	cases := []struct{ input, want string }{
		{`{}`, "exactly one key, got 0"},
		{`null`, "exactly one key, got 0"},
		{`{"entity":{"name":"n","entity_type":"t"},"location":{"path":"p","location_type":"l"}}`, "exactly one key, got 2"},
		{`{"file":{"path":"p"}}`, `unknown variant "file"`},
		{`{"Entity":{"name":"n","entity_type":"t"}}`, `unknown variant "Entity"`},
		{`{"entity":null}`, "expected a JSON object"},
		{`{"entity":"User"}`, "expected a JSON object"},
		{`"location"`, "perception target"},
		{`[]`, "perception target"},
		{`{"entity":{"name":"n"}}`, "target.entity: missing field entity_type"},
		{`{"entity":{"name":null,"entity_type":"t"}}`, "target.entity: field name must not be null"},
		{`{"location":{"path":"p"}}`, "target.location: missing field location_type"},
		{`{"event":{"event_type":"e"}}`, "target.event: missing field description"},
		{`{"event":{"description":"d","event_type":"e","time_range":{"from":"yesterday"}}}`, "from"},
		{`{"relation":{"relation_type":"r"}}`, "target.relation: missing field entities"},
		{`{"relation":{"entities":null,"relation_type":"r"}}`, "target.relation: field entities must not be null"},
		{`{"rule":{"name":"n"}}`, "target.rule: missing field rule_type"},
		{`{"state":{"target":"t","aspect":"a"}}`, "target.state: missing field include_history"},
		{`{"state":{"target":"t","aspect":"a","include_history":"yes"}}`, "include_history"},
		{`{"resource":{"name":"n"}}`, "target.resource: missing field resource_type"},
		{`{"pattern":{"pattern":"p"}}`, "target.pattern: missing field pattern_type"},
	}
	for _, c := range cases {
		var pt PerceptionTarget
		err := json.Unmarshal([]byte(c.input), &pt)
		if err == nil {
			t.Errorf("%s: decoded to %+v", c.input, pt)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not contain %q", c.input, err, c.want)
		}
	}
	// Encoding needs exactly one variant too.
	for _, pt := range []PerceptionTarget{{}, {Location: &LocationTarget{}, Pattern: &PatternTarget{}}} {
		if b, err := json.Marshal(pt); err == nil {
			t.Errorf("%+v encoded as %s", pt, b)
		}
	}
	for want, pt := range map[string]PerceptionTarget{
		"entity": {Entity: &EntityTarget{}}, "location": {Location: &LocationTarget{}},
		"event": {Event: &EventTarget{}}, "relation": {Relation: &RelationTarget{}},
		"rule": {Rule: &RuleTarget{}}, "state": {State: &StateTarget{}},
		"resource": {Resource: &ResourceTarget{}}, "pattern": {Pattern: &PatternTarget{}},
	} {
		if v := pt.Variant(); v != want {
			t.Errorf("Variant() = %q, want %q", v, want)
		}
	}
	if v := (PerceptionTarget{}).Variant(); v != "" {
		t.Errorf("zero Variant() = %q", v)
	}
}

// Null-able fields decode the same from null and from absence, and encode
// as null.
func TestNullableFields(t *testing.T) {
	decodeTarget := func(s string) PerceptionTarget {
		t.Helper()
		var pt PerceptionTarget
		if err := json.Unmarshal([]byte(s), &pt); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return pt
	}
	for _, pair := range [][2]string{
		{`{"entity":{"name":"n","entity_type":"t"}}`, `{"entity":{"name":"n","entity_type":"t","identifier":null}}`},
		{`{"event":{"description":"d","event_type":"e"}}`, `{"event":{"description":"d","event_type":"e","time_range":null}}`},
		{`{"event":{"description":"d","event_type":"e","time_range":{}}}`, `{"event":{"description":"d","event_type":"e","time_range":{"from":null,"to":null}}}`},
		{`{"rule":{"name":"n","rule_type":"t"}}`, `{"rule":{"name":"n","rule_type":"t","scope":null}}`},
		{`{"resource":{"name":"n","resource_type":"t"}}`, `{"resource":{"name":"n","resource_type":"t","constraints":null}}`},
	} {
		absent, null := decodeTarget(pair[0]), decodeTarget(pair[1])
		if !reflect.DeepEqual(absent, null) {
			t.Errorf("%s and %s decode differently", pair[0], pair[1])
		}
		out, err := json.Marshal(absent)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != pair[1] {
			t.Errorf("encoded %s, want %s", out, pair[1])
		}
	}

	// A Go value with the null-able pointers unset writes null.
	out, err := json.Marshal(PerceptionConstraints{IncludeSources: true})
	if err != nil || string(out) != `{"max_results":null,"max_context_length":null,"include_sources":true}` {
		t.Errorf("constraints: %s, %v", out, err)
	}
	var c PerceptionConstraints
	if err := json.Unmarshal([]byte(`{"max_results":null}`), &c); err != nil || c.MaxResults != nil || c.MaxContextLength != nil || !c.IncludeSources {
		t.Errorf("constraints decode: %+v, %v", c, err)
	}
	if err := json.Unmarshal([]byte(`{"max_results":3,"max_context_length":0}`), &c); err != nil ||
		c.MaxResults == nil || *c.MaxResults != 3 || c.MaxContextLength == nil || *c.MaxContextLength != 0 {
		t.Errorf("constraints with limits: %+v, %v", c, err)
	}
	var d ContextPerceptionDecision
	for _, in := range []string{`{"decision":"refine","scope_hints":[]}`, `{"decision":"refine","refined_intent":null,"refined_target":null,"scope_hints":[]}`} {
		if err := json.Unmarshal([]byte(in), &d); err != nil || d.RefinedIntent != nil || d.RefinedTarget != nil {
			t.Errorf("%s: %+v, %v", in, d, err)
		}
	}
}

// Required lists built in Go with nil slices are written as [], never as
// null, which a 2.4 reader would reject.
func TestNilListsEncodeEmpty(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{AgentInfo{Framework: "f", Version: "v"}, `{"framework":"f","version":"v","capabilities":[]}`},
		{HarnessInfo{Name: "n", Version: "v"}, `{"name":"n","version":"v","capabilities":[]}`},
		{MemorySummary{MemoryType: "m"}, `{"memory_type":"m","total_items":0,"recent_topics":[]}`},
		{BatchRequest{}, `{"events":[]}`},
		{BatchResponse{}, `{"decisions":[]}`},
		{PlanningPayload{SessionID: "s", TaskDescription: "t"}, `{"session_id":"s","task_description":"t","available_strategies":[]}`},
		{TaskListPayload{RunID: "r", SessionID: "s", UpdatedAt: "u"}, `{"run_id":"r","session_id":"s","tasks":[],"updated_at":"u"}`},
		{PerceptionTarget{Relation: &RelationTarget{RelationType: "r"}}, `{"relation":{"entities":[],"relation_type":"r"}}`},
		{InjectedContext{}, `{"facts":[]}`},
	}
	for _, c := range cases {
		out, err := json.Marshal(c.v)
		if err != nil {
			t.Errorf("%T: %v", c.v, err)
			continue
		}
		if string(out) != c.want {
			t.Errorf("%T\n got: %s\nwant: %s", c.v, out, c.want)
		}
	}
}

// A context_perception payload built in Go writes the 2.4 defaults for the
// optional enums it leaves empty.
func TestContextPerceptionDefaultsOnEncode(t *testing.T) {
	p := ContextPerceptionPayload{
		SessionID: "s", Intent: "locate",
		Target:  PerceptionTarget{Location: &LocationTarget{Path: ".", LocationType: "workspace"}},
		Context: PerceptionContext{Workspace: "/repo"},
		Urgency: "high",
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"session_id":"s","intent":"locate","target":{"location":{"path":".","location_type":"workspace"}},` +
		`"domain":"general","preferred_modality":"any","urgency":"high","freshness":"static","context":{"workspace":"/repo"}}`
	if string(out) != want {
		t.Errorf("\n got: %s\nwant: %s", out, want)
	}
	var back ContextPerceptionPayload
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back.Domain != "general" || back.PreferredModality != "any" || back.Urgency != "high" || back.Freshness != "static" {
		t.Errorf("decoded %+v", back)
	}
}
