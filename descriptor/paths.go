package descriptor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Size limits. A descriptor is configuration written by people: anything
// larger than these is refused rather than read.
const (
	// MaxDescriptorSize is the largest descriptor accepted, in bytes.
	MaxDescriptorSize = 4 << 20
	// MaxInstructionFileSize is the largest instruction file (or prompt map
	// entry) accepted, in bytes.
	MaxInstructionFileSize = 1 << 20
	// MaxInstructionsTotal bounds the instruction text a descriptor may
	// materialize in all, counting a file again each time it is used.
	MaxInstructionsTotal = 16 << 20
)

// checkRelPath refuses instruction paths that are not plain local relative
// paths: empty paths, NUL bytes, URLs, absolute or drive paths, backslashes
// and glob characters.
func checkRelPath(raw string) error {
	switch {
	case strings.TrimSpace(raw) == "":
		return errors.New("path is empty")
	case strings.ContainsRune(raw, 0):
		return errors.New("path contains a NUL byte")
	case strings.Contains(raw, "://"):
		return fmt.Errorf("%q is a URL; only local files are supported", raw)
	case strings.HasPrefix(raw, "/") || filepath.IsAbs(raw) || hasDrive(raw):
		return fmt.Errorf("%q is absolute; paths are relative to the descriptor file", raw)
	case strings.ContainsRune(raw, '\\'):
		return fmt.Errorf("%q contains a backslash; use forward slashes", raw)
	case strings.ContainsAny(raw, "*?[]{}"):
		return fmt.Errorf("%q contains glob characters; globs are not supported", raw)
	}
	return nil
}

// hasDrive reports whether p starts with a Windows drive letter ("C:").
func hasDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' &&
		(('a' <= p[0] && p[0] <= 'z') || ('A' <= p[0] && p[0] <= 'Z'))
}

// pathScope resolves instruction paths written in a descriptor to names
// relative to the root directory, and reads them.
//
// In directory mode (root != "") baseDir and root are absolute, cleaned OS
// paths. In virtual mode (root == "", used by Parse without a base
// directory) paths are resolved lexically against an anonymous directory
// that serves as the root, and only a prompt map can supply contents.
type pathScope struct {
	root    string            // absolute root directory, or "" in virtual mode
	baseRel string            // descriptor directory relative to root, slash form ("." for root)
	prompts map[string]string // resolved name -> content; nil means read files
	fsRoot  *os.Root          // opened lazily in directory mode
	cache   map[string]string // resolved name -> content already read
	total   int               // bytes materialized so far
}

// resolve maps a path written in the descriptor to a slash-separated name
// relative to the root, refusing any path that leaves the root lexically.
// Symbolic links are checked when the file is opened (see read).
func (s *pathScope) resolve(raw string) (string, error) {
	if err := checkRelPath(raw); err != nil {
		return "", err
	}
	name := path.Clean(path.Join(s.baseRel, raw))
	if name == ".." || strings.HasPrefix(name, "../") {
		return "", fmt.Errorf("%q escapes the root directory", raw)
	}
	if name == "." {
		return "", fmt.Errorf("%q names the root directory, not a file", raw)
	}
	return name, nil
}

// resolvePromptKey maps a prompt map key to a name relative to the root.
// Unlike descriptor paths, keys may be absolute in directory mode, as long
// as they lie inside the root.
func (s *pathScope) resolvePromptKey(key string) (string, error) {
	if s.root != "" && filepath.IsAbs(key) {
		rel, err := filepath.Rel(s.root, filepath.Clean(key))
		if err != nil {
			return "", fmt.Errorf("%q: %w", key, err)
		}
		rel = filepath.ToSlash(rel)
		if rel == ".." || strings.HasPrefix(rel, "../") || rel == "." {
			return "", fmt.Errorf("%q is outside the root directory %s", key, s.root)
		}
		return rel, nil
	}
	return s.resolve(key)
}

// read returns the content of the instruction file written as raw in the
// descriptor, from the prompt map when there is one and otherwise from disk
// through an os.Root, which refuses ".." components and symbolic links that
// lead outside the root.
func (s *pathScope) read(raw string) (string, error) {
	name, err := s.resolve(raw)
	if err != nil {
		return "", err
	}
	content, ok := s.cache[name]
	if !ok {
		if s.prompts != nil {
			content, ok = s.prompts[name]
			if !ok {
				return "", fmt.Errorf("%q (resolved to %q) is not in the prompt map", raw, name)
			}
			if len(content) > MaxInstructionFileSize {
				return "", fmt.Errorf("prompt map entry %q is larger than %d bytes", name, MaxInstructionFileSize)
			}
		} else {
			content, err = s.readFile(raw, name)
			if err != nil {
				return "", err
			}
		}
		if !utf8.ValidString(content) {
			return "", fmt.Errorf("%q is not valid UTF-8 text", raw)
		}
		if s.cache == nil {
			s.cache = map[string]string{}
		}
		s.cache[name] = content
	}
	if err := s.count(len(content)); err != nil {
		return "", err
	}
	return content, nil
}

// count adds n bytes of materialized instructions to the running total.
func (s *pathScope) count(n int) error {
	s.total += n
	if s.total > MaxInstructionsTotal {
		return fmt.Errorf("the descriptor materializes more than %d bytes of instructions", MaxInstructionsTotal)
	}
	return nil
}

// readFile reads name (relative to the root) from disk.
func (s *pathScope) readFile(raw, name string) (string, error) {
	if s.root == "" {
		return "", fmt.Errorf("cannot read %q: the descriptor has no base directory (load it from a file, pass a base directory, or supply a prompt map)", raw)
	}
	if s.fsRoot == nil {
		r, err := os.OpenRoot(s.root)
		if err != nil {
			return "", fmt.Errorf("opening root directory: %w", err)
		}
		s.fsRoot = r
	}
	data, err := readLimited(s.fsRoot, filepath.FromSlash(name), MaxInstructionFileSize)
	if err != nil {
		// os.Root's errors name its own operations (statat, openat):
		// say what is wrong with the file, and where it was looked for.
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("instruction file %q: not found in %s: %w", raw, s.root, fs.ErrNotExist)
		}
		return "", fmt.Errorf("instruction file %q: %w", raw, err)
	}
	return string(data), nil
}

// close releases the opened root directory, if any.
func (s *pathScope) close() {
	if s.fsRoot != nil {
		s.fsRoot.Close()
		s.fsRoot = nil
	}
}

// readLimited reads the regular file name inside root, refusing files
// larger than limit. Paths that leave root, through ".." or a symbolic link,
// fail with an error that says the path escapes the root.
func readLimited(root *os.Root, name string, limit int64) ([]byte, error) {
	fi, err := root.Stat(name)
	if err != nil {
		return nil, describeRootErr(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, describeRootErr(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}

// describeRootErr rewords os.Root's refusal of escaping paths (whose error
// value is not exported) so that the message names the rule.
func describeRootErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes") {
		return fmt.Errorf("resolves outside the root directory (through \"..\" or a symbolic link): %w", err)
	}
	return err
}
