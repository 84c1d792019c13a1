package descriptor

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"testing"
)

// The same descriptor written three ways: YAML, YAML with every object's
// keys in another order and other number spellings, and indented JSON.
const (
	hashYAML = `
descriptor_version: aioc.agent_graph.v0
metadata: {name: demo, version: "1", weights: [1, 2.5, 1e3]}
runtime: {entry_agent: router, max_turns: 8}
tools:
  lookup: {target: "t://lookup"}
context:
  references:
    "user.name": {type: string, optional: true}
    flag: {type: boolean}
agents:
  router:
    name: Router
    tools: [lookup]
    handoffs: [helper]
    modelSettings: {temperature: 0.5, stop: ["\n"]}
    instructions: "Hello {{context.user.name}} — café ☕"
  helper:
    instructions_sequence:
      - text: gated
        where: {context: flag}
      - text: always
`
	hashYAMLReordered = `
agents:
  helper:
    instructions_sequence:
      - where: {context: flag}
        text: gated
      - text: always
  router:
    instructions: "Hello {{context.user.name}} — café ☕"
    modelSettings: {stop: ["\n"], temperature: 5.0e-1}
    handoffs: [helper]
    tools: [lookup]
    name: Router
context:
  references:
    flag: {type: boolean}
    "user.name": {optional: true, type: string}
tools:
  lookup: {target: "t://lookup"}
runtime: {max_turns: 8.0, entry_agent: router}
metadata: {weights: [1.0, 2.50, 1000], version: "1", name: demo}
descriptor_version: aioc.agent_graph.v0
`
	hashJSON = `{
  "runtime": {"max_turns": 8, "entry_agent": "router"},
  "agents": {
    "router": {
      "handoffs": ["helper"],
      "instructions": "Hello {{context.user.name}} \u2014 caf\u00e9 \u2615",
      "modelSettings": {"temperature": 0.5, "stop": ["\n"]},
      "name": "Router",
      "tools": ["lookup"]
    },
    "helper": {
      "instructions_sequence": [
        {"text": "gated", "where": {"context": "flag"}},
        {"text": "always"}
      ]
    }
  },
  "tools": {"lookup": {"target": "t://lookup"}},
  "context": {"references": {"flag": {"type": "boolean"}, "user.name": {"type": "string", "optional": true}}},
  "metadata": {"version": "1", "name": "demo", "weights": [1, 2.5, 1000]},
  "descriptor_version": "aioc.agent_graph.v0"
}`
)

func TestHashStableAcrossKeyOrderAndFormat(t *testing.T) {
	a, err := Parse([]byte(hashYAML), FormatYAML, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse([]byte(hashYAMLReordered), FormatYAML, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse([]byte(hashJSON), FormatJSON, "")
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash() != b.Hash() || a.Hash() != c.Hash() {
		t.Fatalf("hashes differ:\nyaml      %s\nreordered %s\njson      %s\n%s\n%s\n%s",
			a.Hash(), b.Hash(), c.Hash(), a.CanonicalJSON(), b.CanonicalJSON(), c.CanonicalJSON())
	}
	// Auto-detected format gives the same result.
	d, err := Parse([]byte(hashJSON), FormatAuto, "")
	if err != nil || d.Hash() != a.Hash() {
		t.Fatalf("auto: %v %v", d, err)
	}
}

func TestHashFormatAndDefinition(t *testing.T) {
	d := mustParse(t, hashYAML)
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(d.Hash()) {
		t.Fatalf("hash %q has the wrong form", d.Hash())
	}
	sum := sha256.Sum256(d.CanonicalJSON())
	if want := "sha256:" + hex.EncodeToString(sum[:]); d.Hash() != want {
		t.Fatalf("hash is not the SHA-256 of CanonicalJSON")
	}
	want := `{"agents":{"helper":{"instructions":[{"text":"gated","where":{"context":"flag"}},{"text":"always"}]},` +
		`"router":{"handoffs":["helper"],"instructions":"Hello {{context.user.name}} — café ☕","modelSettings":{"stop":["\n"],"temperature":0.5},"name":"Router","tools":["lookup"]}},` +
		`"context":{"references":{"flag":{"type":"boolean"},"user.name":{"optional":true,"type":"string"}}},` +
		`"descriptor_version":"aioc.agent_graph.v0","metadata":{"name":"demo","version":"1","weights":[1,2.5,1000]},` +
		`"runtime":{"entry_agent":"router","max_turns":8},"tools":{"lookup":{"target":"t://lookup"}}}`
	if got := string(d.CanonicalJSON()); got != want {
		t.Fatalf("canonical JSON:\n got %s\nwant %s", got, want)
	}
	if got, _ := d.MarshalJSON(); string(got) != want {
		t.Error("MarshalJSON differs from CanonicalJSON")
	}
}

func TestHashChangesWithContent(t *testing.T) {
	a := mustParse(t, minimal("    instructions: one\n"))
	b := mustParse(t, minimal("    instructions: two\n"))
	if a.Hash() == b.Hash() {
		t.Fatal("different instructions, same hash")
	}
}

func TestHashSeesMaterializedInstructions(t *testing.T) {
	fromFile, err := loadFiles(t, map[string]string{
		"harness.yaml": minimal("    instructions_file: a.md\n"),
		"a.md":         "Be brief.",
	})
	if err != nil {
		t.Fatal(err)
	}
	inline := mustParse(t, minimal("    instructions: Be brief.\n"))
	if fromFile.Hash() != inline.Hash() {
		t.Fatalf("file and inline forms of the same text hash differently")
	}
	changed, err := loadFiles(t, map[string]string{
		"harness.yaml": minimal("    instructions_file: a.md\n"),
		"a.md":         "Be very brief.",
	})
	if err != nil {
		t.Fatal(err)
	}
	if changed.Hash() == fromFile.Hash() {
		t.Fatal("changing the file content did not change the hash")
	}

	// A sequence with a ref hashes like the same parts written out, with the
	// part content; editing the catalog changes the hash.
	seq := mustParse(t, `
runtime: {entry_agent: a}
instruction_parts: {p: "Part."}
agents:
  a:
    instructions_sequence: [{ref: p}]
`)
	written := mustParse(t, `
runtime: {entry_agent: a}
instruction_parts: {p: "Part."}
agents:
  a:
    instructions: [{text: "Part."}]
`)
	if seq.Hash() != written.Hash() {
		t.Fatal("sequence and materialized list hash differently")
	}
	edited := mustParse(t, `
runtime: {entry_agent: a}
instruction_parts: {p: "Part!"}
agents:
  a:
    instructions_sequence: [{ref: p}]
`)
	if edited.Hash() == seq.Hash() {
		t.Fatal("editing instruction_parts did not change the hash")
	}
}
