package perception

import (
	"fmt"
	"strings"
	"testing"
)

func TestPatternRegexFindsDefinition(t *testing.T) {
	root := workspace(t, goProject)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	d := perceive(t, p, event(t, `{"session_id":"s1","intent":"locate",
		"target":{"pattern":{"pattern":"func\\s+Parse\\w+\\(","pattern_type":"regex"}},
		"domain":"coding","context":{"workspace":"`+root+`","query":"where is the config parsed"}}`))
	if d.Decision != "allow" {
		t.Fatalf("decision %q, want allow", d.Decision)
	}
	fc := d.InjectedContext.FileContents
	if len(fc) == 0 || fc[0].Path != "internal/config/parse.go" {
		t.Fatalf("snippets %v, want internal/config/parse.go first", snippetPaths(d))
	}
	if !strings.Contains(fc[0].Snippet, "func ParseConfig(path string)") {
		t.Errorf("snippet does not show the match:\n%s", fc[0].Snippet)
	}
	// ±5 lines around the match: the doc comment above, the return below.
	if !strings.Contains(fc[0].Snippet, "// ParseConfig reads") || strings.Contains(fc[0].Snippet, "package config") {
		t.Errorf("snippet is not a window around the match:\n%s", fc[0].Snippet)
	}
	for i, s := range fc {
		if s.RelevanceScore <= 0 || s.RelevanceScore > 1 {
			t.Errorf("snippet %d score %v outside (0,1]", i, s.RelevanceScore)
		}
		if i > 0 && s.RelevanceScore > fc[i-1].RelevanceScore {
			t.Errorf("snippets not sorted by score: %v", snippetPaths(d))
		}
		if strings.HasPrefix(s.Path, "/") || strings.Contains(s.Path, root) {
			t.Errorf("snippet path %q is not relative to the root", s.Path)
		}
	}
	lines := metaOf(t, d).SnippetLines
	if len(lines) != len(fc) || lines[0][0] != 6 || lines[0][1] != 16 {
		t.Errorf("snippet lines %v, want the first to be [6 16]", lines)
	}
}

func TestPatternLiteralAndBadRegex(t *testing.T) {
	root := workspace(t, map[string]string{
		"a.go": "package a\n\n// TODO(retry): back off\nfunc A() {}\n",
		"b.go": "package b\n\n// TODO: other\nfunc B() {}\n",
	})
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})

	d := perceive(t, p, event(t, `{"session_id":"s","intent":"locate",
		"target":{"pattern":{"pattern":"TODO(retry)","pattern_type":"literal"}},"context":{"workspace":"."}}`))
	if got := snippetPaths(d); len(got) != 1 || got[0] != "a.go" {
		t.Errorf("literal pattern found %v, want [a.go]", got)
	}

	d = perceive(t, p, event(t, `{"session_id":"s","intent":"locate",
		"target":{"pattern":{"pattern":"TODO(retry","pattern_type":"regex"}},"context":{"workspace":"."}}`))
	if got := snippetPaths(d); len(got) != 1 || got[0] != "a.go" {
		t.Errorf("invalid regex searched as text found %v, want [a.go]", got)
	}
	if !hasSuggestion(d, "not a valid regular expression") {
		t.Errorf("suggestions %q lack the invalid-regex note", d.InjectedContext.Suggestions)
	}

	long := strings.Repeat("a", maxPatternLen+1)
	d = perceive(t, p, event(t, `{"session_id":"s","intent":"locate",
		"target":{"pattern":{"pattern":"`+long+`","pattern_type":"regex"}},"context":{"workspace":"."}}`))
	if d.Decision != "refine" || d.ScopeHints[0] != noteLongPattern {
		t.Errorf("over-long pattern: decision %q hints %q, want refine led by the length note", d.Decision, d.ScopeHints)
	}
}

func TestPatternGlobMatchesPaths(t *testing.T) {
	root := workspace(t, goProject)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}, MaxSnippets: 10})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"explore",
		"target":{"pattern":{"pattern":"*_test.go","pattern_type":"glob"}},"context":{"workspace":"."}}`))
	if got := snippetPaths(d); len(got) != 1 || got[0] != "internal/store/retry_test.go" {
		t.Errorf("glob found %v, want [internal/store/retry_test.go]", got)
	}
}

func TestEntityNameRanksDefinitionFirst(t *testing.T) {
	root := workspace(t, goProject)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"understand",
		"target":{"entity":{"name":"RetryPolicy","entity_type":"type","identifier":null}},
		"context":{"workspace":"`+root+`"}}`))
	got := snippetPaths(d)
	want := map[string]bool{"internal/store/db.go": true, "internal/store/retry_test.go": true, "docs/design.md": true}
	if len(got) != len(want) {
		t.Fatalf("snippets %v, want the three files naming RetryPolicy", got)
	}
	for _, g := range got {
		if !want[g] {
			t.Errorf("unexpected snippet %q", g)
		}
	}
	for _, s := range d.InjectedContext.FileContents {
		if !strings.Contains(s.Snippet, "RetryPolicy") {
			t.Errorf("snippet of %s does not show the entity:\n%s", s.Path, s.Snippet)
		}
	}
}

func TestPathMatchOutranksContentMatch(t *testing.T) {
	root := workspace(t, map[string]string{
		"billing/invoice.go": "package billing\n\nfunc Total() int { return 0 }\n",
		"notes.txt":          "the invoice is sent monthly\n",
	})
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"locate",
		"target":{"resource":{"name":"invoice","resource_type":"module","constraints":null}},"context":{"workspace":"."}}`))
	got := snippetPaths(d)
	if len(got) != 2 || got[0] != "billing/invoice.go" {
		t.Fatalf("snippets %v, want billing/invoice.go (path match) before notes.txt", got)
	}
	fc := d.InjectedContext.FileContents
	if fc[0].RelevanceScore <= fc[1].RelevanceScore {
		t.Errorf("scores %v, %v: the path match should score higher", fc[0].RelevanceScore, fc[1].RelevanceScore)
	}
}

func TestQueryWordsAndOtherTargets(t *testing.T) {
	root := workspace(t, goProject)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	cases := []struct {
		name, target, query, want string
	}{
		{"relation", `{"relation":{"entities":["Serve","handler"],"relation_type":"calls"}}`, "", "internal/handler/handler.go"},
		{"rule", `{"rule":{"name":"ParseConfig","rule_type":"convention","scope":null}}`, "", "internal/config/parse.go"},
		{"state", `{"state":{"target":"postgres","aspect":"connection","include_history":false}}`, "", "internal/store/db.go"},
		{"event", `{"event":{"description":"the postgres connection failed","event_type":"error","time_range":null}}`, "", "internal/store/db.go"},
		{"query only", `{"event":{"description":"","event_type":"error","time_range":null}}`, "where does the service Serve requests", "internal/handler/handler.go"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			js := fmt.Sprintf(`{"session_id":"s","intent":"locate","target":%s,"context":{"workspace":".","query":%q}}`, c.target, c.query)
			d := perceive(t, p, event(t, js))
			if got := snippetPaths(d); len(got) == 0 || got[0] != c.want {
				t.Errorf("snippets %v, want %s first", got, c.want)
			}
		})
	}
}

func TestNoMatchSuggestsPattern(t *testing.T) {
	root := workspace(t, goProject)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"locate",
		"target":{"entity":{"name":"Zanzibar","entity_type":"type","identifier":null}},"context":{"workspace":"."}}`))
	if d.Decision != "allow" || len(d.InjectedContext.FileContents) != 0 {
		t.Fatalf("decision %q snippets %v, want allow with none", d.Decision, snippetPaths(d))
	}
	if !hasSuggestion(d, "no matching files; try a pattern target") {
		t.Errorf("suggestions %q lack the no-match note", d.InjectedContext.Suggestions)
	}
	if d.InjectedContext.ProjectSummary == nil {
		t.Error("no project summary")
	}
}
