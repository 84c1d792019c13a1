package protocol

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// fixtureFiles hold golden JSON grouped by Go type name, then by case name.
// Every case is canonical: decoding it and encoding the result gives the
// same JSON back.
var fixtureFiles = []string{"envelopes.json", "decisions.json", "payloads.json"}

// newFixtureValue returns a pointer to a fresh value of the named type.
var newFixtureValue = map[string]func() any{
	"Event":                     func() any { return new(Event) },
	"EventContext":              func() any { return new(EventContext) },
	"Fact":                      func() any { return new(Fact) },
	"MemorySummary":             func() any { return new(MemorySummary) },
	"SessionStats":              func() any { return new(SessionStats) },
	"HandshakeRequest":          func() any { return new(HandshakeRequest) },
	"AgentInfo":                 func() any { return new(AgentInfo) },
	"HandshakeResponse":         func() any { return new(HandshakeResponse) },
	"HarnessInfo":               func() any { return new(HarnessInfo) },
	"HarnessConfig":             func() any { return new(HarnessConfig) },
	"QueryRequest":              func() any { return new(QueryRequest) },
	"QueryResponse":             func() any { return new(QueryResponse) },
	"BatchRequest":              func() any { return new(BatchRequest) },
	"BatchResponse":             func() any { return new(BatchResponse) },
	"Decision":                  func() any { return new(Decision) },
	"IdleDecision":              func() any { return new(IdleDecision) },
	"IntentDetectionDecision":   func() any { return new(IntentDetectionDecision) },
	"ContextPerceptionDecision": func() any { return new(ContextPerceptionDecision) },
	"MemoryRecallDecision":      func() any { return new(MemoryRecallDecision) },
	"PlanningDecision":          func() any { return new(PlanningDecision) },
	"ReasoningDecision":         func() any { return new(ReasoningDecision) },
	"RateLimitDecision":         func() any { return new(RateLimitDecision) },
	"ConfirmationDecision":      func() any { return new(ConfirmationDecision) },
	"IdlePayload":               func() any { return new(IdlePayload) },
	"HeartbeatPayload":          func() any { return new(HeartbeatPayload) },
	"IntentDetectionPayload":    func() any { return new(IntentDetectionPayload) },
	"ContextPerceptionPayload":  func() any { return new(ContextPerceptionPayload) },
	"PerceptionTarget":          func() any { return new(PerceptionTarget) },
	"PerceptionConstraints":     func() any { return new(PerceptionConstraints) },
	"MemoryRecallPayload":       func() any { return new(MemoryRecallPayload) },
	"PlanningPayload":           func() any { return new(PlanningPayload) },
	"ReasoningPayload":          func() any { return new(ReasoningPayload) },
	"SuccessPayload":            func() any { return new(SuccessPayload) },
	"RateLimitPayload":          func() any { return new(RateLimitPayload) },
	"ConfirmationPayload":       func() any { return new(ConfirmationPayload) },
	"ActionPayload":             func() any { return new(ActionPayload) },
	"RunLifecyclePayload":       func() any { return new(RunLifecyclePayload) },
	"TaskListPayload":           func() any { return new(TaskListPayload) },
	"VerificationPayload":       func() any { return new(VerificationPayload) },
	"TaskItem":                  func() any { return new(TaskItem) },
	"VerificationCheck":         func() any { return new(VerificationCheck) },
	"EvidenceRef":               func() any { return new(EvidenceRef) },
	"ArtifactRef":               func() any { return new(ArtifactRef) },
	"InjectedContext":           func() any { return new(InjectedContext) },
	"FileSnippet":               func() any { return new(FileSnippet) },
	"ProjectSummary":            func() any { return new(ProjectSummary) },
	"HistoryItem":               func() any { return new(HistoryItem) },
	"PerceptionContext":         func() any { return new(PerceptionContext) },
}

// fixtureCase is one golden value.
type fixtureCase struct {
	typ, name string
	json      json.RawMessage
}

func (c fixtureCase) String() string { return c.typ + "/" + c.name }

// loadFixtures reads the grouped fixture files, in a stable order.
func loadFixtures(t testing.TB, files ...string) []fixtureCase {
	t.Helper()
	var out []fixtureCase
	for _, f := range files {
		var groups map[string]map[string]json.RawMessage
		readJSON(t, filepath.Join("testdata", f), &groups)
		for _, typ := range sortedKeys(groups) {
			for _, name := range sortedKeys(groups[typ]) {
				out = append(out, fixtureCase{typ: typ, name: name, json: groups[typ][name]})
			}
		}
	}
	return out
}

// fixture returns one case by type and name.
func fixture(t testing.TB, typ, name string) json.RawMessage {
	t.Helper()
	for _, c := range loadFixtures(t, fixtureFiles...) {
		if c.typ == typ && c.name == name {
			return c.json
		}
	}
	t.Fatalf("no fixture %s/%s", typ, name)
	return nil
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// decodeAs decodes b into a fresh value of the named type.
func decodeAs(t testing.TB, typ string, b []byte) (any, error) {
	t.Helper()
	mk, ok := newFixtureValue[typ]
	if !ok {
		t.Fatalf("no constructor for type %s", typ)
	}
	v := mk()
	return v, json.Unmarshal(b, v)
}

// canonical decodes JSON into plain Go values, keeping numbers as written so
// that large integers and float spellings compare exactly.
func canonical(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}

// assertSameJSON fails unless got and want hold the same JSON value (same
// members, any order; same number spellings).
func assertSameJSON(t testing.TB, got, want []byte) {
	t.Helper()
	if !reflect.DeepEqual(canonical(t, got), canonical(t, want)) {
		t.Errorf("JSON differs\n got: %s\nwant: %s", compact(t, got), compact(t, want))
	}
}

func compact(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("compact: %v\n%s", err, b)
	}
	return buf.Bytes()
}

func TestFixturesRoundTrip(t *testing.T) {
	for _, c := range loadFixtures(t, fixtureFiles...) {
		t.Run(c.String(), func(t *testing.T) {
			v, err := decodeAs(t, c.typ, c.json)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			assertSameJSON(t, out, c.json)

			// Decoding what we wrote gives the same value again.
			again, err := decodeAs(t, c.typ, out)
			if err != nil {
				t.Fatalf("decode of own output: %v", err)
			}
			out2, _ := json.Marshal(again)
			if !bytes.Equal(out, out2) {
				t.Errorf("second round trip differs\n 1st: %s\n 2nd: %s", out, out2)
			}
		})
	}
}

// normalizeCase is an input a reader accepts that is not canonical, with
// the canonical form the encoder writes for it.
type normalizeCase struct {
	Name      string          `json:"name"`
	Type      string          `json:"type"`
	Input     json.RawMessage `json:"input"`
	Canonical json.RawMessage `json:"canonical"`
}

func TestNormalizeToCanonical(t *testing.T) {
	var file struct {
		Cases []normalizeCase `json:"cases"`
	}
	readJSON(t, filepath.Join("testdata", "normalize.json"), &file)
	if len(file.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range file.Cases {
		t.Run(c.Name, func(t *testing.T) {
			fromInput, err := decodeAs(t, c.Type, c.Input)
			if err != nil {
				t.Fatalf("decode input: %v", err)
			}
			fromCanonical, err := decodeAs(t, c.Type, c.Canonical)
			if err != nil {
				t.Fatalf("decode canonical: %v", err)
			}
			if !reflect.DeepEqual(dropEmpty(fromInput), dropEmpty(fromCanonical)) {
				t.Errorf("input and canonical decode differently\n input: %+v\n canon: %+v", fromInput, fromCanonical)
			}
			out, err := json.Marshal(fromInput)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			assertSameJSON(t, out, c.Canonical)
		})
	}
}

// dropEmpty sets every empty slice reachable from the pointer p to nil, so
// that an absent list and an empty one compare equal, and returns p.
func dropEmpty(p any) any {
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice:
			if v.Len() == 0 && v.CanSet() {
				v.SetZero()
			}
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		}
	}
	walk(reflect.ValueOf(p))
	return p
}

// specTypes are the types of spec sections 3 to 6. Every one of them must
// be reached, non-empty, by some golden fixture.
var specTypes = []string{
	// §3 envelopes
	"Event", "EventContext", "Fact", "MemorySummary", "SessionStats",
	"HandshakeRequest", "AgentInfo", "HandshakeResponse", "HarnessInfo", "HarnessConfig",
	"QueryRequest", "QueryResponse", "BatchRequest", "BatchResponse",
	// §5 decisions
	"Decision", "IdleDecision", "IntentDetectionDecision", "TargetHints",
	"ContextPerceptionDecision", "InjectedContext", "FileSnippet", "ProjectSummary",
	"MemoryRecallDecision", "PlanningDecision", "ReasoningDecision", "RateLimitDecision",
	"ConfirmationDecision",
	// §6 payloads
	"IdlePayload", "HeartbeatPayload", "IntentDetectionPayload", "ContextPerceptionPayload",
	"PerceptionContext", "HistoryItem", "PerceptionConstraints", "PerceptionTarget",
	"EntityTarget", "LocationTarget", "EventTarget", "TimeRange", "RelationTarget",
	"RuleTarget", "StateTarget", "ResourceTarget", "PatternTarget",
	"MemoryRecallPayload", "PlanningPayload", "PlanningStrategy", "ReasoningPayload",
	"ReasoningType", "SuccessPayload", "RateLimitPayload", "RateLimitType",
	"ConfirmationPayload", "ConfirmationType", "ActionPayload",
	"RunLifecyclePayload", "TaskListPayload", "TaskItem", "EvidenceRef", "ArtifactRef",
	"VerificationPayload", "VerificationCheck",
}

func TestFixturesCoverEverySpecType(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range loadFixtures(t, fixtureFiles...) {
		v, err := decodeAs(t, c.typ, c.json)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		markTypes(reflect.ValueOf(v), seen)
	}
	for _, name := range specTypes {
		if !seen[name] {
			t.Errorf("no fixture reaches a non-empty %s", name)
		}
	}
	// Every constructor is used by at least one fixture group, and every
	// group names a known type.
	groups := map[string]bool{}
	for _, c := range loadFixtures(t, fixtureFiles...) {
		groups[c.typ] = true
	}
	for _, typ := range sortedKeys(groups) {
		if !slices.Contains(specTypes, typ) {
			t.Errorf("fixture group %s is not a spec type", typ)
		}
	}
}

// markTypes records the names of the protocol types reachable from v that
// hold something other than their zero value.
func markTypes(v reflect.Value, seen map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			markTypes(v.Elem(), seen)
		}
		return
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 { // raw JSON
			return
		}
		for i := range v.Len() {
			markTypes(v.Index(i), seen)
		}
		return
	}
	typ := v.Type()
	if typ.PkgPath() == reflect.TypeFor[Event]().PkgPath() && !v.IsZero() {
		seen[typ.Name()] = true
	}
	if v.Kind() == reflect.Struct {
		for i := range v.NumField() {
			if typ.Field(i).IsExported() {
				markTypes(v.Field(i), seen)
			}
		}
	}
}
