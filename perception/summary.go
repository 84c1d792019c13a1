package perception

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	maxCacheEntries = 64    // directory summaries kept
	maxListed       = 40    // subdirectories named in a structure description
	maxKeyFiles     = 50    // files listed for a location directory
	summaryEntries  = 50000 // directory entries one summary scan visits
)

// dirInfo summarizes a directory without reading any file.
type dirInfo struct {
	files    int            // regular files beneath the directory
	subdirs  []dirCount     // direct subdirectories, by name
	topFiles []string       // names of the regular files directly inside
	langs    map[string]int // language name → number of files
	partial  bool           // the scan stopped at summaryEntries
}

// dirCount is a subdirectory and the regular files beneath it.
type dirCount struct {
	name  string
	files int
}

// scanDir walks dir with the search's filters (no hidden, vendor or
// node_modules directories, no hidden files, links not followed).
func scanDir(ctx context.Context, dir string) (dirInfo, error) { return scanDirSkip(ctx, dir, nil) }

// scanDirSkip is scanDir leaving out the paths skip reports (the
// harness's own files); skip may be nil.
func scanDirSkip(ctx context.Context, dir string, skip func(string) bool) (dirInfo, error) {
	info := dirInfo{langs: make(map[string]int)}
	counts := make(map[string]int)
	entries := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if d != nil && d.IsDir() && p != dir {
				return fs.SkipDir
			}
			return err
		}
		if p == dir {
			return nil
		}
		if skip != nil && skip(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if entries++; entries > summaryEntries {
			info.partial = true
			return fs.SkipAll
		}
		rel, _ := filepath.Rel(dir, p)
		top, _, nested := strings.Cut(filepath.ToSlash(rel), "/")
		if d.IsDir() {
			if skipDirName(d.Name()) {
				return fs.SkipDir
			}
			if !nested {
				counts[top] += 0
			}
			return nil
		}
		if !d.Type().IsRegular() || skipFileName(d.Name()) {
			return nil
		}
		info.files++
		if lang := languages[strings.ToLower(filepath.Ext(d.Name()))]; lang != "" {
			info.langs[lang]++
		}
		if nested {
			counts[top]++
		} else {
			info.topFiles = append(info.topFiles, top)
		}
		return nil
	})
	if err != nil {
		return dirInfo{}, fmt.Errorf("scan directory: %w", err)
	}
	for name, n := range counts {
		info.subdirs = append(info.subdirs, dirCount{name, n})
	}
	slices.SortFunc(info.subdirs, func(a, b dirCount) int { return strings.Compare(a.name, b.name) })
	slices.Sort(info.topFiles)
	return info, nil
}

// language returns the language of the most files (ties by name), or "".
func (d dirInfo) language() string {
	best, n := "", 0
	for lang, c := range d.langs {
		if c > n || (c == n && lang < best) {
			best, n = lang, c
		}
	}
	return best
}

// describe writes a structure description of d, naming it label.
func (d dirInfo) describe(label string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d files, %d directly inside", label, d.files, len(d.topFiles))
	if len(d.subdirs) == 0 {
		b.WriteString("; no subdirectories")
	} else {
		b.WriteString("; directories: ")
		for i, s := range d.subdirs {
			if i == maxListed {
				fmt.Fprintf(&b, ", and %d more", len(d.subdirs)-maxListed)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s/ (%d files)", s.name, s.files)
		}
	}
	if d.partial {
		b.WriteString(" (counts are partial: the scan limit was reached)")
	}
	return b.String()
}

// keyFiles returns the names among d's files that usually describe a
// project: READMEs, licences, build and package manifests.
func (d dirInfo) keyFiles() []string {
	var out []string
	for _, name := range d.topFiles {
		low := strings.ToLower(name)
		if knownKeyFiles[low] || strings.HasPrefix(low, "readme") || strings.HasPrefix(low, "license") ||
			strings.HasPrefix(low, "licence") || strings.HasPrefix(low, "dockerfile") {
			out = append(out, name)
		}
	}
	return out
}

var knownKeyFiles = map[string]bool{
	"go.mod": true, "go.work": true, "package.json": true, "tsconfig.json": true, "deno.json": true,
	"cargo.toml": true, "pyproject.toml": true, "setup.py": true, "setup.cfg": true, "requirements.txt": true,
	"pom.xml": true, "build.gradle": true, "build.gradle.kts": true, "settings.gradle": true,
	"cmakelists.txt": true, "meson.build": true, "makefile": true, "gnumakefile": true, "justfile": true,
	"gemfile": true, "composer.json": true, "mix.exs": true, "package.swift": true, "pubspec.yaml": true,
	"docker-compose.yml": true, "docker-compose.yaml": true, "compose.yml": true, "compose.yaml": true,
	"changelog.md": true, "contributing.md": true,
}

// languages maps source file extensions to language names.
var languages = map[string]string{
	".go": "Go", ".py": "Python", ".js": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript",
	".jsx": "JavaScript", ".ts": "TypeScript", ".tsx": "TypeScript", ".rs": "Rust", ".java": "Java",
	".kt": "Kotlin", ".kts": "Kotlin", ".scala": "Scala", ".c": "C", ".h": "C", ".cc": "C++",
	".cpp": "C++", ".cxx": "C++", ".hpp": "C++", ".cs": "C#", ".fs": "F#", ".rb": "Ruby", ".php": "PHP",
	".swift": "Swift", ".m": "Objective-C", ".dart": "Dart", ".ex": "Elixir", ".exs": "Elixir",
	".erl": "Erlang", ".hs": "Haskell", ".ml": "OCaml", ".clj": "Clojure", ".lua": "Lua", ".pl": "Perl",
	".r": "R", ".jl": "Julia", ".zig": "Zig", ".nim": "Nim", ".sh": "Shell", ".bash": "Shell",
	".ps1": "PowerShell", ".sql": "SQL", ".vue": "Vue", ".svelte": "Svelte",
}

// summaryCache keeps directory summaries for summaryTTL.
type summaryCache struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[string]cachedInfo
	skip    func(string) bool // paths scans leave out (nil: none)
}

type cachedInfo struct {
	info dirInfo
	at   time.Time
}

func newSummaryCache(now func() time.Time) *summaryCache {
	return &summaryCache{now: now, entries: make(map[string]cachedInfo)}
}

// get returns the summary of dir, scanning it when none is fresh. Two
// callers missing at once both scan; the later result is kept.
func (c *summaryCache) get(ctx context.Context, dir string) (dirInfo, error) {
	c.mu.Lock()
	e, ok := c.entries[dir]
	now := c.now()
	c.mu.Unlock()
	if ok && now.Sub(e.at) < summaryTTL {
		return e.info, nil
	}
	info, err := scanDirSkip(ctx, dir, c.skip)
	if err != nil {
		return dirInfo{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCacheEntries {
		c.evict(now)
	}
	c.entries[dir] = cachedInfo{info: info, at: now}
	return info, nil
}

// evict drops expired entries, then the oldest while the cache is full.
func (c *summaryCache) evict(now time.Time) {
	for k, e := range c.entries {
		if now.Sub(e.at) >= summaryTTL {
			delete(c.entries, k)
		}
	}
	for len(c.entries) >= maxCacheEntries {
		oldest, at := "", time.Time{}
		for k, e := range c.entries {
			if oldest == "" || e.at.Before(at) {
				oldest, at = k, e.at
			}
		}
		delete(c.entries, oldest)
	}
}
