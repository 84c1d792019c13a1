package protocol

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// enumType describes one enumeration: how to make a value and which unit
// values the package lists for it.
type enumType struct {
	newValue func() any
	names    []string
	otherKey string // "custom" or "other" for open enumerations, "" for closed ones
}

func eventTypeNames() []string {
	out := make([]string, len(AllEventTypes))
	for i, t := range AllEventTypes {
		out[i] = string(t)
	}
	return out
}

var enumTypes = map[string]enumType{
	"EventType":           {func() any { return new(EventType) }, eventTypeNames(), ""},
	"PerceptionIntent":    {func() any { return new(PerceptionIntent) }, PerceptionIntentNames, ""},
	"PerceptionDomain":    {func() any { return new(PerceptionDomain) }, PerceptionDomainNames, ""},
	"PerceptionModality":  {func() any { return new(PerceptionModality) }, PerceptionModalityNames, ""},
	"PerceptionUrgency":   {func() any { return new(PerceptionUrgency) }, PerceptionUrgencyNames, ""},
	"PerceptionFreshness": {func() any { return new(PerceptionFreshness) }, PerceptionFreshnessNames, ""},
	"RunStatus":           {func() any { return new(RunStatus) }, RunStatusNames, ""},
	"TaskStatus":          {func() any { return new(TaskStatus) }, TaskStatusNames, ""},
	"VerificationStatus":  {func() any { return new(VerificationStatus) }, VerificationStatusNames, ""},
	"PlanningStrategy":    {func() any { return new(PlanningStrategy) }, PlanningStrategyNames, "custom"},
	"ReasoningType":       {func() any { return new(ReasoningType) }, ReasoningTypeNames, "other"},
	"RateLimitType":       {func() any { return new(RateLimitType) }, RateLimitTypeNames, "custom"},
	"ConfirmationType":    {func() any { return new(ConfirmationType) }, ConfirmationTypeNames, "custom"},
}

func loadEnums(t *testing.T) map[string][]json.RawMessage {
	t.Helper()
	var enums map[string][]json.RawMessage
	readJSON(t, filepath.Join("testdata", "enums.json"), &enums)
	return enums
}

// Every enum value of the spec decodes, encodes back to itself, and the
// package's name lists hold exactly the spec's values in spec order.
func TestEnumFixtures(t *testing.T) {
	enums := loadEnums(t)
	if len(enums) != len(enumTypes) {
		t.Errorf("enums.json has %d types, the test knows %d", len(enums), len(enumTypes))
	}
	for _, name := range sortedKeys(enums) {
		et, ok := enumTypes[name]
		if !ok {
			t.Errorf("enums.json: unknown type %s", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			var units []string
			objects := 0
			for _, raw := range enums[name] {
				v := et.newValue()
				if err := json.Unmarshal(raw, v); err != nil {
					t.Errorf("%s: %v", raw, err)
					continue
				}
				out, err := json.Marshal(v)
				if err != nil {
					t.Errorf("%s: encode: %v", raw, err)
					continue
				}
				assertSameJSON(t, out, raw)
				var s string
				if json.Unmarshal(raw, &s) == nil {
					units = append(units, s)
				} else {
					objects++
				}
			}
			if !slices.Equal(units, et.names) {
				t.Errorf("unit values\n spec: %v\n code: %v", units, et.names)
			}
			if et.otherKey != "" && objects == 0 {
				t.Errorf("no fixture for the {%q: ...} form", et.otherKey)
			}
		})
	}
}

func TestEnumRejects(t *testing.T) {
	for _, name := range sortedKeys(enumTypes) {
		et := enumTypes[name]
		bad := []string{`"unknown_value"`, `""`, `null`, `1`, `true`, `[]`, `"` + strings.ToUpper(et.names[0]) + `"`}
		if et.otherKey != "" {
			wrongKey := "other"
			if et.otherKey == "other" {
				wrongKey = "custom"
			}
			bad = append(bad,
				`{}`,
				`{"`+et.otherKey+`":1}`,
				`{"`+et.otherKey+`":null}`,
				`{"`+et.otherKey+`":""}`,
				`{"`+et.otherKey+`":["x"]}`,
				`{"`+et.otherKey+`":"x","extra":"y"}`,
				`{"`+wrongKey+`":"x"}`,
				`{"`+et.names[0]+`":"x"}`,
			)
		} else {
			bad = append(bad, `{"custom":"x"}`)
		}
		for _, in := range bad {
			v := et.newValue()
			if err := json.Unmarshal([]byte(in), v); err == nil {
				t.Errorf("%s: %s accepted", name, in)
			}
		}
	}
}

func TestOpenEnumValues(t *testing.T) {
	var s PlanningStrategy
	if err := json.Unmarshal([]byte(`{"custom":"test-first"}`), &s); err != nil || s != (PlanningStrategy{Custom: "test-first"}) {
		t.Errorf("custom strategy: %+v, %v", s, err)
	}
	if s.String() != "test-first" || StrategyStepByStep.String() != "step_by_step" {
		t.Errorf("String: %q %q", s.String(), StrategyStepByStep.String())
	}
	var r ReasoningType
	if err := json.Unmarshal([]byte(`{"other":"socratic"}`), &r); err != nil || r != (ReasoningType{Other: "socratic"}) || r.String() != "socratic" {
		t.Errorf("other reasoning: %+v, %v", r, err)
	}
	var l RateLimitType
	if err := json.Unmarshal([]byte(`"api_request_limit"`), &l); err != nil || l.Name != "api_request_limit" || l.String() != "api_request_limit" {
		t.Errorf("rate limit: %+v, %v", l, err)
	}
	var c ConfirmationType
	if err := json.Unmarshal([]byte(` { "custom" : "legal" } `), &c); err != nil || c.Custom != "legal" || c.String() != "legal" {
		t.Errorf("confirmation: %+v, %v", c, err)
	}
	// A zero open enum has no wire form.
	for _, v := range []any{PlanningStrategy{}, ReasoningType{}, RateLimitType{}, ConfirmationType{}} {
		if b, err := json.Marshal(v); err == nil {
			t.Errorf("%T zero value encoded as %s", v, b)
		}
	}
	out, err := json.Marshal([]PlanningStrategy{StrategyNone, StrategyStepByStep, StrategyTreeOfThoughts, StrategyGraphPlanning, {Custom: "c"}})
	if err != nil || string(out) != `["none","step_by_step","tree_of_thoughts","graph_planning",{"custom":"c"}]` {
		t.Errorf("strategies: %s, %v", out, err)
	}
}

// The rules of spec §4, written out from the spec table.
func TestEventTypeRules(t *testing.T) {
	type rule struct {
		blocking, batchable, typed bool
	}
	spec := []struct {
		name string
		rule
	}{
		{"handshake", rule{true, false, false}},
		{"query", rule{true, false, false}},
		{"pre_action", rule{true, true, false}},
		{"pre_prompt", rule{true, true, false}},
		{"post_action", rule{false, true, false}},
		{"post_response", rule{false, true, false}},
		{"session_start", rule{false, true, false}},
		{"session_end", rule{false, true, false}},
		{"error", rule{false, true, false}},
		{"heartbeat", rule{false, true, false}},
		{"success", rule{false, true, false}},
		{"run_lifecycle", rule{false, true, false}},
		{"task_list", rule{false, true, false}},
		{"verification", rule{false, true, false}},
		{"idle", rule{true, false, true}},
		{"intent_detection", rule{true, false, true}},
		{"context_perception", rule{true, false, true}},
		{"memory_recall", rule{true, false, true}},
		{"planning", rule{true, false, true}},
		{"reasoning", rule{true, false, true}},
		{"rate_limit", rule{true, false, true}},
		{"confirmation", rule{true, false, true}},
	}
	if len(spec) != len(AllEventTypes) {
		t.Fatalf("AllEventTypes has %d types, spec §4 has %d", len(AllEventTypes), len(spec))
	}
	for i, s := range spec {
		et := EventType(s.name)
		if AllEventTypes[i] != et {
			t.Errorf("AllEventTypes[%d] = %s, spec order has %s", i, AllEventTypes[i], et)
		}
		got := rule{et.Blocking(), et.Batchable(), et.Typed()}
		if !et.Known() {
			t.Errorf("%s: not Known", et)
		}
		if got != s.rule {
			t.Errorf("%s: blocking/batchable/typed = %v, spec says %v", et, got, s.rule)
		}
		wantRun := s.name == "run_lifecycle" || s.name == "task_list" || s.name == "verification"
		if et.RunContract() != wantRun {
			t.Errorf("%s: RunContract = %v", et, et.RunContract())
		}
		var decoded EventType
		if err := json.Unmarshal([]byte(`"`+s.name+`"`), &decoded); err != nil || decoded != et {
			t.Errorf("%s: decode %v, %v", s.name, decoded, err)
		}
	}
	for _, unknown := range []EventType{"", "pre_tool", "Pre_Action", "custom"} {
		if unknown.Known() || unknown.Blocking() || unknown.Batchable() || unknown.Typed() || unknown.RunContract() {
			t.Errorf("%q: unknown type has a rule", unknown)
		}
	}
}
