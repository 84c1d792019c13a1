package perception

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ahp-go/ahp/protocol"
)

// manyMatches returns n files that all mention "ledger".
func manyMatches(n int) map[string]string {
	files := make(map[string]string, n)
	for i := range n {
		files[fmt.Sprintf("pkg/f%03d.go", i)] = fmt.Sprintf("package pkg\n\n// ledger entry %d\nvar x%d = %d\n", i, i, i)
	}
	return files
}

func TestMaxResults(t *testing.T) {
	root := workspace(t, manyMatches(60))
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	for _, c := range []struct {
		constraints string
		want        int
	}{
		{``, defaultMaxSnippets},
		{`,"constraints":{"max_results":3,"max_context_length":null}`, 3},
		{`,"constraints":{"max_results":0,"max_context_length":null}`, 0},
		{`,"constraints":{"max_results":1000,"max_context_length":null}`, maxResultsCap},
	} {
		d := perceive(t, p, event(t, `{"session_id":"s","intent":"locate",
			"target":{"entity":{"name":"ledger","entity_type":"concept","identifier":null}},"context":{"workspace":"."}`+c.constraints+`}`))
		if got := len(d.InjectedContext.FileContents); got != c.want {
			t.Errorf("constraints %q: %d snippets, want %d", c.constraints, got, c.want)
		}
	}
	// A location head counts against max_results.
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"locate",
		"target":{"location":{"path":"pkg/f007.go","location_type":"file"}},"context":{"workspace":".","query":"ledger"},
		"constraints":{"max_results":2,"max_context_length":null}}`))
	if got := snippetPaths(d); len(got) != 2 || got[0] != "pkg/f007.go" {
		t.Errorf("snippets %v, want pkg/f007.go and one more", got)
	}
}

func TestMaxSnippetsOption(t *testing.T) {
	root := workspace(t, manyMatches(10))
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}, MaxSnippets: 7})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"locate",
		"target":{"entity":{"name":"ledger","entity_type":"concept","identifier":null}},"context":{"workspace":"."}}`))
	if got := len(d.InjectedContext.FileContents); got != 7 {
		t.Errorf("%d snippets, want MaxSnippets 7", got)
	}
}

func TestMaxContextLengthCutsAtCharacters(t *testing.T) {
	// Each line holds multi-byte characters so a byte cut would break them.
	line := "価格 ledger ünïcödé 日本語\n"
	files := map[string]string{}
	for i := range 4 {
		files[fmt.Sprintf("doc%d.txt", i)] = strings.Repeat(line, 8)
	}
	root := workspace(t, files)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	for _, limit := range []int{0, 1, 7, 50, 300} {
		d := perceive(t, p, event(t, fmt.Sprintf(`{"session_id":"s","intent":"locate",
			"target":{"pattern":{"pattern":"ledger","pattern_type":"literal"}},"context":{"workspace":"."},
			"constraints":{"max_results":null,"max_context_length":%d,"include_sources":true}}`, limit)))
		total := 0
		for _, s := range d.InjectedContext.FileContents {
			if !utf8.ValidString(s.Snippet) || s.Snippet == "" {
				t.Errorf("limit %d: snippet of %s is empty or not UTF-8: %q", limit, s.Path, s.Snippet)
			}
			total += utf8.RuneCountInString(s.Snippet)
		}
		if total != limit {
			t.Errorf("limit %d: snippets hold %d characters, want exactly the limit (all files are longer)", limit, total)
		}
		if limit > 0 && !hasSuggestion(d, "shortened") {
			t.Errorf("limit %d: suggestions %q lack the shortened note", limit, d.InjectedContext.Suggestions)
		}
	}
	// A generous limit changes nothing.
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"locate",
		"target":{"pattern":{"pattern":"ledger","pattern_type":"literal"}},"context":{"workspace":"."},
		"constraints":{"max_results":null,"max_context_length":100000}}`))
	if len(d.InjectedContext.FileContents) != 4 || hasSuggestion(d, "shortened") {
		t.Errorf("generous limit: %d snippets, suggestions %q", len(d.InjectedContext.FileContents), d.InjectedContext.Suggestions)
	}
}

func TestIncludeSourcesFalseOmitsFiles(t *testing.T) {
	root := workspace(t, goProject)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root},
		Facts: []protocol.Fact{{Content: "the shop uses postgres", Source: "ops", Confidence: 0.9}}})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"locate",
		"target":{"entity":{"name":"RetryPolicy","entity_type":"type","identifier":null}},"context":{"workspace":"."},
		"constraints":{"max_results":5,"max_context_length":null,"include_sources":false}}`))
	ic := d.InjectedContext
	if d.Decision != "allow" || len(ic.FileContents) != 0 {
		t.Fatalf("decision %q snippets %v, want allow without file contents", d.Decision, snippetPaths(d))
	}
	if len(ic.Facts) != 1 || ic.ProjectSummary == nil {
		t.Errorf("facts %v summary %v, want both kept", ic.Facts, ic.ProjectSummary)
	}
	if m := metaOf(t, d); m.FilesRead != 0 {
		t.Errorf("read %d files although no sources were wanted", m.FilesRead)
	}
}

func TestMaxFilesStopsSearch(t *testing.T) {
	root := workspace(t, manyMatches(30))
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}, MaxFiles: 5})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"locate",
		"target":{"entity":{"name":"ledger","entity_type":"concept","identifier":null}},"context":{"workspace":"."}}`))
	m := metaOf(t, d)
	if m.FilesRead != 5 || !m.StoppedEarly {
		t.Errorf("metadata %+v, want 5 files read and stopped_early", m)
	}
	if !hasSuggestion(d, "stopped") {
		t.Errorf("suggestions %q lack the stopped note", d.InjectedContext.Suggestions)
	}
}

func TestByteBudgetStopsSearch(t *testing.T) {
	root := workspace(t, manyMatches(40))
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	p.maxBytes = 200 // each file is about 40 bytes
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"locate",
		"target":{"entity":{"name":"ledger","entity_type":"concept","identifier":null}},"context":{"workspace":"."}}`))
	m := metaOf(t, d)
	if !m.StoppedEarly || m.FilesRead == 0 || m.FilesRead > 6 {
		t.Errorf("metadata %+v, want a stop after the few files that fit 200 bytes", m)
	}
}
