package effects

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// OSFS is the file system of the machine the harness runs on, for agents
// that run on the same machine: globs are expanded and links resolved
// there, and scripts run by their path are read from it, within bounds.
//
// It reads the content of a file only under ScriptRoots (the agent's
// working directory is added per action by Within) and never a file Deny
// refuses, so that naming a file as a script (bash /etc/shadow) cannot make
// the harness read, parse and show what the agent may not see. Listings and
// links are read anywhere (names, not contents), at most MaxEntries
// directory entries per glob.
type OSFS struct {
	// ScriptRoots are the directories whose files may be read as scripts
	// (with links resolved), besides the working directory Within adds.
	ScriptRoots []string
	// Deny, when set, refuses files that must never be read (the
	// harness's own: its data directory, token, configuration).
	Deny func(path string) bool
	// MaxEntries bounds the directory entries one Glob reads (default
	// 10,000): a pattern such as /*/*/*/* stops there.
	MaxEntries int
}

// DefaultScriptRoots are the directories an OSFS reads scripts from when
// none are configured: the temporary directories agents write scripts to.
var DefaultScriptRoots = []string{os.TempDir(), "/tmp", "/var/tmp"}

// Within returns a copy of fs that also reads scripts under dir (the
// agent's working directory of one action).
func (fs *OSFS) Within(dir string) *OSFS {
	c := *fs
	if dir != "" && filepath.IsAbs(dir) {
		c.ScriptRoots = append(append([]string(nil), fs.ScriptRoots...), dir)
	}
	return &c
}

// errNotReadable is returned for a file outside the script roots or
// refused by Deny.
var errNotReadable = errors.New("effects: the harness does not read this file")

// ReadFile implements FS.
func (fs *OSFS) ReadFile(path string, limit int) ([]byte, bool, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, false, err
	}
	if !fs.readable(real) || (fs.Deny != nil && (fs.Deny(path) || fs.Deny(real))) {
		return nil, false, errNotReadable
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, false, errNotReadable
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > limit {
		return data[:limit], true, nil
	}
	return data, false, nil
}

// readable reports whether real lies under a script root.
func (fs *OSFS) readable(real string) bool {
	for _, r := range fs.ScriptRoots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			continue
		}
		if real == rr || strings.HasPrefix(real, strings.TrimSuffix(rr, "/")+"/") {
			return true
		}
	}
	return false
}

// EvalSymlinks implements FS.
func (fs *OSFS) EvalSymlinks(path string) (string, error) { return filepath.EvalSymlinks(path) }

// Glob implements FS: the paths matching an absolute pattern, element by
// element, reading at most MaxEntries directory entries in all.
func (fs *OSFS) Glob(pattern string, limit int) ([]string, error) {
	if !filepath.IsAbs(pattern) {
		return nil, errors.New("effects: glob of a relative pattern")
	}
	budget := fs.MaxEntries
	if budget <= 0 {
		budget = 10000
	}
	elems := strings.Split(strings.TrimPrefix(filepath.Clean(pattern), "/"), "/")
	paths := []string{"/"}
	for _, el := range elems {
		var next []string
		for _, dir := range paths {
			if !hasMeta(el) {
				p := filepath.Join(dir, el)
				if _, err := os.Lstat(p); err == nil {
					next = append(next, p)
				}
				continue
			}
			names, err := readNames(dir, &budget)
			if err != nil && errors.Is(err, ErrGlobTooLarge) {
				return nil, err
			}
			for _, n := range names {
				if strings.HasPrefix(n, ".") && !strings.HasPrefix(el, ".") {
					continue // as the shell: * does not match dot files
				}
				if ok, _ := filepath.Match(el, n); ok {
					next = append(next, filepath.Join(dir, n))
				}
			}
		}
		if len(next) > limit*4 && len(next) > 1024 {
			return nil, ErrGlobTooLarge
		}
		paths = next
		if len(paths) == 0 {
			return nil, nil
		}
	}
	if len(paths) > limit {
		paths = paths[:limit]
	}
	return paths, nil
}

// ErrGlobTooLarge is returned by OSFS.Glob when a pattern would read more
// directory entries than its budget; the shell reader records a limit.
var ErrGlobTooLarge = errors.New("effects: glob reads too many directory entries")

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// readNames reads the names in dir, spending one unit of budget each.
func readNames(dir string, budget *int) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	for {
		ents, err := f.ReadDir(256)
		for _, e := range ents {
			if *budget <= 0 {
				return out, ErrGlobTooLarge
			}
			*budget--
			out = append(out, e.Name())
		}
		if err != nil || len(ents) == 0 {
			return out, nil
		}
	}
}
