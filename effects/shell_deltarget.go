package effects

import (
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A recursive delete of a path word not known statically is recorded as an
// Unknown; when the word leaves what it names unknown (rm -rf "$X", rm -rf
// "$(cat f)", xargs rm -rf fed by a command's output), that Unknown also
// carries the deleting program and Recursive, so that a rule can hold a
// recursive delete whose target nobody can see before it runs. A word whose
// last path element is literal text (rm -rf "$TMPDIR/x", "$OUT"/build) names
// something of that name, and a directory a command of the same script made
// with mktemp (T=$(mktemp -d); … rm -rf "$T") is a new one: neither is hidden.

// shIsMktemp reports whether the value w is the output of mktemp alone:
// T=$(mktemp -d), T="$(mktemp -d -t x.XXXX)", T=`mktemp`.
func shIsMktemp(w *syntax.Word) bool {
	parts := w.Parts
	if len(parts) == 1 {
		if dq, ok := parts[0].(*syntax.DblQuoted); ok {
			parts = dq.Parts
		}
	}
	if len(parts) != 1 {
		return false
	}
	cs, ok := parts[0].(*syntax.CmdSubst)
	if !ok || len(cs.Stmts) != 1 || cs.Stmts[0].Redirs != nil {
		return false
	}
	ce, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 || len(ce.Assigns) != 0 {
		return false
	}
	name, ok := plainWord(ce.Args[0])
	return ok && (name == "mktemp" || name == "/usr/bin/mktemp" || name == "/bin/mktemp")
}

// shDefaultRE matches a parameter expansion with a literal default
// (${BUILD_DIR:-./build}); the default stands for the word's value.
var shDefaultRE = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z_0-9]*:?[-=]([^${}` + "`" + `]*)\}`)

// shMktempSubstRE matches mktemp's output in a word: rm -rf "$(mktemp -d)".
var shMktempSubstRE = regexp.MustCompile("\\$\\(\\s*(?:/usr/bin/|/bin/)?mktemp\\b[^()`$;|&]*\\)|`\\s*(?:/usr/bin/|/bin/)?mktemp\\b[^()`$;|&]*`")

// shVarRefRE matches a reference to a variable by name: $T, ${T}.
var shVarRefRE = regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z_0-9]*)\}|([A-Za-z_][A-Za-z_0-9]*))`)

// hiddenTarget reports whether the path word w, not known statically,
// leaves what it names unknown: its last path element is not literal text
// once the script's mktemp directories and literal defaults are put in
// (rm -rf $X, "$(cat f)", "$D/", "$D"/*, xargs' input).
func (r *sh) hiddenTarget(w sword) bool {
	s := w.arg
	if strings.HasPrefix(s, "(") || s == "" {
		return true // (stdin): what xargs reads
	}
	s = shDefaultRE.ReplaceAllString(s, "$1")
	s = shMktempSubstRE.ReplaceAllString(s, "tmp")
	s = shVarRefRE.ReplaceAllStringFunc(s, func(m string) string {
		name := shVarRefRE.FindStringSubmatch(m)
		n := name[1] + name[2]
		if v, ok := r.vars[n]; ok && v.temp {
			return "tmp"
		}
		return m
	})
	s = shExpansionRE.ReplaceAllString(s, "\x00")
	s = strings.NewReplacer(`"`, "", `'`, "", "$", "\x00", "`", "\x00").Replace(s)
	s = strings.TrimRight(s, "/")
	i := strings.LastIndexByte(s, '/')
	last := s[i+1:]
	if strings.IndexByte(last, 0) >= 0 {
		return true
	}
	// every entry of a directory ("$D"/*, "$D/."): hidden when the directory is
	return strings.Trim(last, "*?.") == "" && strings.IndexByte(s[:max(i, 0)], 0) >= 0
}
