package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/descriptor"
)

const cliHarness = `descriptor_version: aioc.agent_graph.v0
metadata: {name: demo, version: v1}
runtime: {entry_agent: router, max_turns: 4}
tools:
  lookup: {target: "t://lookup"}
context:
  fields:
    "turn.message": {type: string, default: "{{input.message}}"}
    "turn.at": {type: string, default: "{{runtime.now_iso}}"}
  references:
    "turn.message": true
    "turn.at": true
    "user.name": {type: string, optional: true}
    "flags.vip": {type: boolean}
agents:
  router:
    handoffs: [helper]
    instructions_file: prompts/router.md
  helper:
    tools: [lookup]
    instructions_sequence:
      - text: "VIP customer {{context.user.name}}."
        where: {context: flags.vip}
      - text: "Message at {{context.turn.at}}: {{context.turn.message}}"
`

// runDescriptorCmd runs "descriptor ARGS..." and returns stdout, stderr
// and the error.
func runDescriptorCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := newDescriptorCmd()
	var out, errw bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errw)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errw.String(), err
}

func writeHarness(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prompts", "router.md"), []byte("Route the turn."), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "harness.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func exitCode(err error) int {
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

func TestDescriptorValidateCmd(t *testing.T) {
	path := writeHarness(t, cliHarness)
	d, err := descriptor.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runDescriptorCmd(t, "validate", path)
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	if !strings.Contains(out, "ok: 2 agents") || !strings.Contains(out, d.Hash()) {
		t.Errorf("stdout = %q", out)
	}

	_, errOut, err := runDescriptorCmd(t, "validate", "--target", "t://other", path)
	if exitCode(err) != 1 || !strings.Contains(errOut, `agent "helper": tools[0]: tool "lookup": target "t://lookup" is not bound`) {
		t.Errorf("registry check: err %v, stderr %q", err, errOut)
	}
	if _, _, err := runDescriptorCmd(t, "validate", "--target", "t://lookup,t://other", path); err != nil {
		t.Errorf("bound registry: %v", err)
	}

	bad := writeHarness(t, "runtime: {entry_agent: ghost}\nagents:\n  triage: {tools: [a, x], handoffs: [nobody]}\n")
	_, errOut, err = runDescriptorCmd(t, "validate", bad)
	if exitCode(err) != 1 {
		t.Fatalf("invalid descriptor: exit %d (%v)", exitCode(err), err)
	}
	for _, want := range []string{
		`runtime.entry_agent: unknown agent "ghost"`,
		`agent "triage": tools[0]: unknown tool "a"`,
		`agent "triage": tools[1]: unknown tool "x"`,
		`agent "triage": handoffs[0]: unknown agent "nobody"`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(err.Error(), "4 problem(s)") {
		t.Errorf("error = %v", err)
	}

	if _, _, err := runDescriptorCmd(t, "validate", filepath.Join(t.TempDir(), "missing.yaml")); exitCode(err) != 1 {
		t.Errorf("missing file: %v", err)
	}
	if _, _, err := runDescriptorCmd(t, "validate"); err == nil {
		t.Error("validate without FILE accepted")
	}
}

func TestDescriptorHashCmd(t *testing.T) {
	path := writeHarness(t, cliHarness)
	d, err := descriptor.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runDescriptorCmd(t, "hash", path)
	if err != nil || out != d.Hash()+"\n" {
		t.Fatalf("hash = %q, %v; want %s", out, err, d.Hash())
	}
	out, _, err = runDescriptorCmd(t, "hash", "--canonical", path)
	if err != nil || out != string(d.CanonicalJSON())+"\n" {
		t.Fatalf("canonical = %q, %v", out, err)
	}
	if !strings.Contains(out, `"instructions":"Route the turn."`) {
		t.Errorf("canonical JSON is not materialized: %s", out)
	}
}

func TestDescriptorRenderCmd(t *testing.T) {
	path := writeHarness(t, cliHarness)

	out, _, err := runDescriptorCmd(t, "render", path, "--agent", "helper",
		"--message", "hello", "--now", "2026-05-22T10:00:00Z",
		"--context", `{"flags":{"vip":true},"user":{"name":"Ada"}}`)
	want := "VIP customer Ada.\n\nMessage at 2026-05-22T10:00:00.000Z: hello\n"
	if err != nil || out != want {
		t.Fatalf("render helper = %q, %v; want %q", out, err, want)
	}

	out, errOut, err := runDescriptorCmd(t, "render", path, "--context", `{"flags":{"vip":false}}`, "--now", "2026-05-22T10:00:00Z")
	if err != nil {
		t.Fatalf("render all: %v (%s)", err, errOut)
	}
	want = "=== helper ===\nMessage at 2026-05-22T10:00:00.000Z: \n\n=== router ===\nRoute the turn.\n"
	if out != want {
		t.Fatalf("render all = %q\nwant %q", out, want)
	}

	// A where gate with no value fails, on stderr, with exit status 1.
	_, errOut, err = runDescriptorCmd(t, "render", path, "--agent", "helper")
	if exitCode(err) != 1 || !strings.Contains(errOut, `agent "helper": instructions_sequence[0].where: context path "flags.vip" is missing`) {
		t.Errorf("missing gate: err %v, stderr %q", err, errOut)
	}

	for _, args := range [][]string{
		{"render", path, "--agent", "ghost"},
		{"render", path, "--context", "[1]"},
		{"render", path, "--context", "{"},
		{"render", path, "--now", "yesterday"},
	} {
		if _, _, err := runDescriptorCmd(t, args...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

func TestDescriptorRootFlag(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shared.md"), []byte("Shared."), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "app", "harness.yaml")
	if err := os.WriteFile(path, []byte("runtime: {entry_agent: a}\nagents: {a: {instructions_file: ../shared.md}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := runDescriptorCmd(t, "validate", path)
	if err == nil || !strings.Contains(errOut, "escapes the root directory") {
		t.Fatalf("without --root: %v, %q", err, errOut)
	}
	out, _, err := runDescriptorCmd(t, "render", "--root", dir, path)
	if err != nil || !strings.Contains(out, "Shared.") {
		t.Fatalf("with --root: %q, %v", out, err)
	}
}

func TestDescriptorCmdIsRegistered(t *testing.T) {
	root := newRootCmd()
	for _, c := range root.Commands() {
		if c.Name() == "descriptor" {
			return
		}
	}
	t.Fatal("descriptor command not registered on the root command")
}
