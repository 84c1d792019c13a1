package descriptor

import (
	"strings"
	"testing"
	"time"
)

const gatedYAML = `
runtime: {entry_agent: a}
context:
  references:
    "prompt.include": {type: boolean}
    "prompt.loose": {type: boolean, optional: true}
agents:
  a:
    instructions_sequence:
      - text: first
        where: {context: prompt.include}
      - text: second
        where: {context: prompt.loose}
      - text: last
`

func TestWhereGates(t *testing.T) {
	d := mustParse(t, gatedYAML)
	ctx := func(include, loose any) map[string]any {
		return map[string]any{"prompt": map[string]any{"include": include, "loose": loose}}
	}
	for _, tc := range []struct {
		name        string
		ctx         map[string]any
		want, fault string
	}{
		{"both true", ctx(true, true), "first\n\nsecond\n\nlast", ""},
		{"one false", ctx(false, true), "second\n\nlast", ""},
		{"both false", ctx(false, false), "last", ""},
		{"missing", map[string]any{}, "", `context path "prompt.include" is missing`},
		{"null", ctx(nil, true), "", `context path "prompt.include" is missing`},
		{"string", ctx("true", true), "", `context path "prompt.include" holds a string`},
		{"number", ctx(true, 1), "", `context path "prompt.loose" holds a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := d.ResolveInstructions("a", tc.ctx)
			if tc.fault != "" {
				wantProblem(t, err, `agent "a": instructions_sequence[`, ".where", tc.fault)
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestWhereGatesAreCheckedAtLoad(t *testing.T) {
	_, err := Parse([]byte(`
runtime: {entry_agent: a}
context:
  references:
    "prompt.label": {type: string}
    prompt: true
agents:
  a:
    instructions_sequence:
      - {text: x, where: {context: prompt.undeclared}}
      - {text: y, where: {context: prompt.label}}
      - {text: z, where: {context: "prompt..bad"}}
    instructions_wrong: 1
`), FormatYAML, "")
	wantProblem(t, err, `Agent "a" instruction where references undeclared context path "prompt.undeclared".`, `"prompt" is declared, but reference paths are exact`)
	wantProblem(t, err, `Agent "a" instruction where context path "prompt.label" must be declared with type "boolean".`)
	// aioc normalizes gate paths: "prompt..bad" is prompt.bad.
	wantProblem(t, err, `Agent "a" instruction where references undeclared context path "prompt.bad".`)

	// The materialized list form is checked the same way.
	_, err = Parse([]byte(`
runtime: {entry_agent: a}
agents:
  a:
    instructions: [{text: x, where: {context: flag}}]
`), FormatYAML, "")
	wantProblem(t, err, `Agent "a" instruction where references undeclared context path "flag".`)
}

func TestRenderValues(t *testing.T) {
	d := mustParse(t, `
runtime: {entry_agent: a}
context:
  references: {s: true, n: true, i: true, b: true, o: true, l: true}
agents:
  a:
    instructions: "{{context.s}}|{{context.n}}|{{context.i}}|{{context.b}}|{{context.o}}|{{context.l}}"
`)
	got, err := d.ResolveInstructions("a", map[string]any{
		"s": "text", "n": 0.25, "i": 42, "b": false,
		"o": map[string]any{"z": 1, "a": []string{"x"}},
		"l": []any{1e21, "é"},
	})
	want := `text|0.25|42|false|{"a":["x"],"z":1}|[1e+21,"é"]`
	if err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

func TestResolveInstructionsEdgeCases(t *testing.T) {
	d := mustParse(t, "runtime: {entry_agent: a}\nagents: {a: {}, b: {instructions: \"\"}}\n")
	if _, err := d.ResolveInstructions("ghost", nil); err == nil || !strings.Contains(err.Error(), `unknown agent "ghost"`) {
		t.Errorf("unknown agent: %v", err)
	}
	a, _ := d.Agent("a")
	if a.HasInstructions() || a.Instructions() != nil {
		t.Error("agent without instructions reports some")
	}
	if got, err := d.ResolveInstructions("a", nil); got != "" || err != nil {
		t.Errorf("no instructions: %q, %v", got, err)
	}
	if got, err := d.ResolveInstructions("b", nil); got != "" || err != nil {
		t.Errorf("empty instructions: %q, %v", got, err)
	}
}

func TestNewContextClock(t *testing.T) {
	d := mustParse(t, `
runtime: {entry_agent: a}
context:
  fields:
    a: {type: string, default: "{{runtime.now_iso}}"}
    b: {type: string, default: "{{runtime.now_iso}}"}
agents: {a: {}}
`)
	calls := 0
	ctx, err := d.NewContext(ContextInput{Now: func() time.Time {
		calls++
		return time.Date(2026, 5, 22, 23, 59, 59, 999_999_999, time.FixedZone("X", -3600))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if ctx["a"] != "2026-05-23T00:59:59.999Z" || ctx["a"] != ctx["b"] || calls != 1 {
		t.Errorf("ctx = %v, clock called %d times", ctx, calls)
	}
	// Without an injected clock the real time is used.
	ctx, _ = d.NewContext(ContextInput{})
	if _, err := time.Parse(time.RFC3339, ctx["a"].(string)); err != nil {
		t.Errorf("now_iso %q: %v", ctx["a"], err)
	}
	// Overrides must be JSON-encodable.
	if _, err := d.NewContext(ContextInput{Overrides: map[string]any{"f": func() {}}}); err == nil {
		t.Error("unencodable override accepted")
	}
}

func TestDescriptorAccessors(t *testing.T) {
	d := mustParse(t, supportYAML)
	if got := d.ToolIDs(); len(got) != 2 || got[0] != "lookup_order" {
		t.Errorf("ToolIDs = %v", got)
	}
	fields := d.ContextFields()
	if len(fields) != 4 || fields[0].Path != "prompt.includeCompany" || !fields[0].HasDefault || fields[0].Default != false {
		t.Errorf("ContextFields = %#v", fields)
	}
	refs := d.ContextReferences()
	if len(refs) != 4 || refs[0].Path != "prompt.companyText" || !refs[0].Optional || refs[0].Type != "string" {
		t.Errorf("ContextReferences = %#v", refs)
	}
	if text, ok := d.InstructionPart("company_context"); !ok || !strings.HasPrefix(text, "COMPANY CONTEXT:") {
		t.Errorf("InstructionPart = %q, %v", text, ok)
	}
	// Slices handed out are copies.
	ids := d.AgentIDs()
	ids[0] = "changed"
	if d.AgentIDs()[0] == "changed" {
		t.Error("AgentIDs is not a copy")
	}
	c := d.CanonicalJSON()
	c[0] = 'X'
	if d.CanonicalJSON()[0] != '{' {
		t.Error("CanonicalJSON is not a copy")
	}
}

// A descriptor is read-only after loading and may be shared by goroutines
// (run with -race).
func TestConcurrentUse(t *testing.T) {
	d := mustParse(t, supportYAML)
	done := make(chan error)
	for range 8 {
		go func() {
			ctx, err := d.NewContext(ContextInput{Message: "m", Overrides: map[string]any{"prompt": map[string]any{"includeCompany": true}}})
			if err == nil {
				for _, id := range d.AgentIDs() {
					if _, err = d.ResolveInstructions(id, ctx); err != nil {
						break
					}
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
