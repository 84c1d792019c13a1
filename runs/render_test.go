package runs_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs"
	"github.com/ahp-go/ahp/runs/runstest"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (rerun with -update to accept):\n%s", name, got)
	}
}

func TestWriteTreeScripted(t *testing.T) {
	rec, _ := applyAll(t, runstest.Session())
	rec.SetDescriptor(runs.DescriptorRef{Hash: "sha256:0123abcd", Name: "coder", Version: "1.2.0"})
	var b bytes.Buffer
	if err := runs.WriteTree(&b, rec); err != nil {
		t.Fatal(err)
	}
	golden(t, "scripted.tree", b.String())
}

func TestWriteTable(t *testing.T) {
	rec, _ := applyAll(t, runstest.Session())
	fresh := new(runs.Record)
	ev := lifecycle("run-2", "sess-2", 1, "executing")
	if _, err := runs.Apply(fresh, &ev); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := runs.WriteTable(&b, []*runs.Record{rec, fresh, {RunID: "run-3", SessionID: "sess-3"}}); err != nil {
		t.Fatal(err)
	}
	golden(t, "table.txt", b.String())
}

// Agent-supplied text cannot drive the terminal: escape sequences and
// line breaks are printed as spaces.
func TestWriteTreeCleansText(t *testing.T) {
	rec := new(runs.Record)
	ev := event(protocol.EventTaskList, "s", `{"run_id":"r\u001b[2J","session_id":"s","updated_at":"`+ts(1)+`",
		"tasks":[{"id":"t1","title":"line\nbreak\u001b]0;owned\u0007","status":"failed","error":"boom\r\n"}]}`)
	if _, err := runs.Apply(rec, &ev); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	runs.WriteTree(&b, rec)
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07\r") || !strings.Contains(out, "✗ t1  line break ]0;owned  (failed)") ||
		!strings.Contains(out, "error  boom") {
		t.Errorf("tree:\n%s", out)
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:] {
		if !strings.HasPrefix(line, "├─") && !strings.HasPrefix(line, "└─") && !strings.HasPrefix(line, "│") {
			t.Errorf("line %d escapes the tree: %q", i+2, line)
		}
	}
}
