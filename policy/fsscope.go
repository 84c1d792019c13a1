package policy

import (
	"path"
	"strings"
)

// pathWithin reports whether p lies inside one of roots (or is one). Paths
// are compared lexically after cleaning: symbolic links on the agent's
// machine cannot be seen from here. A relative path is taken relative to
// the first root (the workspace). A home path (~/x) is inside only a root
// that is itself written with ~; a home path with ".." is never inside.
func pathWithin(p string, roots []string) bool {
	p = strings.TrimSpace(p)
	if p == "" || len(roots) == 0 {
		return false
	}
	home := p == "~" || strings.HasPrefix(p, "~/")
	switch {
	case home:
		if hasDotDot(p) {
			return false
		}
		p = "~" + path.Clean("/"+strings.TrimPrefix(p, "~"))
		p = strings.TrimSuffix(p, "/")
	case !strings.HasPrefix(p, "/"):
		p = path.Join(cleanRoot(roots[0]), p)
	default:
		p = path.Clean(p)
	}
	for _, r := range roots {
		r = cleanRoot(r)
		if r == "/" && !home {
			return true
		}
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

func cleanRoot(r string) string {
	r = strings.TrimSpace(r)
	if r == "~" || strings.HasPrefix(r, "~/") {
		return strings.TrimSuffix("~"+path.Clean("/"+strings.TrimPrefix(r, "~")), "/")
	}
	return path.Clean(r)
}

// hasDotDot reports whether a name of the slash-separated path p is "..".
func hasDotDot(p string) bool {
	for p != "" {
		seg := p
		if i := strings.IndexByte(p, '/'); i >= 0 {
			seg, p = p[:i], p[i+1:]
		} else {
			p = ""
		}
		if seg == ".." {
			return true
		}
	}
	return false
}
