package perception

import (
	"bytes"
	"path"
	"regexp"
	"strings"

	"github.com/ahp-go/ahp/protocol"
)

const (
	maxPatternLen = 1024 // longest pattern target used
	maxCount      = 10   // content matches counted per probe and file

	pathPoints    = 3.0 // a match in the path
	contentPoints = 2.0 // the most a probe earns from content matches
)

// probe is one thing a file is searched for.
type probe interface {
	// pathHit reports a match in the slash-separated path relative to the
	// root; lower is that path with ASCII letters lower-cased.
	pathHit(rel, lower string) bool
	// contentHits returns the offset of the first match in data (lower is
	// data lower-cased) and the number of matches up to maxCount; -1, 0
	// when there is none.
	contentHits(data, lower []byte) (first, count int)
	// weight is how much the probe counts relative to the others.
	weight() int
	// pathOnly reports that the probe never matches content.
	pathOnly() bool
}

// termProbe looks for a term ignoring ASCII case.
type termProbe struct{ t term }

func (p termProbe) pathHit(_, lower string) bool { return strings.Contains(lower, p.t.lower) }
func (p termProbe) weight() int                  { return p.t.weight }
func (p termProbe) pathOnly() bool               { return false }
func (p termProbe) contentHits(_, lower []byte) (int, int) {
	return countIndex(lower, []byte(p.t.lower))
}

// literalProbe looks for a pattern as exact text.
type literalProbe struct{ s string }

func (p literalProbe) pathHit(rel, _ string) bool { return strings.Contains(rel, p.s) }
func (p literalProbe) weight() int                { return weightName }
func (p literalProbe) pathOnly() bool             { return false }
func (p literalProbe) contentHits(data, _ []byte) (int, int) {
	return countIndex(data, []byte(p.s))
}

// regexProbe looks for a regular expression (RE2, linear time). Empty
// matches do not count.
type regexProbe struct{ re *regexp.Regexp }

func (p regexProbe) weight() int    { return weightName }
func (p regexProbe) pathOnly() bool { return false }
func (p regexProbe) pathHit(rel, _ string) bool {
	loc := p.re.FindStringIndex(rel)
	return loc != nil && loc[1] > loc[0]
}
func (p regexProbe) contentHits(data, _ []byte) (int, int) {
	first, n := -1, 0
	for _, loc := range p.re.FindAllIndex(data, 4*maxCount) {
		if loc[1] == loc[0] {
			continue
		}
		if first < 0 {
			first = loc[0]
		}
		if n++; n == maxCount {
			break
		}
	}
	return first, n
}

// globProbe matches a shell pattern against the path or the base name.
type globProbe struct{ g string }

func (p globProbe) weight() int                        { return weightName }
func (p globProbe) pathOnly() bool                     { return true }
func (p globProbe) contentHits(_, _ []byte) (int, int) { return -1, 0 }
func (p globProbe) pathHit(rel, _ string) bool {
	if ok, _ := path.Match(p.g, rel); ok {
		return true
	}
	ok, _ := path.Match(p.g, path.Base(rel))
	return ok
}

// countIndex finds needle in data: first offset and count up to maxCount.
func countIndex(data, needle []byte) (int, int) {
	if len(needle) == 0 {
		return -1, 0
	}
	first, n, pos := -1, 0, 0
	for n < maxCount {
		i := bytes.Index(data[pos:], needle)
		if i < 0 {
			break
		}
		if first < 0 {
			first = pos + i
		}
		n++
		pos += i + len(needle)
	}
	return first, n
}

// Suggestions about a pattern target that could not be used as asked.
const (
	noteLongPattern = "pattern is longer than 1024 bytes and was not used"
	noteBadRegex    = "pattern is not a valid regular expression; it was searched as literal text"
	noteBadGlob     = "pattern is not a valid glob; it was searched as literal text"
)

// patternProbe builds the probe of a pattern target. pattern_type "regex"
// (or "regexp", "re", "regular_expression") compiles RE2; "glob" (or
// "wildcard") matches paths; anything else is literal text. The second
// result is a suggestion when the pattern could not be used as asked.
func patternProbe(pt *protocol.PatternTarget) (probe, string) {
	if pt.Pattern == "" {
		return nil, ""
	}
	if len(pt.Pattern) > maxPatternLen {
		return nil, noteLongPattern
	}
	switch strings.ToLower(strings.TrimSpace(pt.PatternType)) {
	case "regex", "regexp", "re", "regular_expression":
		re, err := regexp.Compile(pt.Pattern)
		if err != nil {
			return literalProbe{pt.Pattern}, noteBadRegex
		}
		return regexProbe{re}, ""
	case "glob", "wildcard":
		if _, err := path.Match(pt.Pattern, ""); err != nil {
			return literalProbe{pt.Pattern}, noteBadGlob
		}
		return globProbe{pt.Pattern}, ""
	}
	return literalProbe{pt.Pattern}, ""
}
