package perception

import (
	"os"
	"path/filepath"
	"strings"
)

const maxPathLen = 4096 // longest location path or workspace accepted

// Suggestions about a location target that gave no snippet.
const (
	noteOutside  = "path is outside the workspace"
	noteNotFound = "path not found in the workspace"
	noteHidden   = "path is hidden or may hold secrets; it was not read"
	noteNoRoots  = "no workspace roots are configured; file context is unavailable"
)

// place is a file or directory inside a root.
type place struct {
	r     root
	abs   string // absolute, symbolic links resolved
	rel   string // slash-separated, relative to r.dir ("." for the root)
	isDir bool
}

// within reports whether p is base or lies beneath it, comparing cleaned
// paths only (no file system access).
func within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// lexicalRoot reports whether the cleaned absolute path p names something
// under a root, as configured or resolved.
func (p *Perceiver) lexicalRoot(c string) bool {
	for _, r := range p.roots {
		if within(r.dir, c) || within(r.given, c) {
			return true
		}
	}
	return false
}

// containingRoot returns the root whose resolved directory holds the
// resolved path c.
func (p *Perceiver) containingRoot(c string) (root, bool) {
	for _, r := range p.roots {
		if within(r.dir, c) {
			return r, true
		}
	}
	return root{}, false
}

// resolve maps an absolute path to a place inside a root. Paths that are
// not under a root are refused before the file system is touched; the rest
// have their symbolic links resolved and must still lie inside a root.
// The string is a suggestion when there is no place.
func (p *Perceiver) resolve(c string) (*place, string) {
	if !p.lexicalRoot(c) {
		return nil, noteOutside
	}
	if p.guarded(c) {
		return nil, noteHarness
	}
	resolved, err := filepath.EvalSymlinks(c)
	if err != nil {
		return nil, noteNotFound
	}
	if p.guarded(resolved) {
		return nil, noteHarness
	}
	r, ok := p.containingRoot(resolved)
	if !ok {
		return nil, noteOutside
	}
	fi, err := os.Stat(resolved)
	if err != nil || !(fi.IsDir() || fi.Mode().IsRegular()) {
		return nil, noteNotFound
	}
	rel, err := filepath.Rel(r.dir, resolved)
	if err != nil {
		return nil, noteOutside
	}
	return &place{r: r, abs: resolved, rel: filepath.ToSlash(rel), isDir: fi.IsDir()}, ""
}

// workspace returns the agent's working directory when it is an absolute
// path to a directory inside a root, else nil.
func (p *Perceiver) workspace(ws string) *place {
	if ws == "" || len(ws) > maxPathLen || strings.ContainsRune(ws, 0) || !filepath.IsAbs(ws) {
		return nil
	}
	pl, _ := p.resolve(filepath.Clean(ws))
	if pl == nil || !pl.isDir {
		return nil
	}
	return pl
}

// location resolves the path of a location target. A relative path is
// tried against the agent's workspace (when inside a root), then each root.
// The string is a suggestion when no candidate is usable; "outside" wins
// over "not found" so that probing outside the roots learns nothing.
func (p *Perceiver) location(raw string, ws *place) (*place, string) {
	if len(raw) > maxPathLen || strings.ContainsRune(raw, 0) {
		return nil, noteOutside
	}
	var cands []string
	if filepath.IsAbs(raw) {
		cands = []string{filepath.Clean(raw)}
	} else {
		if ws != nil {
			cands = append(cands, filepath.Join(ws.abs, raw))
		}
		for _, r := range p.roots {
			cands = append(cands, filepath.Join(r.dir, raw))
		}
	}
	problem := ""
	for _, c := range cands {
		pl, note := p.resolve(c)
		if pl != nil {
			if hiddenOrSecret(pl.rel) {
				return nil, noteHidden
			}
			return pl, ""
		}
		if note == noteHarness {
			return nil, note
		}
		if problem != noteOutside {
			problem = note
		}
	}
	return nil, problem
}

// skipDirName reports directories a search never enters.
func skipDirName(name string) bool {
	return strings.HasPrefix(name, ".") || name == "vendor" || name == "node_modules"
}

// secretExts are extensions of files that usually hold keys.
var secretExts = map[string]bool{".pem": true, ".key": true, ".p12": true, ".pfx": true, ".jks": true, ".keystore": true}

// skipFileName reports files a search never reads: hidden files (.env,
// .npmrc, ...) and files that usually hold private keys.
func skipFileName(name string) bool {
	if strings.HasPrefix(name, ".") || secretExts[strings.ToLower(filepath.Ext(name))] {
		return true
	}
	for _, k := range []string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"} {
		if strings.HasPrefix(name, k) {
			return true
		}
	}
	return false
}

// hiddenOrSecret reports a slash-separated relative path with a hidden
// component or a file name skipFileName refuses.
func hiddenOrSecret(rel string) bool {
	if rel == "." {
		return false
	}
	parts := strings.Split(rel, "/")
	for _, c := range parts[:len(parts)-1] {
		if strings.HasPrefix(c, ".") {
			return true
		}
	}
	return skipFileName(parts[len(parts)-1])
}

// skipRel reports a resolved relative path a search must not read: hidden,
// secret-like, or under vendor or node_modules.
func skipRel(rel string) bool {
	if hiddenOrSecret(rel) {
		return true
	}
	for _, c := range strings.Split(rel, "/") {
		if c == "vendor" || c == "node_modules" {
			return true
		}
	}
	return false
}
