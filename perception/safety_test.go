package perception

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// escapeSetup builds a root with links that point outside it, next to an
// outside directory holding a secret. It returns root and outside.
func escapeSetup(t *testing.T) (string, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	writeTree(t, root, map[string]string{
		"app.go":       "package app\n\n// needle inside\n",
		"sub/inner.go": "package sub\n",
	})
	writeTree(t, outside, map[string]string{"secret.txt": "needle: the outside secret\n"})
	for link, target := range map[string]string{
		"leak.txt":     filepath.Join(outside, "secret.txt"), // file link out
		"ext":          outside,                              // directory link out
		"rel-leak.txt": "../outside/secret.txt",              // relative link out
		"ok-link.go":   "app.go",                             // link that stays inside
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	return root, outside
}

func TestSymlinkEscapeIsSkipped(t *testing.T) {
	root, _ := escapeSetup(t)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"locate",
		"target":{"pattern":{"pattern":"needle","pattern_type":"literal"}},"context":{"workspace":"`+root+`"}}`))
	got := snippetPaths(d)
	if len(got) != 1 || got[0] != "app.go" {
		t.Errorf("snippets %v, want only app.go (the inside link resolves to it)", got)
	}
	for _, s := range d.InjectedContext.FileContents {
		if strings.Contains(s.Snippet, "outside secret") {
			t.Fatalf("snippet of %s holds the outside file", s.Path)
		}
	}
}

func TestLocationEscapesAreRefused(t *testing.T) {
	root, outside := escapeSetup(t)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	for _, path := range []string{
		"../outside/secret.txt",
		"sub/../../outside/secret.txt",
		filepath.Join(outside, "secret.txt"),
		"/etc/passwd",
		"leak.txt",
		"rel-leak.txt",
		"ext/secret.txt",
		"ext",
	} {
		t.Run(path, func(t *testing.T) {
			d := perceive(t, p, event(t, `{"session_id":"s","intent":"retrieve",
				"target":{"location":{"path":"`+path+`","location_type":"file"}},"context":{"workspace":"`+root+`"}}`))
			if len(d.InjectedContext.FileContents) != 0 {
				t.Errorf("snippets %v for a path outside the root", snippetPaths(d))
			}
			if !hasSuggestion(d, "path is outside the workspace") {
				t.Errorf("suggestions %q lack the outside note", d.InjectedContext.Suggestions)
			}
			if s := d.InjectedContext.ProjectSummary; s != nil && strings.Contains(s.StructureDescription, "secret") {
				t.Errorf("summary describes the outside directory: %q", s.StructureDescription)
			}
		})
	}
	// A path with ".." that stays inside is fine.
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"retrieve",
		"target":{"location":{"path":"sub/../app.go","location_type":"file"}},"context":{"workspace":"`+root+`"}}`))
	if got := snippetPaths(d); len(got) != 1 || got[0] != "app.go" {
		t.Errorf("snippets %v, want app.go", got)
	}
	// A workspace outside the roots is ignored, not used as a base.
	d = perceive(t, p, event(t, `{"session_id":"s","intent":"retrieve",
		"target":{"location":{"path":"secret.txt","location_type":"file"}},"context":{"workspace":"`+outside+`"}}`))
	if len(d.InjectedContext.FileContents) != 0 {
		t.Errorf("snippets %v read relative to an outside workspace", snippetPaths(d))
	}
}

func TestHiddenBinaryLargeAndVendoredFilesAreSkipped(t *testing.T) {
	big := "needle\n" + strings.Repeat("x", 2048)
	root := workspace(t, map[string]string{
		"main.go":               "package main\n// needle\n",
		".env":                  "TOKEN=needle\n",
		".git/config":           "[remote] url = https://needle@example.com\n",
		".cache/x.go":           "needle\n",
		"server.pem":            "needle\n",
		"id_rsa":                "needle\n",
		"image.bin":             "needle\x00\x01\x02",
		"big.txt":               big,
		"vendor/lib/lib.go":     "package lib // needle\n",
		"node_modules/m/i.js":   "// needle\n",
		"web/node_modules/x.js": "// needle\n",
	})
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}, MaxFileBytes: 1024})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"locate",
		"target":{"pattern":{"pattern":"needle","pattern_type":"literal"}},"context":{"workspace":"."},
		"constraints":{"max_results":50,"max_context_length":null,"include_sources":true}}`))
	if got := snippetPaths(d); len(got) != 1 || got[0] != "main.go" {
		t.Errorf("snippets %v, want only main.go", got)
	}
	// Named explicitly, hidden and secret-like files are still refused.
	for _, path := range []string{".env", ".git/config", "server.pem"} {
		d := perceive(t, p, event(t, `{"session_id":"s","intent":"retrieve",
			"target":{"location":{"path":"`+path+`","location_type":"file"}},"context":{"workspace":"."}}`))
		if len(d.InjectedContext.FileContents) != 0 || !hasSuggestion(d, "hidden or may hold secrets") {
			t.Errorf("%s: snippets %v suggestions %q", path, snippetPaths(d), d.InjectedContext.Suggestions)
		}
	}
	// A large file named explicitly gives its head; a binary one nothing.
	d = perceive(t, p, event(t, `{"session_id":"s","intent":"retrieve",
		"target":{"location":{"path":"big.txt","location_type":"file"}},"context":{"workspace":"."}}`))
	if fc := d.InjectedContext.FileContents; len(fc) != 1 || !strings.HasPrefix(fc[0].Snippet, "needle\n") {
		t.Errorf("large file head: %v", snippetPaths(d))
	}
	d = perceive(t, p, event(t, `{"session_id":"s","intent":"retrieve",
		"target":{"location":{"path":"image.bin","location_type":"file"}},"context":{"workspace":"."}}`))
	if len(d.InjectedContext.FileContents) != 0 || !hasSuggestion(d, "binary") {
		t.Errorf("binary file: snippets %v suggestions %q", snippetPaths(d), d.InjectedContext.Suggestions)
	}
}

func TestSnippetPathsNeverAbsolute(t *testing.T) {
	// The root itself is reached through a link: paths stay relative.
	real := workspace(t, goProject)
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	p := newPerceiver(t, Options{WorkspaceRoots: []string{link}})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"retrieve",
		"target":{"location":{"path":"`+filepath.Join(link, "internal", "store", "db.go")+`","location_type":"file"}},
		"context":{"workspace":"`+link+`","query":"ParseConfig"}}`))
	got := snippetPaths(d)
	if len(got) < 2 || got[0] != "internal/store/db.go" {
		t.Fatalf("snippets %v, want internal/store/db.go first", got)
	}
	for _, g := range got {
		if filepath.IsAbs(g) || strings.Contains(g, real) || strings.Contains(g, link) {
			t.Errorf("snippet path %q reveals a host path", g)
		}
	}
	if name := d.InjectedContext.ProjectSummary.ProjectName; name != "ws" {
		t.Errorf("project name %q, want the configured root's base name ws", name)
	}
}
