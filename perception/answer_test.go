package perception

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

func TestRefineWhenNothingToSearch(t *testing.T) {
	root := workspace(t, goProject)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	for _, target := range []string{
		`{"event":{"description":"the it","event_type":"x","time_range":null}}`,
		`{"entity":{"name":" ","entity_type":"thing","identifier":null}}`,
		`{"relation":{"entities":[],"relation_type":"uses"}}`,
		`{"location":{"path":"","location_type":"file"}}`,
	} {
		d := perceive(t, p, event(t, `{"session_id":"s","intent":"understand","target":`+target+`,"context":{"workspace":"."}}`))
		if d.Decision != "refine" || len(d.ScopeHints) == 0 || d.RefinedIntent != nil || d.RefinedTarget != nil {
			t.Errorf("target %s: %+v, want refine with hints and null intent/target", target, d)
		}
		b, _ := json.Marshal(d)
		if !strings.Contains(string(b), `"refined_intent":null`) || !strings.Contains(string(b), `"refined_target":null`) {
			t.Errorf("refine on the wire: %s", b)
		}
	}

	// With facts configured, the same vague event is answered with them.
	p = newPerceiver(t, Options{WorkspaceRoots: []string{root},
		Facts: []protocol.Fact{{Content: "deploys happen on Fridays", Source: "team", Confidence: 1}}})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"understand",
		"target":{"event":{"description":"","event_type":"x","time_range":null}},"context":{"workspace":"."}}`))
	if d.Decision != "allow" || len(d.InjectedContext.Facts) != 1 || len(d.InjectedContext.FileContents) != 0 {
		t.Errorf("with facts: %+v, want allow with the fact and no files", d)
	}
}

func TestFactsSelection(t *testing.T) {
	var facts []protocol.Fact
	for i := range 12 {
		facts = append(facts, protocol.Fact{Content: fmt.Sprintf("general fact %d", i), Source: "cfg", Confidence: 0.5})
	}
	facts[9].Content = "the database is Postgres 16"
	facts[11].Content = "postgres backups run nightly"
	facts[3].Confidence = 0.9
	p := newPerceiver(t, Options{Facts: facts})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"retrieve",
		"target":{"resource":{"name":"postgres","resource_type":"database","constraints":null}},"context":{"workspace":"."}}`))
	got := d.InjectedContext.Facts
	if len(got) != maxFacts {
		t.Fatalf("%d facts, want %d", len(got), maxFacts)
	}
	if got[0].Content != facts[9].Content || got[1].Content != facts[11].Content || got[2].Content != facts[3].Content {
		t.Errorf("facts start %q, %q, %q; want the two about postgres, then the most confident", got[0].Content, got[1].Content, got[2].Content)
	}
	if !hasSuggestion(d, noteNoRoots) || d.InjectedContext.ProjectSummary != nil {
		t.Errorf("without roots: suggestions %q summary %v", d.InjectedContext.Suggestions, d.InjectedContext.ProjectSummary)
	}

	p = newPerceiver(t, Options{Facts: facts[:4]})
	if got := perceive(t, p, event(t, `{"session_id":"s","intent":"retrieve",
		"target":{"resource":{"name":"x1","resource_type":"db","constraints":null}},"context":{"workspace":"."}}`)).InjectedContext.Facts; len(got) != 4 {
		t.Errorf("%d facts, want all 4 configured", len(got))
	}
}

func TestNewChecksRoots(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, roots := range [][]string{{""}, {filepath.Join(dir, "missing")}, {file}} {
		if _, err := New(Options{WorkspaceRoots: roots}); err == nil {
			t.Errorf("New(%q) accepted a bad root", roots)
		}
	}
	t.Chdir(dir)
	p, err := New(Options{WorkspaceRoots: []string{".", dir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.roots) != 1 || !filepath.IsAbs(p.roots[0].dir) {
		t.Errorf("roots %+v, want one absolute root (duplicates merged)", p.roots)
	}
	if p.maxFiles != defaultMaxFiles || p.maxSnippets != defaultMaxSnippets || p.maxFileBytes != defaultMaxFileBytes {
		t.Errorf("defaults not applied: %d %d %d", p.maxFiles, p.maxSnippets, p.maxFileBytes)
	}
	if p, _ := New(Options{MaxSnippets: 500}); p.maxSnippets != maxResultsCap {
		t.Errorf("MaxSnippets %d not capped at %d", p.maxSnippets, maxResultsCap)
	}
}

func TestNilPayload(t *testing.T) {
	p := newPerceiver(t, Options{})
	if _, err := p.Perceive(t.Context(), nil); err == nil {
		t.Error("nil payload accepted")
	}
}
