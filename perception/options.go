package perception

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

const (
	defaultMaxFiles     = 2000
	defaultMaxSnippets  = 5
	defaultMaxFileBytes = 1 << 20
	// maxResultsCap bounds the snippets of one answer whatever is asked.
	maxResultsCap = 50
	// maxBytesPerCall bounds the bytes one Perceive call reads from files.
	maxBytesPerCall = 16 << 20
	// summaryTTL is how long a directory summary is reused.
	summaryTTL = 30 * time.Second
)

// Options configures a Perceiver. Zero or negative limits take their defaults.
type Options struct {
	// WorkspaceRoots are the directories snippets may come from, absolute or
	// relative to the process's working directory. With none, answers hold
	// no file snippets and no project summary.
	WorkspaceRoots []string
	// Facts are injected into every allowed answer; when there are more
	// than ten, the ten sharing most terms with the request are chosen.
	Facts []protocol.Fact
	// ProjectName names the project in the summary; "" uses the base name
	// of the first root.
	ProjectName string
	// Language is the project's language in the summary; "" guesses it
	// from the most common source file extension.
	Language string
	// MaxFiles bounds the files one search reads (default 2000).
	MaxFiles int
	// MaxSnippets is the number of snippets returned when the agent sets no
	// max_results (default 5, at most 50).
	MaxSnippets int
	// MaxFileBytes skips larger files (default 1 MiB).
	MaxFileBytes int64
	// Protected are the harness's own files and directories (its data
	// directory, admin token, credentials, policy and configuration files,
	// TLS keys, sockets), absolute or relative to the process's working
	// directory. Whatever the roots, nothing at or beneath them is read,
	// searched or listed, compared by real path (symbolic links and ".."
	// resolved) and, for files opened, by identity (device and inode: a
	// hard link or a name swapped for a link is refused too). A root
	// inside one of them is an error; a root that contains them is
	// served without them.
	Protected []string
}

// root is one workspace root.
type root struct {
	dir   string // absolute, symbolic links resolved
	given string // absolute as configured, before resolving links
}

// Perceiver answers context_perception events. It is safe for concurrent use.
type Perceiver struct {
	roots        []root
	protected    []protectedPath
	facts        []protocol.Fact
	projectName  string
	language     string
	maxFiles     int
	maxSnippets  int
	maxFileBytes int64
	maxBytes     int64 // bytes one call may read (maxBytesPerCall; lowered by tests)
	cache        *summaryCache

	// onFile, when set (by tests), is called each time a search opens a file.
	onFile func()
}

// New checks the options and returns a Perceiver. Every root must exist and
// be a directory; roots are made absolute and their symbolic links resolved.
func New(opts Options) (*Perceiver, error) {
	p := &Perceiver{
		facts:        append([]protocol.Fact(nil), opts.Facts...),
		projectName:  opts.ProjectName,
		language:     opts.Language,
		maxFiles:     opts.MaxFiles,
		maxSnippets:  opts.MaxSnippets,
		maxFileBytes: opts.MaxFileBytes,
		maxBytes:     maxBytesPerCall,
		cache:        newSummaryCache(time.Now),
	}
	if p.maxFiles <= 0 {
		p.maxFiles = defaultMaxFiles
	}
	if p.maxSnippets <= 0 {
		p.maxSnippets = defaultMaxSnippets
	}
	p.maxSnippets = min(p.maxSnippets, maxResultsCap)
	if p.maxFileBytes <= 0 {
		p.maxFileBytes = defaultMaxFileBytes
	}
	seen := make(map[string]bool)
	for _, r := range opts.WorkspaceRoots {
		rt, err := checkRoot(r)
		if err != nil {
			return nil, err
		}
		if !seen[rt.dir] {
			seen[rt.dir] = true
			p.roots = append(p.roots, rt)
		}
	}
	var err error
	if p.protected, err = newProtected(opts.Protected, p.roots); err != nil {
		return nil, err
	}
	p.cache.skip = p.guarded
	if p.projectName == "" && len(p.roots) > 0 {
		p.projectName = filepath.Base(p.roots[0].given)
	}
	return p, nil
}

// checkRoot resolves one configured root and checks it is a directory.
func checkRoot(r string) (root, error) {
	if r == "" {
		return root{}, errors.New("perception: empty workspace root")
	}
	given, err := filepath.Abs(r)
	if err != nil {
		return root{}, fmt.Errorf("perception: workspace root %q: %w", r, err)
	}
	dir, err := filepath.EvalSymlinks(given)
	if err != nil {
		return root{}, fmt.Errorf("perception: workspace root %q: %w", r, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return root{}, fmt.Errorf("perception: workspace root %q: %w", r, err)
	}
	if !fi.IsDir() {
		return root{}, fmt.Errorf("perception: workspace root %q is not a directory", r)
	}
	return root{dir: dir, given: given}, nil
}
