package descriptor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// supportYAML is the customer-support example of RFC-0011, extended with
// defaults, context and an instruction sequence.
const supportYAML = `descriptor_version: aioc.agent_graph.v0
metadata:
  name: customer_support_harness
  version: customer-support.v1
  owner: support-team
runtime:
  entry_agent: router
  max_turns: 8
tools:
  lookup_order:
    target: example://tool/lookup_order
  refund:
    target: example://tool/refund
instruction_parts:
  company_context: |-
    COMPANY CONTEXT:
    {{context.prompt.companyText}}
context:
  fields:
    "turn.userMessage":
      type: string
      default: "{{input.message}}"
    "turn.startedAt":
      type: string
      default: "{{runtime.now_iso}}"
    "prompt.tone":
      type: string
      default: friendly
    "prompt.includeCompany":
      type: boolean
      default: false
  references:
    "turn.userMessage": true
    "prompt.tone": {type: string}
    "prompt.companyText": {type: string, optional: true}
    "prompt.includeCompany": {type: boolean}
agent_defaults:
  model: gpt-default
  modelSettings: {temperature: 0.2}
  instructions: "Be {{context.prompt.tone}}."
agents:
  router:
    name: Support Router Agent
    handoffs: [order, qna]
    instructions: |-
      Route order questions to Order Agent.
  order:
    name: Order Agent
    model: gpt-order
    tools: [lookup_order, refund]
    handoffs: [router]
  qna:
    modelSettings: {temperature: 0.7}
    instructions_sequence:
      - ref: company_context
        where: {context: prompt.includeCompany}
      - text: "Answer: {{context.turn.userMessage}}"
`

// writeFiles creates files (slash paths relative to dir) with contents.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// loadFiles writes files into a temporary directory and loads the one
// named "harness.yaml" (or harness.json).
func loadFiles(t *testing.T, files map[string]string) (*Descriptor, error) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	name := "harness.yaml"
	if _, ok := files["harness.json"]; ok {
		name = "harness.json"
	}
	return Load(filepath.Join(dir, name))
}

// mustParse parses YAML without a base directory and fails on error.
func mustParse(t *testing.T, src string) *Descriptor {
	t.Helper()
	d, err := Parse([]byte(src), FormatYAML, "")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return d
}

// wantProblem fails unless err carries a problem whose text contains every
// one of parts.
func wantProblem(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want a problem containing %q", parts)
	}
	for _, p := range ProblemsOf(err) {
		msg := p.Error()
		ok := true
		for _, s := range parts {
			if !strings.Contains(msg, s) {
				ok = false
				break
			}
		}
		if ok {
			return
		}
	}
	t.Fatalf("no problem contains %q; got:\n%v", parts, err)
}

// asError returns err as an *Error, failing the test otherwise.
func asError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	return e
}

// fixedClock returns a clock stuck at the given RFC 3339 time.
func fixedClock(t *testing.T, s string) func() time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return func() time.Time { return at }
}

// minimal builds a small valid descriptor with extra YAML appended under
// the given agent definition.
func minimal(agentBody string) string {
	return "runtime: {entry_agent: a}\nagents:\n  a:\n" + agentBody
}
