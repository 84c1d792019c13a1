package descriptor

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestInstructionsFile(t *testing.T) {
	_, err := loadFiles(t, map[string]string{
		"harness.yaml":      minimal("    instructions_file: ./prompts/router.md\n"),
		"prompts/router.md": "Route {{context.topic}}.",
	})
	if err == nil {
		t.Fatal("undeclared placeholder in a file was accepted")
	}
	wantProblem(t, err, `agent "a": instructions_file (file "./prompts/router.md")`, `"topic" is not declared`)

	d, err := loadFiles(t, map[string]string{
		"harness.yaml":      minimal("    instructions_file: prompts/router.md\n"),
		"prompts/router.md": "Route the next turn.\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := d.Agent("a")
	if got := a.Instructions(); len(got) != 1 || got[0].Text != "Route the next turn.\n" {
		t.Fatalf("Instructions = %#v", got)
	}
	if strings.Contains(string(d.CanonicalJSON()), "instructions_file") {
		t.Errorf("materialized descriptor still names the file: %s", d.CanonicalJSON())
	}
}

func TestInstructionsFilesJoinedThenInline(t *testing.T) {
	d, err := loadFiles(t, map[string]string{
		"harness.yaml": minimal(`    instructions_files:
      - ./prompts/shared.md
      - prompts/game-master.md
    instructions: |-
      Inline comes last.
`),
		"prompts/shared.md":      "Shared rules.",
		"prompts/game-master.md": "You are the game master.",
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.ResolveInstructions("a", nil)
	want := "Shared rules.\n\nYou are the game master.\n\nInline comes last."
	if err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
	var tree map[string]any
	if err := json.Unmarshal(d.CanonicalJSON(), &tree); err != nil {
		t.Fatal(err)
	}
	agent := tree["agents"].(map[string]any)["a"].(map[string]any)
	if !reflect.DeepEqual(agent, map[string]any{"instructions": want}) {
		t.Errorf("materialized agent = %v", agent)
	}

	// Empty inline text adds nothing.
	d, err = loadFiles(t, map[string]string{
		"harness.yaml": minimal("    instructions_files: [a.md]\n    instructions: \"\"\n"),
		"a.md":         "A",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := d.ResolveInstructions("a", nil); got != "A" {
		t.Errorf("got %q, want A", got)
	}
}

func TestInstructionsMutualExclusions(t *testing.T) {
	files := map[string]string{"a.md": "A", "b.md": "B"}
	for _, tc := range []struct {
		name, body, want string
	}{
		{"file and inline", "    instructions_file: a.md\n    instructions: x\n", "instructions_file: cannot be combined with inline instructions"},
		{"file and files", "    instructions_file: a.md\n    instructions_files: [b.md]\n", "instructions_file: cannot be combined with instructions_files"},
		{"sequence and inline", "    instructions_sequence: [{text: x}]\n    instructions: y\n", "instructions_sequence: cannot be combined with instructions"},
		{"sequence and file", "    instructions_sequence: [{text: x}]\n    instructions_file: a.md\n", "instructions_sequence: cannot be combined with instructions_file"},
		{"sequence and files", "    instructions_sequence: [{text: x}]\n    instructions_files: [a.md]\n", "instructions_sequence: cannot be combined with instructions_files"},
		{"files with list inline", "    instructions_files: [a.md]\n    instructions: [{text: x}]\n", "instructions: must be a string when combined with instructions_files"},
		{"empty files", "    instructions_files: []\n", "instructions_files: must be a non-empty list"},
		{"empty sequence", "    instructions_sequence: []\n", "instructions_sequence: must be a non-empty list"},
		{"item with two sources", "    instructions_sequence: [{text: x, ref: y}]\n", "instructions_sequence[0]: must set exactly one of file, ref or text, not ref and text"},
		{"item with no source", "    instructions_sequence: [{where: {context: f}}]\n", "instructions_sequence[0]: must set exactly one of file, ref or text"},
		{"item unknown key", "    instructions_sequence: [{text: x, when: y}]\n", `instructions_sequence[0]: unknown key "when"`},
		{"unknown ref", "    instructions_sequence: [{ref: nope}]\n", `instructions_sequence[0].ref: unknown instruction part "nope"`},
		{"bad where", "    instructions_sequence: [{text: x, where: flag}]\n", "instructions_sequence[0].where: must be an object"},
		{"where with extra key", "    instructions_sequence: [{text: x, where: {context: f, equals: true}}]\n", `instructions_sequence[0].where: unknown key "equals"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := map[string]string{"harness.yaml": minimal(tc.body)}
			for k, v := range files {
				fs[k] = v
			}
			_, err := loadFiles(t, fs)
			wantProblem(t, err, `agent "a": `+tc.want)
		})
	}
}

func TestInstructionsSequence(t *testing.T) {
	d, err := loadFiles(t, map[string]string{
		"harness.yaml": `
runtime: {entry_agent: qna}
instruction_parts:
  company_context: |-
    COMPANY: {{context.prompt.companyText}}
context:
  references:
    "prompt.companyText": {type: string}
    "prompt.includeCompany": {type: boolean}
    "prompt.includeFile": {type: boolean}
agents:
  qna:
    instructions_sequence:
      - ref: company_context
        where: {context: prompt.includeCompany}
      - file: ./prompts/qna.md
        where: {context: prompt.includeFile}
      - text: Always cite sources.
`,
		"prompts/qna.md": "Use find_chunks.",
	})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := d.Agent("qna")
	want := []Part{
		{Text: "COMPANY: {{context.prompt.companyText}}", Where: "prompt.includeCompany"},
		{Text: "Use find_chunks.", Where: "prompt.includeFile"},
		{Text: "Always cite sources."},
	}
	if got := a.Instructions(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Instructions = %#v\nwant %#v", got, want)
	}
	// The materialized tree holds the list of parts, where clauses included.
	var tree map[string]any
	if err := json.Unmarshal(d.CanonicalJSON(), &tree); err != nil {
		t.Fatal(err)
	}
	instr := tree["agents"].(map[string]any)["qna"].(map[string]any)["instructions"]
	wantTree := []any{
		map[string]any{"text": "COMPANY: {{context.prompt.companyText}}", "where": map[string]any{"context": "prompt.includeCompany"}},
		map[string]any{"text": "Use find_chunks.", "where": map[string]any{"context": "prompt.includeFile"}},
		map[string]any{"text": "Always cite sources."},
	}
	if !reflect.DeepEqual(instr, wantTree) {
		t.Fatalf("materialized instructions = %#v", instr)
	}

	ctx := map[string]any{"prompt": map[string]any{"includeCompany": true, "includeFile": false, "companyText": "ACME"}}
	got, err := d.ResolveInstructions("qna", ctx)
	if err != nil || got != "COMPANY: ACME\n\nAlways cite sources." {
		t.Fatalf("got %q, %v", got, err)
	}
	ctx = map[string]any{"prompt": map[string]any{"includeCompany": false, "includeFile": true}}
	got, err = d.ResolveInstructions("qna", ctx)
	if err != nil || got != "Use find_chunks.\n\nAlways cite sources." {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestAgentDefaultsInstructionFile(t *testing.T) {
	d, err := loadFiles(t, map[string]string{
		"harness.yaml": `
runtime: {entry_agent: a}
agent_defaults:
  instructions_file: defaults.md
agents:
  a: {}
  b: {instructions: own}
`,
		"defaults.md": "Default text.",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := d.ResolveInstructions("a", nil); got != "Default text." {
		t.Errorf("a = %q", got)
	}
	if got, _ := d.ResolveInstructions("b", nil); got != "own" {
		t.Errorf("b = %q", got)
	}
}

func TestDotDotEscapingRootIsRefused(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"secret.md": "top secret",
		"app/harness.yaml": minimal(`    instructions_files:
      - ok.md
      - ../secret.md
      - sub/../../secret.md
`),
		"app/ok.md": "fine",
	})
	_, err := Load(filepath.Join(dir, "app", "harness.yaml"))
	wantProblem(t, err, `agent "a": instructions_files[1]`, `"../secret.md" escapes the root directory`)
	wantProblem(t, err, `agent "a": instructions_files[2]`, "escapes the root directory")
	if strings.Contains(err.Error(), "top secret") {
		t.Fatal("escaping file was read")
	}

	// With a wider root, the same path is allowed.
	l := Loader{RootDir: dir}
	writeFiles(t, dir, map[string]string{"app/harness.yaml": minimal("    instructions_file: ../secret.md\n")})
	d, err := l.Load(filepath.Join(dir, "app", "harness.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := d.ResolveInstructions("a", nil); got != "top secret" {
		t.Errorf("got %q", got)
	}

	// A descriptor outside the root is refused.
	l = Loader{RootDir: filepath.Join(dir, "app", "nested")}
	_, err = l.Load(filepath.Join(dir, "app", "harness.yaml"))
	wantProblem(t, err, "is not inside the root directory")
}

func TestSymlinkEscapingRootIsRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"outside/secret.md": "top secret",
		"app/harness.yaml":  minimal("    instructions_file: prompts/evil.md\n"),
		"app/real.md":       "inside",
	})
	if err := os.MkdirAll(filepath.Join(dir, "app", "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A file link and a directory link that both lead out of the root.
	if err := os.Symlink(filepath.Join(dir, "outside", "secret.md"), filepath.Join(dir, "app", "prompts", "evil.md")); err != nil {
		t.Fatal(err)
	}
	_, err := Load(filepath.Join(dir, "app", "harness.yaml"))
	wantProblem(t, err, `agent "a": instructions_file`, "resolves outside the root directory")

	if err := os.Symlink(filepath.Join(dir, "outside"), filepath.Join(dir, "app", "linkdir")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"app/harness.yaml": minimal("    instructions_file: linkdir/secret.md\n")})
	_, err = Load(filepath.Join(dir, "app", "harness.yaml"))
	wantProblem(t, err, "resolves outside the root directory")

	// A link that stays inside the root is followed.
	if err := os.Symlink("../real.md", filepath.Join(dir, "app", "prompts", "good.md")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"app/harness.yaml": minimal("    instructions_file: prompts/good.md\n")})
	d, err := Load(filepath.Join(dir, "app", "harness.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := d.ResolveInstructions("a", nil); got != "inside" {
		t.Errorf("got %q", got)
	}
}

func TestRefusedPaths(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"/etc/passwd", "is absolute"},
		{"https://example.com/p.md", "is a URL"},
		{"file:///etc/passwd", "is a URL"},
		{"prompts/*.md", "glob characters"},
		{"prompts/{a,b}.md", "glob characters"},
		{"prompts/[ab].md", "glob characters"},
		{`prompts\a.md`, "backslash"},
		{"C:/x.md", "is absolute"},
		{"", "path is empty"},
		{".", "names the root directory"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			_, err := loadFiles(t, map[string]string{
				"harness.yaml": minimal("    instructions_file: '" + tc.path + "'\n"),
			})
			wantProblem(t, err, `agent "a": instructions_file`, tc.want)
		})
	}
	_, err := loadFiles(t, map[string]string{"harness.yaml": minimal("    instructions_file: missing.md\n")})
	wantProblem(t, err, `instructions_file`, "missing.md")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file error does not wrap fs.ErrNotExist: %v", err)
	}
	_, err = loadFiles(t, map[string]string{"harness.yaml": minimal("    instructions_file: dir\n"), "dir/x.md": "x"})
	wantProblem(t, err, "not a regular file")
}

func TestPromptMap(t *testing.T) {
	src := []byte(`
runtime: {entry_agent: router}
agents:
  router:
    instructions_file: ./prompts/router.md
  other:
    instructions_sequence:
      - file: prompts/router.md
      - file: ../app/prompts/extra.md
`)
	l := Loader{Prompts: map[string]string{
		"./prompts/router.md": "Route the next turn.",
		"prompts/extra.md":    "Extra.",
	}}
	// Without a base directory, "../app" climbs out of the anonymous root.
	_, err := l.Parse(src, FormatYAML, "")
	wantProblem(t, err, `"../app/prompts/extra.md" escapes the root directory`)

	// With a base and root directory, paths resolve lexically; the
	// filesystem is never read.
	base := filepath.Join(t.TempDir(), "app")
	l.RootDir = filepath.Dir(base)
	l.Prompts["/elsewhere/x.md"] = "nope"
	_, err = l.Parse(src, FormatYAML, base)
	wantProblem(t, err, `prompt map key "/elsewhere/x.md"`, "outside the root directory")
	delete(l.Prompts, "/elsewhere/x.md")
	l.Prompts[filepath.Join(base, "prompts", "extra.md")] = "Extra."
	d, err := l.Parse(src, FormatYAML, base)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := d.ResolveInstructions("router", nil); got != "Route the next turn." {
		t.Errorf("router = %q", got)
	}
	if got, _ := d.ResolveInstructions("other", nil); got != "Route the next turn.\n\nExtra." {
		t.Errorf("other = %q", got)
	}

	// A missing entry is a problem, and conflicting keys are refused.
	l = Loader{Prompts: map[string]string{"a.md": "A"}}
	_, err = l.Parse([]byte(minimal("    instructions_file: b.md\n")), FormatYAML, "")
	wantProblem(t, err, `"b.md"`, "not in the prompt map")
	l = Loader{Prompts: map[string]string{"a.md": "A", "./a.md": "B"}}
	_, err = l.Parse([]byte(minimal("    instructions_file: a.md\n")), FormatYAML, "")
	wantProblem(t, err, "names the same file as another key")
}

func TestParseWithoutBaseDirNeedsPromptMap(t *testing.T) {
	_, err := Parse([]byte(minimal("    instructions_file: a.md\n")), FormatYAML, "")
	wantProblem(t, err, "no base directory")

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.md": "from disk"})
	d, err := Parse([]byte(minimal("    instructions_file: a.md\n")), FormatYAML, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := d.ResolveInstructions("a", nil); got != "from disk" {
		t.Errorf("got %q", got)
	}
}

func TestSizeLimits(t *testing.T) {
	big := strings.Repeat("x", MaxInstructionFileSize+1)
	_, err := loadFiles(t, map[string]string{
		"harness.yaml": minimal("    instructions_file: big.md\n"),
		"big.md":       big,
	})
	wantProblem(t, err, "instructions_file", "larger than")

	l := Loader{Prompts: map[string]string{"big.md": big}}
	_, err = l.Parse([]byte(minimal("    instructions_file: big.md\n")), FormatYAML, "")
	wantProblem(t, err, "larger than")

	huge := "runtime: {entry_agent: a}\nagents: {a: {}}\n#" + strings.Repeat("x", MaxDescriptorSize)
	if _, err := Parse([]byte(huge), FormatYAML, ""); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("huge descriptor: %v", err)
	}
	_, err = loadFiles(t, map[string]string{"harness.yaml": huge})
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("huge descriptor file: %v", err)
	}

	// One file used many times counts each time.
	half := strings.Repeat("y", MaxInstructionFileSize)
	var b strings.Builder
	b.WriteString("runtime: {entry_agent: a0}\nagents:\n")
	for i := range MaxInstructionsTotal/MaxInstructionFileSize + 1 {
		b.WriteString("  a" + string(rune('0'+i%10)) + string(rune('a'+i/10)) + ": {instructions_file: half.md}\n")
	}
	_, err = loadFiles(t, map[string]string{"harness.yaml": b.String(), "half.md": half})
	wantProblem(t, err, "more than", "bytes of instructions")
}

func TestInvalidUTF8InstructionFile(t *testing.T) {
	_, err := loadFiles(t, map[string]string{
		"harness.yaml": minimal("    instructions_file: bin.md\n"),
		"bin.md":       "ok \xff\xfe",
	})
	wantProblem(t, err, "not valid UTF-8")
}

func TestDecodeRules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format Format
		src    string
		want   string
	}{
		{"yaml duplicate key", FormatYAML, "runtime: {entry_agent: a}\nagents: {a: {}}\nagents: {b: {}}\n", `duplicate key "agents"`},
		{"yaml two documents", FormatYAML, "runtime: {entry_agent: a}\nagents: {a: {}}\n---\nx: 1\n", "more than one document"},
		{"yaml complex key", FormatYAML, "runtime: {entry_agent: a}\nagents: {a: {}}\n? [x]\n: x\n", "mapping keys must be scalars"},
		{"yaml custom tag", FormatYAML, "runtime: {entry_agent: !env A}\nagents: {a: {}}\n", "unknown tag !<!env>"},
		{"yaml infinity", FormatYAML, "runtime: {entry_agent: a, max_turns: .inf}\nagents: {a: {}}\n", "must be a positive integer, not Infinity"},
		{"yaml syntax", FormatYAML, "runtime: [\n", "invalid YAML"},
		{"yaml empty", FormatYAML, "", "empty"},
		{"yaml list", FormatYAML, "- a\n", "must be an object"},
		{"json duplicate key", FormatJSON, `{"runtime":{"entry_agent":"a"},"agents":{"a":{}},"agents":{}}`, `duplicate object key "agents"`},
		{"json trailing", FormatJSON, `{"runtime":{"entry_agent":"a"},"agents":{"a":{}}} {}`, "after the top-level value"},
		{"json syntax", FormatJSON, `{"runtime":`, "invalid JSON"},
		{"json deep", FormatJSON, strings.Repeat("[", 100) + strings.Repeat("]", 100), "nesting deeper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), tc.format, "")
			wantProblem(t, err, tc.want)
		})
	}
}

func TestYAMLAliasesMergeKeysAndTimestamps(t *testing.T) {
	d := mustParse(t, `
runtime: {entry_agent: a}
metadata:
  released: 2026-05-22
  base: &base {temperature: 0.1, top_p: 1}
agents:
  a:
    modelSettings:
      <<: *base
      temperature: 0.5
  b:
    modelSettings: *base
`)
	a, _ := d.Agent("a")
	if want := map[string]any{"temperature": 0.5, "top_p": 1.0}; !reflect.DeepEqual(a.ModelSettings(), want) {
		t.Errorf("merged settings = %v", a.ModelSettings())
	}
	b, _ := d.Agent("b")
	if want := map[string]any{"temperature": 0.1, "top_p": 1.0}; !reflect.DeepEqual(b.ModelSettings(), want) {
		t.Errorf("aliased settings = %v", b.ModelSettings())
	}
	// Timestamps become ISO strings in UTC, as aioc's js-yaml Date objects
	// do in its canonical JSON.
	if got := d.RawMetadata()["released"]; got != "2026-05-22T00:00:00.000Z" {
		t.Errorf("released = %#v", got)
	}
}

func TestUnknownKeysAreRefused(t *testing.T) {
	_, err := Parse([]byte(`
runtime: {entry_agent: a, turns: 3}
tools: {t: {target: x, version: 2}}
context: {field: {}}
agents:
  a: {instruction_file: a.md, tool: [t]}
`), FormatYAML, "")
	wantProblem(t, err, "runtime", `unknown key "turns"`)
	wantProblem(t, err, `tools "t"`, `unknown key "version"`)
	wantProblem(t, err, "context", `unknown key "field"`)
	wantProblem(t, err, `agent "a"`, `unknown key "instruction_file"`)
	wantProblem(t, err, `agent "a"`, `unknown key "tool"`)
	// Open objects accept anything.
	mustParse(t, `
runtime: {entry_agent: a}
metadata: {name: n, anything: [1, 2]}
context:
  fields: {f: {type: string, default: x, pii: true}}
  references: {f: {type: string, note: fine}}
agents:
  a: {modelSettings: {whatever: {deep: true}}}
`)
}

func TestShapeProblems(t *testing.T) {
	_, err := Parse([]byte(`
descriptor_version: aioc.agent_graph.v1
metadata: {name: 3}
runtime: {entry_agent: a, max_turns: 0}
context:
  fields:
    "bad path!": {type: string}
    notype: {default: 1}
    flag: {type: boolean, optional: "yes"}
  references:
    r: 1
tools: {t: {}}
instruction_parts: {p: [1]}
agents:
  a: {tools: [t, t, 3], name: [x], modelSettings: 1}
  b: "text"
`), FormatYAML, "")
	for _, want := range [][]string{
		{"descriptor_version", "unsupported version"},
		{"metadata.name", "must be a string"},
		{"runtime.max_turns", "positive integer"},
		{`context.fields "notype": type`, "is required"},
		{`context.fields "flag": optional`, "must be a boolean"},
		{`context.references "r"`, "must be true, false or an object"},
		{`tools "t": target`, "is required"},
		{`instruction_parts "p"`, "must be a string"},
		{`agent "a": tools[1]`, `"t" is listed twice`},
		{`agent "a": tools[2]`, "must be a non-empty string"},
		{`agent "a": name`, "must be a string"},
		{`agent "a": modelSettings`, "must be an object"},
		{`agent "b"`, "must be an object"},
	} {
		wantProblem(t, err, want...)
	}
	_, err = Parse([]byte("runtime: {entry_agent: a}\nagents: {}\n"), FormatYAML, "")
	wantProblem(t, err, "agents", "at least one agent")
	_, err = Parse([]byte("agents: {a: {}}\n"), FormatYAML, "")
	wantProblem(t, err, "runtime", "is required")
}

func TestContextDefaultConflict(t *testing.T) {
	_, err := Parse([]byte(`
runtime: {entry_agent: a}
context:
  fields:
    prompt: {type: string, default: flat}
    "prompt.tone": {type: string, default: formal}
agents: {a: {}}
`), FormatYAML, "")
	wantProblem(t, err, `context.fields "prompt.tone"`, `default of "prompt", which is not an object`)

	// An object default and a nested default combine.
	d := mustParse(t, `
runtime: {entry_agent: a}
context:
  fields:
    prompt: {type: object, default: {a: 1}}
    "prompt.tone": {type: string, default: formal}
agents: {a: {}}
`)
	ctx, _ := d.NewContext(ContextInput{})
	if want := map[string]any{"prompt": map[string]any{"a": 1.0, "tone": "formal"}}; !reflect.DeepEqual(ctx, want) {
		t.Errorf("context = %v", ctx)
	}
}

func TestLoadFormatByExtension(t *testing.T) {
	d, err := loadFiles(t, map[string]string{
		"harness.json": `{"runtime": {"entry_agent": "a"}, "agents": {"a": {"instructions_file": "a.md"}}}`,
		"a.md":         "A",
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.Source() == "" || !strings.HasSuffix(d.Source(), "harness.json") {
		t.Errorf("Source = %q", d.Source())
	}
	// Auto detection for other extensions.
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"h.desc":  `{"runtime": {"entry_agent": "a"}, "agents": {"a": {}}}`,
		"h2.desc": "runtime: {entry_agent: a}\nagents: {a: {}}\n",
	})
	for _, n := range []string{"h.desc", "h2.desc"} {
		if _, err := Load(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if FormatForPath("x.YML") != FormatYAML || FormatForPath("x.json") != FormatJSON || FormatForPath("x") != FormatAuto {
		t.Error("FormatForPath")
	}
}

func TestErrorFormatting(t *testing.T) {
	_, err := loadFiles(t, map[string]string{"harness.yaml": "runtime: {entry_agent: ghost}\nagents: {a: {tools: [x]}}\n"})
	e := asError(t, err)
	msg := e.Error()
	if !strings.Contains(msg, "harness.yaml: 2 problems:\n  ") ||
		!strings.Contains(msg, `agent "a": tools[0]: unknown tool "x"`) {
		t.Errorf("message = %q", msg)
	}
	var p *Problem
	if !errors.As(err, &p) {
		t.Error("errors.As does not reach a *Problem")
	}
	if ProblemsOf(nil) != nil || len(ProblemsOf(errors.New("x"))) != 1 {
		t.Error("ProblemsOf")
	}
}

func TestYAMLAliasExpansionIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("runtime: {entry_agent: a}\nagents: {a: {}}\nmetadata:\n  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 7; i++ {
		prev := "*l" + strconv.Itoa(i-1)
		b.WriteString("  l" + strconv.Itoa(i) + ": &l" + strconv.Itoa(i) + " [" + strings.TrimSuffix(strings.Repeat(prev+", ", 10), ", ") + "]\n")
	}
	_, err := Parse([]byte(b.String()), FormatYAML, "")
	wantProblem(t, err, "expands to more than")
}
