package descriptor

// The tests in this file follow the "Minimal Test Matrix" of RFC-0011, one
// test per item, in the RFC's order. Items that concern the aioc runtime
// (run records, replay) are covered for the part this package owns; the
// comment of each test says how.

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Matrix item 1: "Builds an entry agent from a descriptor."
func TestMatrix01_BuildsEntryAgent(t *testing.T) {
	d := mustParse(t, supportYAML)
	if got := d.EntryAgent(); got != "router" {
		t.Fatalf("EntryAgent = %q, want router", got)
	}
	a, ok := d.Agent(d.EntryAgent())
	if !ok {
		t.Fatal("entry agent not found")
	}
	if a.ID() != "router" || a.Name() != "Support Router Agent" {
		t.Errorf("agent = %q/%q", a.ID(), a.Name())
	}
	if got := d.MaxTurns(); got != 8 {
		t.Errorf("MaxTurns = %d, want 8", got)
	}
	if got, want := d.AgentIDs(), []string{"order", "qna", "router"}; !slices.Equal(got, want) {
		t.Errorf("AgentIDs = %v, want %v", got, want)
	}
	if _, ok := d.Agent("nobody"); ok {
		t.Error("Agent(nobody) found")
	}
	// An agent without a name is named after its id.
	if q, _ := d.Agent("qna"); q.Name() != "qna" {
		t.Errorf("qna name = %q", q.Name())
	}
}

// Matrix item 2: "Applies agent_defaults."
func TestMatrix02_AppliesAgentDefaults(t *testing.T) {
	d := mustParse(t, supportYAML)
	router, _ := d.Agent("router")
	order, _ := d.Agent("order")
	qna, _ := d.Agent("qna")

	if router.Model() != "gpt-default" || order.Model() != "gpt-order" {
		t.Errorf("models = %q, %q", router.Model(), order.Model())
	}
	if got := router.ModelSettings()["temperature"]; got != 0.2 {
		t.Errorf("router temperature = %v, want default 0.2", got)
	}
	if got := qna.ModelSettings()["temperature"]; got != 0.7 {
		t.Errorf("qna temperature = %v, want own 0.7", got)
	}
	// order has no instructions of its own: it inherits the default ones.
	if !order.InheritsInstructions() || router.InheritsInstructions() {
		t.Errorf("InheritsInstructions: order %v, router %v", order.InheritsInstructions(), router.InheritsInstructions())
	}
	ctx, err := d.NewContext(ContextInput{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.ResolveInstructions("order", ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got != "Be friendly." {
		t.Errorf("order instructions = %q, want the default", got)
	}
	// Accessors return copies.
	router.ModelSettings()["temperature"] = 9.0
	if got := router.ModelSettings()["temperature"]; got != 0.2 {
		t.Errorf("ModelSettings is not a copy: %v", got)
	}
}

// Matrix item 3: "Resolves tool ids through the registry."
func TestMatrix03_ResolvesToolsThroughRegistry(t *testing.T) {
	d := mustParse(t, supportYAML)
	order, _ := d.Agent("order")
	if got, want := order.Tools(), []string{"lookup_order", "refund"}; !slices.Equal(got, want) {
		t.Fatalf("Tools = %v, want %v", got, want)
	}
	if !order.HasTool("refund") || order.HasTool("delete_everything") {
		t.Error("HasTool answers wrongly")
	}
	target, ok := d.ToolTarget("lookup_order")
	if !ok || target != "example://tool/lookup_order" {
		t.Fatalf("ToolTarget = %q, %v", target, ok)
	}
	reg := NewTargets("example://tool/lookup_order", "example://tool/refund")
	if err := d.Validate(reg); err != nil {
		t.Fatalf("Validate with a complete registry: %v", err)
	}
	if err := d.Validate(nil); err != nil {
		t.Fatalf("Validate(nil): %v", err)
	}
}

// Matrix item 4: "Resolves handoff ids to built agents."
func TestMatrix04_ResolvesHandoffs(t *testing.T) {
	d := mustParse(t, supportYAML)
	router, _ := d.Agent("router")
	if got, want := router.Handoffs(), []string{"order", "qna"}; !slices.Equal(got, want) {
		t.Fatalf("Handoffs = %v, want %v", got, want)
	}
	for _, id := range router.Handoffs() {
		if a, ok := d.Agent(id); !ok || a.ID() != id {
			t.Errorf("handoff %q does not resolve to an agent", id)
		}
	}
	if !router.CanHandoffTo("qna") || router.CanHandoffTo("router") {
		t.Error("CanHandoffTo answers wrongly")
	}
}

// Matrix item 5: "Produces a stable descriptor hash for equivalent
// descriptor content." (More cases in hash_test.go.)
func TestMatrix05_StableHash(t *testing.T) {
	a := mustParse(t, supportYAML)
	b := mustParse(t, supportYAML)
	if a.Hash() != b.Hash() {
		t.Fatalf("same content, different hashes: %s %s", a.Hash(), b.Hash())
	}
	// The same content as JSON, with keys in another order.
	var generic map[string]any
	if err := json.Unmarshal(a.CanonicalJSON(), &generic); err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(generic, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(js, FormatJSON, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Hash() != a.Hash() {
		t.Fatalf("JSON form hashes differently: %s vs %s", c.Hash(), a.Hash())
	}
}

// Matrix item 6: "Builds context from field defaults."
func TestMatrix06_ContextFromFieldDefaults(t *testing.T) {
	d := mustParse(t, `
runtime: {entry_agent: a}
context:
  fields:
    "prompt.tone": {type: string, default: friendly}
    "prompt.limits": {type: object, default: {max: 3, tags: [x, y]}}
    "prompt.nothing": {type: string}
    "flags.beta": {type: boolean, default: true}
    "top": {type: "null", default: null}
agents:
  a: {}
`)
	ctx, err := d.NewContext(ContextInput{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"prompt": map[string]any{
			"tone":   "friendly",
			"limits": map[string]any{"max": 3.0, "tags": []any{"x", "y"}},
		},
		"flags": map[string]any{"beta": true},
		"top":   nil,
	}
	if !reflect.DeepEqual(ctx, want) {
		t.Fatalf("context = %#v\nwant %#v", ctx, want)
	}
	// The result belongs to the caller: changing it leaves the defaults alone.
	ctx["prompt"].(map[string]any)["limits"].(map[string]any)["max"] = 99.0
	again, _ := d.NewContext(ContextInput{})
	if got := again["prompt"].(map[string]any)["limits"].(map[string]any)["max"]; got != 3.0 {
		t.Fatalf("defaults were aliased: max = %v", got)
	}
}

// Matrix item 7: "Applies {{input.message}} and {{runtime.now_iso}}
// defaults."
func TestMatrix07_BuiltinDefaults(t *testing.T) {
	d := mustParse(t, supportYAML)
	ctx, err := d.NewContext(ContextInput{
		Message: "Where is ORD-1001?",
		Now:     fixedClock(t, "2026-05-22T10:11:12.345678+02:00"),
	})
	if err != nil {
		t.Fatal(err)
	}
	turn := ctx["turn"].(map[string]any)
	if turn["userMessage"] != "Where is ORD-1001?" {
		t.Errorf("userMessage = %v", turn["userMessage"])
	}
	if turn["startedAt"] != "2026-05-22T08:11:12.345Z" {
		t.Errorf("startedAt = %v, want UTC with milliseconds", turn["startedAt"])
	}
	// Without a message the built-in is the empty string.
	ctx, _ = d.NewContext(ContextInput{Now: fixedClock(t, "2026-01-01T00:00:00Z")})
	if got := ctx["turn"].(map[string]any)["userMessage"]; got != "" {
		t.Errorf("userMessage without message = %q", got)
	}
	// Only whole-string defaults are built-ins.
	d = mustParse(t, `
runtime: {entry_agent: a}
context:
  fields:
    greeting: {type: string, default: "Hi {{input.message}}"}
    spaced: {type: string, default: "{{ input.message }}"}
agents: {a: {}}
`)
	ctx, _ = d.NewContext(ContextInput{Message: "m"})
	if ctx["greeting"] != "Hi {{input.message}}" || ctx["spaced"] != "m" {
		t.Errorf("context = %v", ctx)
	}
}

// Matrix item 8: "Merges application context overrides."
func TestMatrix08_MergesOverrides(t *testing.T) {
	d := mustParse(t, supportYAML)
	type customer struct {
		Email string `json:"email"`
	}
	ctx, err := d.NewContext(ContextInput{
		Message: "hello",
		Now:     fixedClock(t, "2026-01-01T00:00:00Z"),
		Overrides: map[string]any{
			"prompt":   map[string]any{"tone": "formal", "companyText": "ACME"},
			"customer": customer{Email: "ada@example.com"},
			"turn":     map[string]any{"count": 2},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	prompt := ctx["prompt"].(map[string]any)
	if prompt["tone"] != "formal" || prompt["companyText"] != "ACME" || prompt["includeCompany"] != false {
		t.Errorf("prompt = %v (overrides merge key by key)", prompt)
	}
	turn := ctx["turn"].(map[string]any)
	if turn["userMessage"] != "hello" || turn["count"] != 2.0 {
		t.Errorf("turn = %v", turn)
	}
	if got := ctx["customer"].(map[string]any)["email"]; got != "ada@example.com" {
		t.Errorf("customer.email = %v", got)
	}
	got, err := d.ResolveInstructions("router", ctx)
	if err != nil || got != "Route order questions to Order Agent." {
		t.Errorf("router = %q, %v", got, err)
	}
	got, err = d.ResolveInstructions("order", ctx)
	if err != nil || got != "Be formal." {
		t.Errorf("order = %q, %v", got, err)
	}
	// A non-object override replaces the default object.
	ctx, _ = d.NewContext(ContextInput{Overrides: map[string]any{"prompt": "flat"}})
	if ctx["prompt"] != "flat" {
		t.Errorf("prompt = %v, want replaced", ctx["prompt"])
	}
}

// Matrix item 9: "Rejects undeclared context references in instruction
// templates."
func TestMatrix09_RejectsUndeclaredReferences(t *testing.T) {
	_, err := Parse([]byte(`
runtime: {entry_agent: a}
context:
  fields:
    "customer.email": {type: string, default: x}
agents:
  a:
    instructions: "Mail {{context.customer.email}}"
`), FormatYAML, "")
	// Declaring a field does not make it readable by templates.
	wantProblem(t, err, `agent "a": instructions`, `{{context.customer.email}}`, "not declared in context.references")

	// Undeclared placeholders fail even in a part that is gated off, and in
	// the instruction_parts catalog.
	_, err = Parse([]byte(`
runtime: {entry_agent: a}
context:
  references:
    flag: {type: boolean}
instruction_parts:
  block: "{{context.secret}}"
agents:
  a:
    instructions_sequence:
      - text: "{{context.hidden}}"
        where: {context: flag}
`), FormatYAML, "")
	wantProblem(t, err, `agent "a": instructions_sequence[0]`, `"hidden" is not declared`)
	wantProblem(t, err, `instruction_parts "block"`, `"secret" is not declared`)
}

// Matrix item 10: "Rejects missing required context references at
// instruction-resolution time."
func TestMatrix10_RejectsMissingRequiredReference(t *testing.T) {
	d := mustParse(t, `
runtime: {entry_agent: a}
context:
  references:
    "customer.email": true
    "customer.name": {type: string}
agents:
  a:
    instructions: "Write to {{context.customer.name}} <{{context.customer.email}}>."
`)
	_, err := d.ResolveInstructions("a", map[string]any{"customer": map[string]any{"name": "Ada"}})
	wantProblem(t, err, `agent "a": instructions`, `required context path "customer.email" is missing`)
	// A null value counts as missing.
	_, err = d.ResolveInstructions("a", map[string]any{"customer": map[string]any{"name": "Ada", "email": nil}})
	wantProblem(t, err, `"customer.email" is missing`)
	// Both missing: both reported.
	_, err = d.ResolveInstructions("a", nil)
	if n := len(asError(t, err).Problems); n != 2 {
		t.Errorf("%d problems, want 2: %v", n, err)
	}
	got, err := d.ResolveInstructions("a", map[string]any{"customer": map[string]any{"name": "Ada", "email": "ada@example.com"}})
	if err != nil || got != "Write to Ada <ada@example.com>." {
		t.Errorf("got %q, %v", got, err)
	}
}

// Matrix item 11: "Allows missing optional context references."
func TestMatrix11_AllowsMissingOptionalReference(t *testing.T) {
	d := mustParse(t, `
runtime: {entry_agent: a}
context:
  references:
    "prompt.prepend": {type: string, optional: true}
agents:
  a:
    instructions: "[{{context.prompt.prepend}}]Hello"
`)
	got, err := d.ResolveInstructions("a", map[string]any{})
	if err != nil || got != "[]Hello" {
		t.Fatalf("got %q, %v", got, err)
	}
	got, err = d.ResolveInstructions("a", map[string]any{"prompt": map[string]any{"prepend": "Hi. "}})
	if err != nil || got != "[Hi. ]Hello" {
		t.Fatalf("got %q, %v", got, err)
	}
}

// Matrix item 12: "Rejects non-path instruction expressions."
func TestMatrix12_RejectsNonPathExpressions(t *testing.T) {
	for _, expr := range []string{
		"{{context.a ?? 'x'}}",
		"{{context.a || context.b}}",
		"{{context.flag ? 'y' : 'n'}}",
		"{{context.name.toUpperCase()}}",
		"{{context.name | upper}}",
		"{{context.items[0]}}",
		"{{context.a b}}",
		"{{ context.a.b() }}",
	} {
		t.Run(expr, func(t *testing.T) {
			src := `
runtime: {entry_agent: a}
context:
  references: {a: true, b: true, flag: true, name: true, items: true}
agents:
  a:
    instructions: "Say ` + strings.ReplaceAll(expr, `"`, `\"`) + `"
`
			_, err := Parse([]byte(src), FormatYAML, "")
			wantProblem(t, err, `agent "a": instructions`, "placeholder "+expr)
		})
	}
	// Spaces inside the braces are fine, and an unclosed "{{" is text.
	// Paths are normalized as aioc does: "..a" and " a " are a.
	d := mustParse(t, `
runtime: {entry_agent: a}
context: {references: {a: true}}
agents:
  a: {instructions: "{{ context.a }} and {{context..a}} and {{ not closed"}
`)
	got, err := d.ResolveInstructions("a", map[string]any{"a": 1.5})
	if err != nil || got != "1.5 and 1.5 and {{ not closed" {
		t.Fatalf("got %q, %v", got, err)
	}
}

// Matrix item 13: "Keeps reference paths exact: parent references do not
// allow child paths."
func TestMatrix13_ReferencePathsAreExact(t *testing.T) {
	_, err := Parse([]byte(`
runtime: {entry_agent: a}
context:
  references:
    prompt: true
agents:
  a:
    instructions: "Style: {{context.prompt.learningStyleLabel}}"
`), FormatYAML, "")
	wantProblem(t, err, `"prompt.learningStyleLabel" is not declared`, "a parent does not allow its children")

	// A child does not allow its parent either, and false declares nothing.
	_, err = Parse([]byte(`
runtime: {entry_agent: a}
context:
  references:
    "prompt.label": true
    other: false
agents:
  a:
    instructions: "{{context.prompt}} {{context.other}}"
`), FormatYAML, "")
	wantProblem(t, err, `"prompt" is not declared`)
	wantProblem(t, err, `"other" is not declared`)

	// The exact path works, and renders an object as canonical JSON.
	d := mustParse(t, `
runtime: {entry_agent: a}
context:
  references:
    prompt: true
agents:
  a:
    instructions: "{{context.prompt}}"
`)
	got, err := d.ResolveInstructions("a", map[string]any{"prompt": map[string]any{"b": 1, "a": "x"}})
	if err != nil || got != `{"a":"x","b":1}` {
		t.Fatalf("got %q, %v", got, err)
	}
}

// Matrix item 14: "Rejects missing entry agents, unknown tool ids, missing
// registry targets, and unknown handoff ids."
func TestMatrix14_RejectsBrokenGraph(t *testing.T) {
	t.Run("missing entry agent", func(t *testing.T) {
		_, err := Parse([]byte("runtime: {entry_agent: ghost}\nagents: {a: {}}\n"), FormatYAML, "")
		wantProblem(t, err, "runtime.entry_agent", `unknown agent "ghost"`)
		_, err = Parse([]byte("runtime: {}\nagents: {a: {}}\n"), FormatYAML, "")
		wantProblem(t, err, "runtime.entry_agent", "is required")
	})
	t.Run("unknown tool id", func(t *testing.T) {
		_, err := Parse([]byte(`
runtime: {entry_agent: triage}
tools: {known: {target: t://known}}
agents:
  triage: {tools: [known, x]}
`), FormatYAML, "")
		wantProblem(t, err, `agent "triage": tools[1]: unknown tool "x"`)
	})
	t.Run("missing registry target", func(t *testing.T) {
		d := mustParse(t, supportYAML)
		err := d.Validate(NewTargets("example://tool/lookup_order"))
		wantProblem(t, err, `agent "order": tools[1]`, `tool "refund"`, `target "example://tool/refund" is not bound`)
		err = d.Validate(Targets{})
		if n := len(asError(t, err).Problems); n != 2 {
			t.Errorf("empty registry: %d problems, want 2", n)
		}
	})
	t.Run("unknown handoff id", func(t *testing.T) {
		_, err := Parse([]byte("runtime: {entry_agent: a}\nagents: {a: {handoffs: [b, ghost]}, b: {}}\n"), FormatYAML, "")
		wantProblem(t, err, `agent "a": handoffs[1]: unknown agent "ghost"`)
	})
	t.Run("all at once", func(t *testing.T) {
		_, err := Parse([]byte(`
runtime: {entry_agent: ghost}
agents:
  a: {tools: [x], handoffs: [nobody]}
`), FormatYAML, "")
		e := asError(t, err)
		if len(e.Problems) != 3 {
			t.Fatalf("%d problems, want 3:\n%v", len(e.Problems), err)
		}
	})
}

// Matrix item 15: "Attaches harness metadata to run records in examples or
// tests." Run records live outside this package; this test checks that the
// metadata meant for them carries the descriptor's identity and encodes as
// a record field would.
func TestMatrix15_MetadataForRunRecords(t *testing.T) {
	d := mustParse(t, supportYAML)
	record := struct {
		RunID    string   `json:"run_id"`
		Metadata Metadata `json:"harness"`
	}{RunID: "run-1", Metadata: d.Metadata()}
	raw, err := json.Marshal(record)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"run_id":"run-1","harness":{"name":"customer_support_harness","version":"customer-support.v1","descriptor_version":"aioc.agent_graph.v0","descriptor_hash":"` + d.Hash() + `"}}`
	if string(raw) != want {
		t.Fatalf("record = %s\nwant     %s", raw, want)
	}
	if d.Name() != "customer_support_harness" || d.Version() != "customer-support.v1" || d.DescriptorVersion() != DescriptorVersion {
		t.Errorf("identity = %q %q %q", d.Name(), d.Version(), d.DescriptorVersion())
	}
	if got := d.RawMetadata()["owner"]; got != "support-team" {
		t.Errorf("RawMetadata owner = %v", got)
	}
}

// countingRegistry records how often it is consulted.
type countingRegistry struct{ calls int }

func (r *countingRegistry) HasTarget(string) bool { r.calls++; return true }

// Matrix item 16: "Composes with strict replay without executing live tools
// when replay data is available." Replay belongs to the run-record side;
// what this package guarantees is that evaluating a descriptor never
// touches tools and is deterministic: resolving instructions against a
// recorded context (message and clock included) reproduces the same prompt
// every time, without consulting any registry.
func TestMatrix16_ReplayIsDeterministicAndToolFree(t *testing.T) {
	d := mustParse(t, supportYAML)
	reg := &countingRegistry{}
	if err := d.Validate(reg); err != nil {
		t.Fatal(err)
	}
	validateCalls := reg.calls

	record := func() map[string]string {
		ctx, err := d.NewContext(ContextInput{
			Message:   "Where is ORD-1001?",
			Now:       fixedClock(t, "2026-05-22T10:00:00Z"),
			Overrides: map[string]any{"prompt": map[string]any{"includeCompany": true, "companyText": "ACME"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, id := range d.AgentIDs() {
			text, err := d.ResolveInstructions(id, ctx)
			if err != nil {
				t.Fatal(err)
			}
			out[id] = text
		}
		return out
	}
	first, second := record(), record()
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("replayed prompts differ:\n%v\n%v", first, second)
	}
	if want := "COMPANY CONTEXT:\nACME\n\nAnswer: Where is ORD-1001?"; first["qna"] != want {
		t.Errorf("qna = %q, want %q", first["qna"], want)
	}
	if reg.calls != validateCalls {
		t.Errorf("resolution consulted the registry %d times", reg.calls-validateCalls)
	}
}
