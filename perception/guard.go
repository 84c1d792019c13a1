package perception

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// noteHarness is the suggestion for a location target that is one of the
// harness's own files.
const noteHarness = "path is a file of the harness (its data, token, credentials, policy or configuration); it was not read"

// maxGuardEntries bounds the files of protected directories whose identity
// is taken per call (the data directory holds a handful).
const maxGuardEntries = 4096

// protectedPath is a harness file or directory: as configured (made
// absolute) and with its symbolic links resolved.
type protectedPath struct {
	given string
	real  string
}

// resolveExisting resolves the symbolic links of the longest existing
// prefix of the absolute path abs and joins the rest, so that a file not
// created yet (a socket, a token) is compared by its future real path.
func resolveExisting(abs string) string {
	rest := ""
	for p := abs; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// newProtected resolves the configured harness files; it refuses a root
// that lies inside one of them (nothing in it could ever be read).
func newProtected(paths []string, roots []root) ([]protectedPath, error) {
	var out []protectedPath
	seen := map[string]bool{}
	for _, f := range paths {
		if f == "" {
			continue
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, fmt.Errorf("perception: harness file %q: %w", f, err)
		}
		pp := protectedPath{given: abs, real: resolveExisting(abs)}
		if seen[pp.given+"\x00"+pp.real] {
			continue
		}
		seen[pp.given+"\x00"+pp.real] = true
		for _, r := range roots {
			if within(pp.real, r.dir) || within(pp.given, r.given) {
				return nil, fmt.Errorf("perception: workspace root %q lies inside the harness's own files (%s): it would expose them", r.given, f)
			}
		}
		out = append(out, pp)
	}
	return out, nil
}

// guarded reports whether the cleaned absolute path c is a harness file
// or lies beneath a harness directory, as configured or resolved.
func (p *Perceiver) guarded(c string) bool {
	for _, pp := range p.protected {
		if within(pp.real, c) || within(pp.given, c) {
			return true
		}
	}
	return false
}

// guard is the identity (device and inode) of every harness file at the
// time of one call: a file opened under another name (a hard link, or a
// path swapped for a link after it was checked) is refused when it is the
// same file as one of them.
type guard []os.FileInfo

// snapshot takes the identities of the harness files and of the files
// beneath harness directories (at most maxGuardEntries). When the bound is
// reached it reports false: the caller then reads nothing.
func (p *Perceiver) snapshot() (guard, bool) {
	var g guard
	for _, pp := range p.protected {
		fi, err := os.Stat(pp.real)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			g = append(g, fi)
			continue
		}
		err = filepath.WalkDir(pp.real, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if len(g) >= maxGuardEntries {
				return errGuardFull
			}
			if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
				g = append(g, fi)
			}
			return nil
		})
		if err != nil {
			return nil, false
		}
	}
	return g, true
}

var errGuardFull = errors.New("too many harness files")

// holds reports whether fi is the same file as a harness file.
func (g guard) holds(fi os.FileInfo) bool {
	for _, h := range g {
		if os.SameFile(h, fi) {
			return true
		}
	}
	return false
}
