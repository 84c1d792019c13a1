package effects

import (
	"path"
	"strings"
)

// lostCwd is the working directory once a cd went to a directory not
// known statically (cd "$DIR", cd "$(…)", popd): relative paths stay
// relative, as with no working directory at all, but a read of one is
// also an Unknown (lostRead), since it may name any file. No real path
// holds a NUL byte.
const lostCwd = "\x00"

// cwd returns the working directory, "" when it is not known.
func (s *state) cwd() string {
	if s.ctx.Cwd == lostCwd {
		return ""
	}
	return s.ctx.Cwd
}

// lostRead records, after a read effect e of a relative path once the
// working directory is lost, that the path is not known statically.
func (s *state) lostRead(e *Effect) {
	if s.ctx.Cwd != lostCwd || e.Kind != Read || e.Path == "" || strings.HasPrefix(e.Path, "/") {
		return
	}
	s.unknown(false, "%s: read of a path not known statically: %s (relative to a working directory not known statically)", e.Program, e.Path)
}

// resolve makes a path as the agent would see it: "~" and "~/x" use the
// agent's home, a relative path is joined to the agent's working directory,
// and the result is cleaned ("/a/b/../c" is "/a/c"). When the home or the
// working directory is unknown the path keeps its "~" or stays relative:
// it is never resolved against the harness's own directories.
func (s *state) resolve(p string) string {
	if p == "" {
		return ""
	}
	a := s.mem
	if a == nil {
		return s.resolveNew(p)
	}
	// A handler often resolves the same word twice (the effect, then the
	// stream it feeds on): in a long script, the last two results are
	// kept.
	for i := range a.resolved {
		if r := &a.resolved[i]; r.in == p && r.cwd == s.ctx.Cwd && r.out != "" {
			return r.out
		}
	}
	out := s.resolveNew(p)
	a.resolved[a.resolvedNext] = resolvedPath{in: p, cwd: s.ctx.Cwd, out: out}
	a.resolvedNext = (a.resolvedNext + 1) % len(a.resolved)
	return out
}

// resolvedPath is one result of state.resolve.
type resolvedPath struct{ in, cwd, out string }

func (s *state) resolveNew(p string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if s.ctx.Home == "" {
			return path.Clean(p)
		}
		p = s.ctx.Home + p[1:]
	case strings.HasPrefix(p, "~"):
		// ~user: only the agent's own user name is known.
		name, rest, _ := strings.Cut(p[1:], "/")
		if s.ctx.User == "" || name != s.ctx.User || s.ctx.Home == "" {
			return path.Clean(p)
		}
		p = s.ctx.Home + "/" + rest
	}
	if !strings.HasPrefix(p, "/") {
		if s.ctx.Cwd == "" || s.ctx.Cwd == lostCwd {
			return path.Clean(p)
		}
		p = s.ctx.Cwd + "/" + p
	}
	return path.Clean(p)
}
