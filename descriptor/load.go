package descriptor

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Loader reads descriptors. The zero Loader reads instruction files from
// disk and confines them to the descriptor's own directory.
type Loader struct {
	// RootDir is the directory that no instruction file may leave, through
	// "..", an absolute path or a symbolic link. It defaults to the
	// directory of the descriptor (Load) or the base directory (Parse). The
	// descriptor itself must lie inside it.
	RootDir string

	// Prompts, when not nil, supplies instruction file contents instead of
	// the filesystem, which is then never read for instructions. Keys are
	// paths as a descriptor would write them, resolved the same way
	// (relative to the descriptor's directory, "./a.md" and "a.md" being
	// the same file); absolute keys are accepted when they lie inside the
	// root. It suits callers that bundle or load prompts themselves.
	Prompts map[string]string
}

// Load reads, materializes and checks the descriptor file at path with the
// zero Loader. See Loader.Load.
func Load(path string) (*Descriptor, error) {
	var l Loader
	return l.Load(path)
}

// Parse materializes and checks descriptor data with the zero Loader. See
// Loader.Parse.
func Parse(data []byte, format Format, baseDir string) (*Descriptor, error) {
	var l Loader
	return l.Parse(data, format, baseDir)
}

// Load reads the descriptor file at path (YAML or JSON, chosen by
// FormatForPath), resolves its instruction files relative to the file's
// directory and checks it. The descriptor is read through the root
// directory like instruction files, so a descriptor reached through a
// symbolic link that leaves the root is refused too.
//
// Any problems are returned together in an *Error.
func (l *Loader) Load(path string) (*Descriptor, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	baseDir := filepath.Dir(abs)
	root, baseRel, err := l.root(baseDir)
	if err != nil {
		return nil, &Error{Source: path, Problems: []*Problem{{Err: err}}}
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	name := filepath.Join(filepath.FromSlash(baseRel), filepath.Base(abs))
	data, err := readLimited(r, name, MaxDescriptorSize)
	r.Close()
	if err != nil {
		return nil, fmt.Errorf("reading descriptor %s: %w", path, err)
	}
	scope := &pathScope{root: root, baseRel: baseRel}
	return l.parse(data, FormatForPath(path), scope, path)
}

// Parse materializes and checks descriptor data. Instruction paths are
// resolved relative to baseDir. When baseDir is empty, paths are resolved
// against an anonymous directory: only Prompts can supply their contents,
// and ".." still may not climb out of it.
//
// Any problems are returned together in an *Error.
func (l *Loader) Parse(data []byte, format Format, baseDir string) (*Descriptor, error) {
	if len(data) > MaxDescriptorSize {
		return nil, fmt.Errorf("descriptor is larger than %d bytes", MaxDescriptorSize)
	}
	scope := &pathScope{baseRel: "."}
	if baseDir != "" {
		abs, err := filepath.Abs(baseDir)
		if err != nil {
			return nil, err
		}
		root, baseRel, err := l.root(abs)
		if err != nil {
			return nil, &Error{Problems: []*Problem{{Err: err}}}
		}
		scope.root, scope.baseRel = root, baseRel
	} else if l.RootDir != "" {
		return nil, errors.New("descriptor: RootDir needs a base directory")
	}
	return l.parse(data, format, scope, "")
}

// root returns the absolute root directory and baseDir relative to it.
func (l *Loader) root(baseDir string) (root, baseRel string, err error) {
	root = baseDir
	if l.RootDir != "" {
		if root, err = filepath.Abs(l.RootDir); err != nil {
			return "", "", err
		}
	}
	rel, err := filepath.Rel(root, baseDir)
	if err != nil {
		return "", "", fmt.Errorf("descriptor directory %s is not inside the root directory %s", baseDir, root)
	}
	rel = filepath.ToSlash(rel)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", "", fmt.Errorf("descriptor directory %s is not inside the root directory %s", baseDir, root)
	}
	return root, rel, nil
}

// parse decodes data and builds the descriptor.
func (l *Loader) parse(data []byte, format Format, scope *pathScope, source string) (*Descriptor, error) {
	defer scope.close()
	if len(data) > MaxDescriptorSize {
		return nil, &Error{Source: source, Problems: []*Problem{{Err: fmt.Errorf("larger than %d bytes", MaxDescriptorSize)}}}
	}
	tree, err := decodeTree(data, format)
	if err != nil {
		return nil, &Error{Source: source, Problems: []*Problem{{Err: err}}}
	}
	if l.Prompts != nil {
		scope.prompts = make(map[string]string, len(l.Prompts))
		ps := &problems{}
		for _, k := range slices.Sorted(maps.Keys(l.Prompts)) {
			v := l.Prompts[k]
			name, err := scope.resolvePromptKey(k)
			if err != nil {
				ps.addErr(fmt.Sprintf("prompt map key %q", k), err)
				continue
			}
			if prev, dup := scope.prompts[name]; dup && prev != v {
				ps.add(fmt.Sprintf("prompt map key %q", k), "names the same file as another key (%q) with different content", name)
				continue
			}
			scope.prompts[name] = v
		}
		if err := ps.err(source); err != nil {
			return nil, err
		}
	}
	return build(tree, scope, source)
}
