package policy

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// A prefilter is a set of literals of which every match of a pattern must
// contain at least one. Checking them (a few strings.Index calls) is much
// cheaper than running the regular expression, and most texts a rule sees
// contain none of them: "rm" for a pattern about rm -rf, "/dev/" for one
// about raw disks. A nil prefilter knows nothing and lets every text through.
type prefilter []literal

// literal is one required string; fold means ASCII case is ignored (the
// text is lower case).
type literal struct {
	text string
	fold bool
}

// newPrefilter derives the prefilter of an RE2 pattern.
func newPrefilter(pattern string) prefilter {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	return required(re.Simplify())
}

// required returns literals one of which every match of re contains, or nil.
func required(re *syntax.Regexp) prefilter {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		s := string(re.Rune)
		if s == "" || fold && !isASCII(s) {
			return nil
		}
		if fold {
			s = strings.ToLower(s)
		}
		return prefilter{{text: s, fold: fold}}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		// Any part's requirement holds for the whole; keep the most selective.
		var best prefilter
		for _, sub := range re.Sub {
			if p := required(sub); p != nil && (best == nil || p.shortest() > best.shortest()) {
				best = p
			}
		}
		return best
	case syntax.OpAlternate:
		// Every branch must require something; the whole requires any of it.
		var all prefilter
		for _, sub := range re.Sub {
			p := required(sub)
			if p == nil {
				return nil
			}
			all = append(all, p...)
		}
		return all
	}
	return nil
}

// shortest is the length of the shortest literal: a rough measure of how
// selective the prefilter is.
func (p prefilter) shortest() int {
	n := -1
	for _, l := range p {
		if n < 0 || len(l.text) < n {
			n = len(l.text)
		}
	}
	return n
}

// mayMatch reports whether s contains one of the literals. Case-insensitive
// literals are compared on ASCII only; a text with other bytes is let
// through, because Unicode folding (K and the Kelvin sign) is the regular
// expression's business.
func (p prefilter) mayMatch(s string) bool {
	if p == nil {
		return true
	}
	ascii := -1
	for _, l := range p {
		if !l.fold {
			if strings.Contains(s, l.text) {
				return true
			}
			continue
		}
		if ascii < 0 {
			ascii = 0
			if isASCII(s) {
				ascii = 1
			}
		}
		if ascii == 0 || indexFold(s, l.text) >= 0 {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
