package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// decisionTypes are the fixture groups answered by a tagged decision.
var decisionTypes = []string{
	"Decision", "IdleDecision", "IntentDetectionDecision", "ContextPerceptionDecision",
	"MemoryRecallDecision", "PlanningDecision", "ReasoningDecision", "RateLimitDecision",
	"ConfirmationDecision",
}

// Decisions must come out byte for byte as the 2.4 implementation writes
// them: compact, "decision" first, then the variant's fields in spec order.
func TestDecisionsByteExact(t *testing.T) {
	n := 0
	for _, c := range loadFixtures(t, "decisions.json") {
		t.Run(c.String(), func(t *testing.T) {
			v, err := decodeAs(t, c.typ, c.json)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			want := compact(t, c.json)
			direct, err := v.(json.Marshaler).MarshalJSON()
			if err != nil {
				t.Fatalf("MarshalJSON: %v", err)
			}
			if !bytes.Equal(direct, want) {
				t.Errorf("MarshalJSON\n got: %s\nwant: %s", direct, want)
			}
			viaPackage, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("json.Marshal: %v", err)
			}
			if !bytes.Equal(viaPackage, want) {
				t.Errorf("json.Marshal\n got: %s\nwant: %s", viaPackage, want)
			}
		})
		n++
	}
	// Spec §5 lists 5 generic variants and 20 typed ones; the fixtures
	// hold more cases than that (optional fields present and absent).
	if n < 25 {
		t.Fatalf("only %d decision fixtures", n)
	}
}

// Every variant of every decision type has a fixture.
func TestDecisionFixturesCoverEveryVariant(t *testing.T) {
	want := map[string][]string{
		"Decision":                  {"allow", "block", "modify", "defer", "escalate"},
		"IdleDecision":              {"allow", "defer"},
		"IntentDetectionDecision":   {"allow", "block"},
		"ContextPerceptionDecision": {"allow", "block", "refine"},
		"MemoryRecallDecision":      {"allow", "block"},
		"PlanningDecision":          {"allow", "block", "modify"},
		"ReasoningDecision":         {"allow", "block"},
		"RateLimitDecision":         {"retry", "queue", "skip"},
		"ConfirmationDecision":      {"escalate", "approve", "reject"},
	}
	seen := map[string]map[string]bool{}
	for _, c := range loadFixtures(t, "decisions.json") {
		var tag struct{ Decision string }
		if err := json.Unmarshal(c.json, &tag); err != nil {
			t.Fatal(err)
		}
		if seen[c.typ] == nil {
			seen[c.typ] = map[string]bool{}
		}
		seen[c.typ][tag.Decision] = true
	}
	for typ, kinds := range want {
		for _, k := range kinds {
			if !seen[typ][k] {
				t.Errorf("%s: no fixture for variant %q", typ, k)
			}
		}
		if len(seen[typ]) != len(kinds) {
			t.Errorf("%s: fixtures use %d variants, spec has %d", typ, len(seen[typ]), len(kinds))
		}
	}
}

func TestDecisionConstructors(t *testing.T) {
	cases := []struct {
		d    Decision
		want string
		ok   bool
	}{
		{Allow(), `{"decision":"allow"}`, true},
		{Block("no"), `{"decision":"block","reason":"no"}`, false},
		{Modify(json.RawMessage(`{"a": 1}`)), `{"decision":"modify","modified_payload":{"a":1}}`, true},
		{Modify(nil), `{"decision":"modify","modified_payload":null}`, true},
		{Defer(100, ""), `{"decision":"defer","retry_after_ms":100}`, false},
		{Defer(100, "busy"), `{"decision":"defer","retry_after_ms":100,"reason":"busy"}`, false},
		{Escalate("why", ""), `{"decision":"escalate","reason":"why"}`, false},
		{Escalate("why", "ops"), `{"decision":"escalate","reason":"why","escalation_target":"ops"}`, false},
		{Block(""), `{"decision":"block","reason":""}`, false},
	}
	for _, c := range cases {
		got, err := c.d.MarshalJSON()
		if err != nil {
			t.Fatalf("%+v: %v", c.d, err)
		}
		if string(got) != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
		if c.d.Allowed() != c.ok {
			t.Errorf("%s: Allowed() = %v", c.want, c.d.Allowed())
		}
	}
}

func TestDecisionAppendJSON(t *testing.T) {
	prefix := []byte(`[`)
	got, err := Block("x").AppendJSON(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `[{"decision":"block","reason":"x"}` {
		t.Errorf("got %s", got)
	}
}

// Strings are written as serde_json writes them: no HTML escaping, control
// characters and quotes escaped, non-ASCII as UTF-8.
func TestDecisionStringEscaping(t *testing.T) {
	reason := "a<b>&\"c\"\\\n\t\u0001é☃"
	want := `{"decision":"block","reason":"a<b>&\"c\"\\\n\t\u0001é☃"}`
	got, err := Block(reason).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("generic\n got: %s\nwant: %s", got, want)
	}
	typed, err := ReasoningDecision{Decision: "block", Reason: reason}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(typed) != want {
		t.Errorf("typed\n got: %s\nwant: %s", typed, want)
	}
	var back Decision
	if err := json.Unmarshal(got, &back); err != nil || back.Reason != reason {
		t.Errorf("decode: %q, %v", back.Reason, err)
	}
}

// Raw fields are compacted and checked, so MarshalJSON alone never writes
// invalid or indented JSON.
func TestDecisionRawFields(t *testing.T) {
	d := Decision{Kind: DecisionAllow, ModifiedPayload: json.RawMessage("{\n  \"a\": [1, 2]\n}"), Metadata: json.RawMessage(` {"k": "v"} `)}
	got, err := d.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"decision":"allow","modified_payload":{"a":[1,2]},"metadata":{"k":"v"}}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for _, bad := range []Decision{
		{Kind: DecisionAllow, ModifiedPayload: json.RawMessage(`{`)},
		{Kind: DecisionBlock, Reason: "r", Metadata: json.RawMessage(`nope`)},
		{Kind: DecisionModify, ModifiedPayload: json.RawMessage(`[1,]`)},
	} {
		if b, err := bad.MarshalJSON(); err == nil {
			t.Errorf("%+v: wrote %s, want an error", bad, b)
		}
	}
}

// A decision that names no variant never encodes: in particular a zero
// value is not an implicit allow.
func TestDecisionUnknownKindDoesNotEncode(t *testing.T) {
	values := []json.Marshaler{
		Decision{}, Decision{Kind: "approve"},
		IdleDecision{}, IdleDecision{Decision: "block"},
		IntentDetectionDecision{}, IntentDetectionDecision{Decision: "defer"},
		ContextPerceptionDecision{}, ContextPerceptionDecision{Decision: "modify"},
		MemoryRecallDecision{}, MemoryRecallDecision{Decision: "refine"},
		PlanningDecision{}, PlanningDecision{Decision: "Allow"},
		ReasoningDecision{}, ReasoningDecision{Decision: "modify"},
		RateLimitDecision{}, RateLimitDecision{Decision: "allow"},
		ConfirmationDecision{}, ConfirmationDecision{Decision: "allow"},
	}
	for _, v := range values {
		if b, err := v.MarshalJSON(); err == nil {
			t.Errorf("%T %+v: wrote %s, want an error", v, v, b)
		} else if !strings.Contains(err.Error(), "unknown kind") {
			t.Errorf("%T: error %q does not say unknown kind", v, err)
		}
		if b, err := json.Marshal(v); err == nil {
			t.Errorf("json.Marshal(%T %+v) wrote %s", v, v, b)
		}
	}
}

// Typed decision values built in Go encode the variant's fields only.
func TestTypedDecisionsFromGo(t *testing.T) {
	intent := PerceptionIntent("locate")
	cases := []struct {
		v    json.Marshaler
		want string
	}{
		{IdleDecision{Decision: "allow", Reason: "dropped"}, `{"decision":"allow"}`},
		{IntentDetectionDecision{Decision: "block", Reason: "r", DetectedIntent: "dropped"}, `{"decision":"block","reason":"r"}`},
		{ContextPerceptionDecision{Decision: "allow"}, `{"decision":"allow","injected_context":{"facts":[]}}`},
		{ContextPerceptionDecision{Decision: "refine", RefinedIntent: &intent},
			`{"decision":"refine","refined_intent":"locate","refined_target":null,"scope_hints":[]}`},
		{MemoryRecallDecision{Decision: "allow", Reason: "dropped"}, `{"decision":"allow","injected_facts":[]}`},
		{PlanningDecision{Decision: "modify", ModifiedTask: "t", SelectedStrategy: StrategyNone}, `{"decision":"modify","modified_task":"t"}`},
		{PlanningDecision{Decision: "allow", SelectedStrategy: StrategyGraphPlanning}, `{"decision":"allow","selected_strategy":"graph_planning"}`},
		{ReasoningDecision{Decision: "allow", Hints: []string{}}, `{"decision":"allow","hints":[]}`},
		{RateLimitDecision{Decision: "queue", RetryAfterMs: 9}, `{"decision":"queue"}`},
		{ConfirmationDecision{Decision: "approve", Reason: "dropped"}, `{"decision":"approve"}`},
	}
	for _, c := range cases {
		got, err := c.v.MarshalJSON()
		if err != nil {
			t.Fatalf("%T: %v", c.v, err)
		}
		if string(got) != c.want {
			t.Errorf("%T\n got: %s\nwant: %s", c.v, got, c.want)
		}
	}
	// A planning allow needs a strategy.
	if b, err := (PlanningDecision{Decision: "allow"}).MarshalJSON(); err == nil {
		t.Errorf("planning allow without strategy wrote %s", b)
	}
}

func TestDecisionRejects(t *testing.T) {
	cases := []struct {
		typ, input, want string
	}{
		// generic
		{"Decision", `{}`, "missing field decision"},
		{"Decision", `{"reason":"x"}`, "missing field decision"},
		{"Decision", `{"decision":"approve"}`, `unknown variant "approve"`},
		{"Decision", `{"decision":"Allow"}`, `unknown variant "Allow"`},
		{"Decision", `{"decision":"ALLOW"}`, `unknown variant`},
		{"Decision", `{"decision":1}`, "decision"},
		{"Decision", `{"decision":null}`, "missing field decision"},
		{"Decision", `"allow"`, "decision"},
		{"Decision", `null`, "decision"},
		{"Decision", `[]`, "decision"},
		{"Decision", `{"decision":"block"}`, "missing field reason"},
		{"Decision", `{"decision":"block","reason":null}`, "missing field reason"},
		{"Decision", `{"decision":"block","reason":5}`, "reason"},
		{"Decision", `{"decision":"modify"}`, "missing field modified_payload"},
		{"Decision", `{"decision":"modify","metadata":{}}`, "missing field modified_payload"},
		{"Decision", `{"decision":"defer"}`, "missing field retry_after_ms"},
		{"Decision", `{"decision":"defer","retry_after_ms":null}`, "missing field retry_after_ms"},
		{"Decision", `{"decision":"defer","retry_after_ms":-1}`, "retry_after_ms"},
		{"Decision", `{"decision":"defer","retry_after_ms":1.5}`, "retry_after_ms"},
		{"Decision", `{"decision":"defer","retry_after_ms":"5"}`, "retry_after_ms"},
		{"Decision", `{"decision":"escalate"}`, "missing field reason"},
		{"Decision", `{"decision":"escalate","escalation_target":"ops"}`, "missing field reason"},
		// typed: unknown or missing tag
		{"IdleDecision", `{"decision":"block"}`, `unknown variant "block"`},
		{"IdleDecision", `{}`, "missing field decision"},
		{"IdleDecision", `{"decision":5}`, "decision"},
		{"IdleDecision", `null`, "expected a JSON object"},
		{"IntentDetectionDecision", `{"decision":"defer"}`, `unknown variant "defer"`},
		{"ContextPerceptionDecision", `{"decision":"modify"}`, `unknown variant "modify"`},
		{"MemoryRecallDecision", `{"decision":"refine"}`, `unknown variant "refine"`},
		{"PlanningDecision", `{"decision":"defer"}`, `unknown variant "defer"`},
		{"ReasoningDecision", `{"decision":"modify"}`, `unknown variant "modify"`},
		{"RateLimitDecision", `{"decision":"allow"}`, `unknown variant "allow"`},
		{"ConfirmationDecision", `{"decision":"allow"}`, `unknown variant "allow"`},
		{"ConfirmationDecision", `{"decision":"block"}`, `unknown variant "block"`},
		// typed: required fields, absent or null
		{"IntentDetectionDecision", `{"decision":"allow","confidence":0.5}`, "missing field detected_intent"},
		{"IntentDetectionDecision", `{"decision":"allow","detected_intent":"locate"}`, "missing field confidence"},
		{"IntentDetectionDecision", `{"decision":"allow","detected_intent":null,"confidence":1}`, "detected_intent must not be null"},
		{"IntentDetectionDecision", `{"decision":"allow","detected_intent":"x","confidence":1e39}`, "confidence"},
		{"IntentDetectionDecision", `{"decision":"block"}`, "missing field reason"},
		{"ContextPerceptionDecision", `{"decision":"allow"}`, "missing field injected_context"},
		{"ContextPerceptionDecision", `{"decision":"allow","injected_context":null}`, "injected_context must not be null"},
		{"ContextPerceptionDecision", `{"decision":"allow","injected_context":{}}`, "missing field facts"},
		{"ContextPerceptionDecision", `{"decision":"allow","injected_context":{"facts":[{"content":"c","source":"s"}]}}`, "missing field confidence"},
		{"ContextPerceptionDecision", `{"decision":"allow","injected_context":{"facts":[],"file_contents":[{"path":"p","snippet":"s"}]}}`, "missing field relevance_score"},
		{"ContextPerceptionDecision", `{"decision":"allow","injected_context":{"facts":[],"project_summary":{"project_name":"p"}}}`, "missing field structure_description"},
		{"ContextPerceptionDecision", `{"decision":"block"}`, "missing field reason"},
		{"ContextPerceptionDecision", `{"decision":"refine","refined_intent":null,"refined_target":null}`, "missing field scope_hints"},
		{"ContextPerceptionDecision", `{"decision":"refine","scope_hints":null}`, "scope_hints must not be null"},
		{"ContextPerceptionDecision", `{"decision":"refine","refined_intent":"guess","scope_hints":[]}`, `unknown variant "guess"`},
		{"ContextPerceptionDecision", `{"decision":"refine","refined_target":{},"scope_hints":[]}`, "exactly one key"},
		{"MemoryRecallDecision", `{"decision":"allow"}`, "missing field injected_facts"},
		{"MemoryRecallDecision", `{"decision":"block","reason":null}`, "reason must not be null"},
		{"PlanningDecision", `{"decision":"allow"}`, "missing field selected_strategy"},
		{"PlanningDecision", `{"decision":"allow","selected_strategy":"guess"}`, `unknown variant "guess"`},
		{"PlanningDecision", `{"decision":"allow","selected_strategy":{"custom":1}}`, "planning strategy"},
		{"PlanningDecision", `{"decision":"block"}`, "missing field reason"},
		{"PlanningDecision", `{"decision":"modify","hints":[]}`, "missing field modified_task"},
		{"ReasoningDecision", `{"decision":"block"}`, "missing field reason"},
		{"RateLimitDecision", `{"decision":"retry"}`, "missing field retry_after_ms"},
		{"RateLimitDecision", `{"decision":"retry","retry_after_ms":-5}`, "retry_after_ms"},
		{"RateLimitDecision", `{"decision":"skip"}`, "missing field reason"},
		{"ConfirmationDecision", `{"decision":"reject"}`, "missing field reason"},
	}
	for _, c := range cases {
		v, err := decodeAs(t, c.typ, []byte(c.input))
		if err == nil {
			t.Errorf("%s %s: decoded to %+v, want an error", c.typ, c.input, v)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: error %q does not contain %q", c.typ, c.input, err, c.want)
		}
	}
}

// A decision decodes only the fields of its variant, so fields sent for
// another variant never leak into the value.
func TestDecisionKeepsOnlyVariantFields(t *testing.T) {
	var d Decision
	in := `{"decision":"block","reason":"r","modified_payload":{"x":1},"retry_after_ms":5,"escalation_target":"t","metadata":{"m":1}}`
	if err := json.Unmarshal([]byte(in), &d); err != nil {
		t.Fatal(err)
	}
	want := Decision{Kind: DecisionBlock, Reason: "r", Metadata: json.RawMessage(`{"m":1}`)}
	if d.Kind != want.Kind || d.Reason != want.Reason || string(d.Metadata) != string(want.Metadata) ||
		d.ModifiedPayload != nil || d.RetryAfterMs != 0 || d.EscalationTarget != "" {
		t.Errorf("got %+v", d)
	}
	var p PlanningDecision
	in = `{"decision":"modify","modified_task":"t","reason":"r","selected_strategy":"none","metadata":{}}`
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	if p.Reason != "" || p.SelectedStrategy != (PlanningStrategy{}) || p.Metadata != nil || p.ModifiedTask != "t" {
		t.Errorf("got %+v", p)
	}
}

// A batch response decodes every decision and names the bad one.
func TestBatchResponseNamesBadDecision(t *testing.T) {
	var r BatchResponse
	err := json.Unmarshal([]byte(`{"decisions":[{"decision":"allow"},{"decision":"block"}]}`), &r)
	if err == nil || !strings.Contains(err.Error(), "decisions[1]") || !strings.Contains(err.Error(), "reason") {
		t.Errorf("got %v", err)
	}
	if err := json.Unmarshal([]byte(`{}`), &r); err == nil || !strings.Contains(err.Error(), "missing field decisions") {
		t.Errorf("got %v", err)
	}
	out, err := json.Marshal(BatchResponse{})
	if err != nil || string(out) != `{"decisions":[]}` {
		t.Errorf("empty response: %s, %v", out, err)
	}
}
