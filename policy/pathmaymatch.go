package policy

import (
	"path"
	"reflect"
	"strings"
	"sync"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/ahp-go/ahp/effects"
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
	return mayMatchElems(splitPattern(pattern), strings.Split(glob, "/"), 0, false)
}

// splitPatterns caches the split elements of the patterns pathMayMatch
// meets (the packs' parameters: a few hundred strings at most).
var splitPatterns sync.Map

func splitPattern(p string) []string {
	if v, ok := splitPatterns.Load(p); ok {
		return v.([]string)
	}
	elems := strings.Split(p, "/")
	splitPatterns.Store(p, elems)
	return elems
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
	pl, err := cachedPatterns(patterns)
	if err != nil {
		return err
	}
	g := strings.Split(s, "/")
	gDot := false
	for _, e := range g {
		gDot = gDot || strings.HasPrefix(e, ".") || strings.HasPrefix(e, `\.`)
	}
	for i, elems := range pl.elems {
		if pl.dot[i] && !gDot {
			continue // a dot element no element of the glob can name
		}
		if mayMatchElems(elems, g, 0, false) {
			return types.True
		}
	}
	return types.False
}

// patternLists caches the Go form of the pattern lists argv_names_path is
// given (pack parameters, the same CEL value at every call): the split
// patterns and, for each, its longest literal element, which a path must
// contain to match it (a cheap test before matching element by element).
var patternLists sync.Map

type patternList struct {
	elems [][]string
	lits  []string
	// dot says a pattern has an element that starts with a dot (**/.ssh/
	// id_*): only a glob with an element that starts with a dot may name
	// what it matches, since bash's * and ? skip dot files (under dotglob
	// the effects carry the dotted spellings of a glob too).
	dot []bool
	// byLit lists the patterns by their longest literal element: a path
	// matches a pattern only if one of its elements is that literal.
	// always holds the patterns with no literal element.
	byLit  map[string][]int
	always []int
}

func cachedPatterns(v ref.Val) (*patternList, ref.Val) {
	cacheable := reflect.TypeOf(v).Kind() == reflect.Pointer
	if cacheable {
		if l, ok := patternLists.Load(v); ok {
			return l.(*patternList), nil
		}
	}
	ps, err := celStringList(v)
	if err != nil {
		return nil, err
	}
	pl := newPatternList(ps)
	if cacheable {
		patternLists.Store(v, pl)
	}
	return pl, nil
}

// newPatternList compiles patterns for names.
func newPatternList(ps []string) *patternList {
	pl := &patternList{}
	for _, p := range ps {
		if p == "" {
			continue
		}
		elems := strings.Split(p, "/")
		lit := ""
		for _, e := range elems {
			if !strings.ContainsAny(e, "*?[\\") && len(e) > len(lit) {
				lit = e
			}
		}
		if lit == "" {
			pl.always = append(pl.always, len(pl.elems))
		} else {
			if pl.byLit == nil {
				pl.byLit = map[string][]int{}
			}
			pl.byLit[lit] = append(pl.byLit[lit], len(pl.elems))
		}
		dot := false
		for _, e := range elems {
			dot = dot || strings.HasPrefix(e, ".") && e != "." && e != ".."
		}
		pl.elems = append(pl.elems, elems)
		pl.lits = append(pl.lits, lit)
		pl.dot = append(pl.dot, dot)
	}
	return pl
}

// argvNames reports whether a word of argv after the program names a
// path of one of lists (see patternList.names): what argv_names_path
// tests before it looks at what other runs start.
func argvNames(argv []string, lists []*patternList) bool {
	if len(argv) < 2 {
		return false
	}
	for _, a := range argv[1:] {
		if !strings.ContainsAny(a, "/.") {
			continue
		}
		for _, pl := range lists {
			if pl.names(a) {
				return true
			}
		}
	}
	return false
}

// celArgvNamesPath implements argv_names_path(effect, effects, patterns…):
// whether a word of the run effect's argv after the program (or a part of
// it between spaces or after "=": -o FILE, -filename=FILE) matches one of
// the patterns, the word not being the program another run of effects
// starts (what a wrapper runs: firejail /etc/init.d/x start). It reads the
// argv in Go: a rule over every run of a long script would otherwise build
// a CEL list of each argv.
func celArgvNamesPath(args ...ref.Val) ref.Val {
	ev, ok := args[0].(effectVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[0])
	}
	argv := ev.e.Argv
	if len(argv) < 2 {
		return types.False
	}
	for _, a := range argv[1:] {
		if !strings.ContainsAny(a, "/.") {
			continue
		}
		for _, pv := range args[2:] {
			pl, err := cachedPatterns(pv)
			if err != nil {
				return err
			}
			if pl.names(a) && !startsRun(args[1], a) {
				return types.True
			}
		}
	}
	return types.False
}

// names reports whether the argv word a, or a part of it between spaces
// or after "=", matches one of the patterns. A part is matched against
// the patterns whose longest literal element is one of its elements (or
// that have none): a path element equal to it is needed to match.
func (pl *patternList) names(a string) bool {
	for a != "" {
		var part string
		if i := strings.IndexAny(a, " ="); i >= 0 {
			part, a = a[:i], a[i+1:]
		} else {
			part, a = a, ""
		}
		if part == "" {
			continue
		}
		for _, i := range pl.always {
			if matchElemsIn(pl.elems[i], part, false) {
				return true
			}
		}
		for rest := part; ; {
			el, r, more := strings.Cut(rest, "/")
			for _, i := range pl.byLit[el] {
				if matchElemsIn(pl.elems[i], part, false) {
					return true
				}
			}
			if !more {
				break
			}
			rest = r
		}
	}
	return false
}

// startsRun reports whether a run effect of the list starts program a.
func startsRun(list ref.Val, a string) bool {
	l, ok := list.(traits.Lister)
	if !ok {
		return false
	}
	n, _ := l.Size().(types.Int)
	for i := types.Int(0); i < n; i++ {
		if r, ok := l.Get(i).(effectVal); ok && r.e.Kind == effects.Run && len(r.e.Argv) > 0 && r.e.Argv[0] == a {
			return true
		}
	}
	return false
}
