package perception

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

const (
	sniffLen       = 8 << 10 // bytes checked for a NUL to detect binary files
	entriesPerFile = 20      // directory entries visited per file a search may read
)

// hit is one scored file.
type hit struct {
	path  string // slash-separated, relative to its root
	score float32
	ex    excerpt
}

// searcher walks roots and keeps the best hits. One is used per call.
type searcher struct {
	probes       []probe
	maxRaw       float64
	limit        int // hits kept
	maxFiles     int
	maxEntries   int
	maxFileBytes int64
	maxBytes     int64
	onFile       func()
	guarded      func(string) bool // the harness's own paths
	guard        guard             // identities of the harness's files

	seen    map[string]bool // resolved paths already considered (and the location file)
	files   int             // files opened
	entries int             // directory entries visited
	bytes   int64           // bytes read
	stopped bool            // a bound ended the walk early
	hits    []hit
}

func (p *Perceiver) newSearcher(probes []probe, limit int) *searcher {
	s := &searcher{
		probes:       probes,
		limit:        limit,
		maxFiles:     p.maxFiles,
		maxEntries:   p.maxFiles * entriesPerFile,
		maxFileBytes: p.maxFileBytes,
		maxBytes:     p.maxBytes,
		onFile:       p.onFile,
		guarded:      p.guarded,
		seen:         make(map[string]bool),
	}
	for _, pr := range probes {
		top := pathPoints
		if !pr.pathOnly() {
			top += contentPoints
		}
		s.maxRaw += float64(pr.weight()) * top
	}
	return s
}

// walk searches the directory dir of root r. It returns ctx's error when
// ctx ends; other file system errors only skip what they concern.
func (s *searcher) walk(ctx context.Context, r root, dir string) error {
	osr, err := os.OpenRoot(r.dir)
	if err != nil {
		return nil
	}
	defer osr.Close()
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if d != nil && d.IsDir() && p != dir {
				return fs.SkipDir
			}
			return nil
		}
		if s.entries++; s.entries > s.maxEntries || s.stopped {
			s.stopped = true
			return fs.SkipAll
		}
		if d.IsDir() {
			if p != dir && (skipDirName(d.Name()) || s.guarded(p)) {
				return fs.SkipDir
			}
			return nil
		}
		if skipFileName(d.Name()) {
			return nil
		}
		if s.files >= s.maxFiles || s.bytes >= s.maxBytes {
			s.stopped = true
			return fs.SkipAll
		}
		s.consider(osr, r, p, d.Type()&fs.ModeSymlink != 0)
		return nil
	})
	if ctxErr(err) {
		return err
	}
	return nil
}

// consider resolves, reads and scores one file found by the walk. The walk
// starts in a resolved directory and does not follow links, so only a link
// needs resolving; whatever is found, the file is then opened through the
// root, which refuses any path leaving it even if the tree changes meanwhile.
func (s *searcher) consider(osr *os.Root, r root, p string, link bool) {
	resolved := p
	if link {
		var err error
		if resolved, err = filepath.EvalSymlinks(p); err != nil {
			return
		}
	}
	if !within(r.dir, resolved) || s.seen[resolved] || s.guarded(p) || s.guarded(resolved) {
		return
	}
	s.seen[resolved] = true
	rel, err := filepath.Rel(r.dir, resolved)
	if err != nil {
		return
	}
	rel = filepath.ToSlash(rel)
	if skipRel(rel) {
		return
	}
	data, ok := s.read(osr, rel, s.maxFileBytes)
	if !ok {
		return
	}
	if h, ok := s.score(rel, data); ok {
		s.keep(h)
	}
}

// read opens rel through the root (which refuses any escape), and returns
// the file's bytes when it is a non-empty regular text file of at most
// limit bytes that fits the call's byte budget.
func (s *searcher) read(osr *os.Root, rel string, limit int64) ([]byte, bool) {
	f, err := osr.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 || fi.Size() > limit || s.guard.holds(fi) {
		return nil, false
	}
	if s.bytes+fi.Size() > s.maxBytes {
		s.stopped = true
		return nil, false
	}
	s.files++
	if s.onFile != nil {
		s.onFile()
	}
	buf := make([]byte, fi.Size())
	n, err := io.ReadFull(f, buf[:min(len(buf), sniffLen)])
	s.bytes += int64(n)
	if bytes.IndexByte(buf[:n], 0) >= 0 {
		return nil, false
	}
	if err == nil && n < len(buf) {
		var m int
		m, _ = io.ReadFull(f, buf[n:])
		s.bytes += int64(m)
		n += m
	}
	return buf[:n], n > 0
}

// readHead returns the first sniffLen bytes of a file named by a location
// target, whatever its size; ok is false for binary, empty or unreadable
// files and when the call's byte budget is spent.
func (s *searcher) readHead(osr *os.Root, rel string) ([]byte, bool) {
	f, err := osr.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || s.bytes+sniffLen > s.maxBytes || s.guard.holds(fi) {
		return nil, false
	}
	s.files++
	buf := make([]byte, min(fi.Size(), sniffLen))
	n, _ := io.ReadFull(f, buf)
	s.bytes += int64(n)
	if n == 0 || bytes.IndexByte(buf[:n], 0) >= 0 {
		return nil, false
	}
	return buf[:n], true
}

// score rates a file: per probe, pathPoints for a path match and up to
// contentPoints for content matches, weighted and divided by the most a
// file could earn. The excerpt is around the first match of the heaviest
// probe that matched content, or the file's head.
func (s *searcher) score(rel string, data []byte) (hit, bool) {
	relLower := asciiLower(rel)
	var lower []byte
	raw, first, firstW := 0.0, -1, 0
	for _, pr := range s.probes {
		pts := 0.0
		if pr.pathHit(rel, relLower) {
			pts += pathPoints
		}
		if !pr.pathOnly() {
			if lower == nil {
				lower = bytes.Clone(data)
				lowerBytes(lower)
			}
			if f, n := pr.contentHits(data, lower); n > 0 {
				pts += contentPoints * (0.5 + 0.5*float64(n)/maxCount)
				if w := pr.weight(); w > firstW || (w == firstW && f < first) {
					first, firstW = f, w
				}
			}
		}
		raw += float64(pr.weight()) * pts
	}
	if raw == 0 || s.maxRaw == 0 {
		return hit{}, false
	}
	h := hit{path: rel, score: float32(min(1, raw/s.maxRaw))}
	if first >= 0 {
		h.ex = window(data, first)
	} else {
		h.ex = head(data, 2*contextLines+1)
	}
	return h, h.ex.text != ""
}

// keep adds a hit, trimming the list to the best limit now and then.
func (s *searcher) keep(h hit) {
	s.hits = append(s.hits, h)
	if len(s.hits) >= 2*s.limit+8 {
		s.trim()
	}
}

// trim sorts the hits best first (ties by path) and keeps the best limit.
func (s *searcher) trim() {
	slices.SortFunc(s.hits, func(a, b hit) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.path, b.path)
	})
	if len(s.hits) > s.limit {
		s.hits = s.hits[:s.limit]
	}
}
