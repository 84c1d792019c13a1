package policy

import (
	"path"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// pathMayMatch reports whether a path that is still a shell glob (a
// pattern the analysis could not expand: cat ~/.ssh/*, cat ~/.aws/cred*)
// may name a path that pattern matches: element by element, an element of
// the glob with no glob character must match the pattern's element, and
// one with glob characters must match some name the pattern's element
// matches (decided exactly when the pattern's element is a plain name or
// "*", and by their literal prefixes and suffixes when both are patterns,
// the glob's prefix not empty). As
// bash does without dotglob, a glob element that does not start with a dot
// matches no name that does. A path with no glob character is matched as
// path_match matches it; an empty path matches nothing.
func pathMayMatch(pattern, glob string) bool {
	if pattern == "" || glob == "" {
		return false
	}
	if !strings.ContainsAny(glob, "*?[") {
		return pathMatch(pattern, glob)
	}
	return mayMatchElems(strings.Split(pattern, "/"), strings.Split(glob, "/"), 0, false)
}

// mayMatchElems matches split pattern and glob elements; depth bounds
// the backtracking of "**" (patterns are short, but a rule's is config).
// afterAny marks elements that follow a "**" of the pattern: there a glob
// element made of wildcards only (*, ?*) is not taken for the name that
// follows (**/_netrc would make every "grep x *" a credential read; the
// directory the glob spells is what tells).
func mayMatchElems(pat, g []string, depth int, afterAny bool) bool {
	if depth > 64 {
		return true // fail closed
	}
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for len(rest) > 0 && rest[0] == "**" {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				return true
			}
			for i := 0; i <= len(g); i++ {
				if mayMatchElems(rest, g[i:], depth+1, true) {
					return true
				}
			}
			return false
		}
		if len(g) == 0 || !mayMatchElem(pat[0], g[0]) || afterAny && strings.Trim(g[0], "*?") == "" {
			return false
		}
		pat, g, afterAny = pat[1:], g[1:], false
	}
	return len(g) == 0
}

// mayMatchElem reports whether the glob element ge may name a file whose
// name the pattern element pe matches.
func mayMatchElem(pe, ge string) bool {
	gMeta := strings.ContainsAny(ge, "*?[")
	pMeta := strings.ContainsAny(pe, "*?[")
	switch {
	case !gMeta:
		ok, err := path.Match(pe, ge)
		return err != nil || ok
	case !pMeta:
		if strings.HasPrefix(pe, ".") && !strings.HasPrefix(ge, ".") {
			return false // * does not match a dot file
		}
		ok, err := path.Match(ge, pe)
		return err != nil || ok
	}
	// Both are patterns. A pattern element "*" takes any name; otherwise
	// the glob must spell a literal prefix that agrees with the pattern's,
	// and their literal suffixes must agree: ~/.ssh/id_* may name a key of
	// **/.ssh/id_*, but a bare * or *.pem in a directory (grep x *, cat
	// *.pem) is not taken for **/privkey*.pem, which would make every glob
	// a credential. (The credential_dirs, as DIR/*, cover ~/.ssh/*.)
	if pe == "*" {
		return !strings.HasPrefix(pe, ".")
	}
	gp, pp := literalPrefix(ge), literalPrefix(pe)
	if gp == "" || !strings.HasPrefix(gp, pp) && !strings.HasPrefix(pp, gp) {
		return false
	}
	if strings.HasPrefix(pp, ".") && !strings.HasPrefix(ge, ".") {
		return false
	}
	gs, ps := literalSuffix(ge), literalSuffix(pe)
	return strings.HasSuffix(gs, ps) || strings.HasSuffix(ps, gs)
}

func literalPrefix(s string) string {
	if i := strings.IndexAny(s, "*?[\\"); i >= 0 {
		return s[:i]
	}
	return s
}

func literalSuffix(s string) string {
	if i := strings.LastIndexAny(s, "*?]\\"); i >= 0 {
		return s[i+1:]
	}
	return s
}

// celPathMayMatch implements path_may_match(string, pattern or list of
// patterns).
func celPathMayMatch(p, patterns ref.Val) ref.Val {
	s := string(p.(types.String))
	if !strings.ContainsAny(s, "*?[") {
		return types.False // the other rules judge a plain path with path_match
	}
	ps, err := celStringList(patterns)
	if err != nil {
		return err
	}
	for _, pat := range ps {
		if pathMayMatch(pat, s) {
			return types.True
		}
	}
	return types.False
}
