package perception

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for the summary cache.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestSummaryIsCached(t *testing.T) {
	root := workspace(t, goProject)
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	p.cache = newSummaryCache(clock.now)
	ev := event(t, `{"session_id":"s","intent":"explore",
		"target":{"location":{"path":".","location_type":"workspace"}},"context":{"workspace":"`+root+`"}}`)
	before := perceive(t, p, ev).InjectedContext.ProjectSummary.StructureDescription

	writeTree(t, root, map[string]string{"api/openapi.yaml": "openapi: 3.1.0\n"})
	clock.advance(summaryTTL - time.Second)
	if got := perceive(t, p, ev).InjectedContext.ProjectSummary.StructureDescription; got != before {
		t.Errorf("summary changed within the TTL: %q", got)
	}
	clock.advance(2 * time.Second)
	after := perceive(t, p, ev).InjectedContext.ProjectSummary.StructureDescription
	if !strings.Contains(after, "api/ (1 files)") {
		t.Errorf("summary after the TTL %q lacks the new directory", after)
	}
}

func TestSummaryCacheIsBounded(t *testing.T) {
	base := t.TempDir()
	c := newSummaryCache(time.Now)
	for i := range maxCacheEntries + 10 {
		dir := filepath.Join(base, "d", string(rune('a'+i%26))+strings.Repeat("x", i/26))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := c.get(context.Background(), dir); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.entries); n > maxCacheEntries {
		t.Errorf("cache holds %d entries, more than %d", n, maxCacheEntries)
	}
}

func TestSummaryLanguageAndOptions(t *testing.T) {
	root := workspace(t, map[string]string{
		"pyproject.toml": "[project]\nname='x'\n",
		"README.rst":     "x\n",
		"Dockerfile":     "FROM python\n",
		"src/a.py":       "",
		"src/b.py":       "",
		"src/c.js":       "",
		"tools/d.go":     "",
	})
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	d := perceive(t, p, event(t, `{"session_id":"s","intent":"explore",
		"target":{"location":{"path":".","location_type":"workspace"}},"context":{"workspace":"."}}`))
	ps := d.InjectedContext.ProjectSummary
	if ps.Language != "Python" {
		t.Errorf("language %q, want Python", ps.Language)
	}
	if !slices.Equal(ps.KeyFiles, []string{"Dockerfile", "README.rst", "pyproject.toml"}) {
		t.Errorf("key files %v", ps.KeyFiles)
	}

	p = newPerceiver(t, Options{WorkspaceRoots: []string{root}, ProjectName: "ingest", Language: "Python 3"})
	ps = perceive(t, p, event(t, `{"session_id":"s","intent":"explore",
		"target":{"location":{"path":".","location_type":"workspace"}},"context":{"workspace":"."}}`)).InjectedContext.ProjectSummary
	if ps.ProjectName != "ingest" || ps.Language != "Python 3" {
		t.Errorf("summary %q/%q ignores the configured name and language", ps.ProjectName, ps.Language)
	}
}

func TestDescribeListsAtMostMaxListed(t *testing.T) {
	d := dirInfo{files: 100}
	for i := range maxListed + 3 {
		d.subdirs = append(d.subdirs, dirCount{name: "d" + string(rune('A'+i)), files: 1})
	}
	s := d.describe("x")
	if !strings.HasSuffix(s, ", and 3 more") || strings.Count(s, "/ (") != maxListed {
		t.Errorf("description %q does not cut the list at %d", s, maxListed)
	}
}
