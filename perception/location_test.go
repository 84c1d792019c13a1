package perception

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLocationFileReturnsHead(t *testing.T) {
	root := workspace(t, goProject)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"retrieve",
		"target":{"location":{"path":"internal/store/db.go","location_type":"file"}},
		"context":{"workspace":"`+root+`","query":"postgres RetryPolicy"}}`))
	fc := d.InjectedContext.FileContents
	if len(fc) == 0 || fc[0].Path != "internal/store/db.go" || fc[0].RelevanceScore != 1 {
		t.Fatalf("snippets %v, want internal/store/db.go first with score 1", snippetPaths(d))
	}
	if !strings.HasPrefix(fc[0].Snippet, "package store\n") || !strings.Contains(fc[0].Snippet, "Attempts int") {
		t.Errorf("snippet is not the file's head:\n%s", fc[0].Snippet)
	}
	if n := countOf(snippetPaths(d), "internal/store/db.go"); n != 1 {
		t.Errorf("the location file appears %d times: %v", n, snippetPaths(d))
	}
}

func TestLocationFileAlsoSearchesQuery(t *testing.T) {
	root := workspace(t, goProject)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"understand",
		"target":{"location":{"path":"cmd/shop/main.go","location_type":"file"}},
		"context":{"workspace":"`+root+`","query":"ParseConfig"}}`))
	got := snippetPaths(d)
	if len(got) < 2 || got[0] != "cmd/shop/main.go" || got[1] != "internal/config/parse.go" {
		t.Errorf("snippets %v, want the location file then internal/config/parse.go", got)
	}
}

func TestLocationRelativeToWorkspace(t *testing.T) {
	root := workspace(t, goProject)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	ws := filepath.Join(root, "internal", "store")
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"retrieve",
		"target":{"location":{"path":"db.go","location_type":"file"}},"context":{"workspace":"`+ws+`"}}`))
	if got := snippetPaths(d); len(got) == 0 || got[0] != "internal/store/db.go" {
		t.Errorf("snippets %v, want internal/store/db.go resolved against the workspace", got)
	}
	// An absolute path inside the root works too.
	d = perceive(t, p, event(t, `{"session_id":"s","intent":"retrieve",
		"target":{"location":{"path":"`+filepath.Join(root, "go.mod")+`","location_type":"file"}},"context":{"workspace":"."}}`))
	if got := snippetPaths(d); len(got) == 0 || got[0] != "go.mod" {
		t.Errorf("snippets %v, want go.mod", got)
	}
}

func TestLocationDirectoryIsListed(t *testing.T) {
	root := workspace(t, goProject)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"explore",
		"target":{"location":{"path":"internal","location_type":"directory"}},"context":{"workspace":"`+root+`"}}`))
	ps := d.InjectedContext.ProjectSummary
	if ps == nil {
		t.Fatal("no project summary")
	}
	want := "internal: 4 files, 0 directly inside; directories: config/ (1 files), handler/ (1 files), store/ (2 files)"
	if ps.StructureDescription != want {
		t.Errorf("structure %q, want %q", ps.StructureDescription, want)
	}
	if len(d.InjectedContext.FileContents) != 0 {
		t.Errorf("snippets %v for a directory without a query", snippetPaths(d))
	}

	d = perceive(t, p, event(t, `{"session_id":"s","intent":"explore",
		"target":{"location":{"path":"internal/store","location_type":"directory"}},
		"context":{"workspace":"`+root+`","query":"RetryPolicy"}}`))
	ps = d.InjectedContext.ProjectSummary
	if !slices.Equal(ps.KeyFiles, []string{"internal/store/db.go", "internal/store/retry_test.go"}) {
		t.Errorf("key files %v, want the directory's files", ps.KeyFiles)
	}
	// The search stays inside the directory: docs/design.md names
	// RetryPolicy too but is not returned.
	for _, g := range snippetPaths(d) {
		if !strings.HasPrefix(g, "internal/store/") {
			t.Errorf("snippet %q is outside the location directory", g)
		}
	}
	if len(snippetPaths(d)) != 2 {
		t.Errorf("snippets %v, want the two store files", snippetPaths(d))
	}
}

func TestLocationWorkspaceRoot(t *testing.T) {
	root := workspace(t, goProject)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"explore",
		"target":{"location":{"path":".","location_type":"workspace"}},"context":{"workspace":"`+root+`"}}`))
	ps := d.InjectedContext.ProjectSummary
	if ps == nil {
		t.Fatal("no project summary")
	}
	if ps.ProjectName != filepath.Base(root) || ps.Language != "Go" {
		t.Errorf("summary name %q language %q, want %q, Go", ps.ProjectName, ps.Language, filepath.Base(root))
	}
	if !slices.Equal(ps.KeyFiles, []string{"Makefile", "README.md", "go.mod"}) {
		t.Errorf("key files %v", ps.KeyFiles)
	}
	want := "workspace root: 9 files, 3 directly inside; directories: cmd/ (1 files), docs/ (1 files), internal/ (4 files)"
	if ps.StructureDescription != want {
		t.Errorf("structure %q, want %q", ps.StructureDescription, want)
	}
}

func TestLocationNotFoundSearchesBaseName(t *testing.T) {
	root := workspace(t, goProject)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"retrieve",
		"target":{"location":{"path":"pkg/handler.go","location_type":"file"}},"context":{"workspace":"."}}`))
	if !hasSuggestion(d, noteNotFound) {
		t.Errorf("suggestions %q lack %q", d.InjectedContext.Suggestions, noteNotFound)
	}
	if got := snippetPaths(d); len(got) == 0 || got[0] != "internal/handler/handler.go" {
		t.Errorf("snippets %v, want the file of the same name", got)
	}
}

func countOf(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}
