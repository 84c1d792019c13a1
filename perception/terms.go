package perception

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ahp-go/ahp/protocol"
)

const (
	maxTerms    = 24   // terms kept per request
	maxTermLen  = 256  // longer terms are dropped
	maxTextScan = 4096 // bytes of one free-text field that are tokenized

	weightName = 2 // names from the target: identifiers, file names
	weightWord = 1 // words from free text: queries, descriptions
)

// term is one search term; matching ignores ASCII case.
type term struct {
	lower  string
	weight int
}

// termSet collects distinct terms in the order they were added.
type termSet struct {
	list []term
	idx  map[string]int
}

func (s *termSet) add(text string, w int) {
	text = strings.TrimSpace(text)
	if text == "" || len(text) > maxTermLen {
		return
	}
	low := asciiLower(text)
	if i, ok := s.idx[low]; ok {
		s.list[i].weight = max(s.list[i].weight, w)
		return
	}
	if len(s.list) >= maxTerms {
		return
	}
	if s.idx == nil {
		s.idx = make(map[string]int)
	}
	s.idx[low] = len(s.list)
	s.list = append(s.list, term{lower: low, weight: w})
}

// addName adds a name from the target. A name with spaces is split into
// words; a qualified name (pkg.Func, a/b, ns::x) also adds its last part.
func (s *termSet) addName(name string) {
	name = strings.TrimSpace(clip(name, maxTextScan))
	if strings.ContainsFunc(name, unicode.IsSpace) {
		s.addWords(name, weightName)
		return
	}
	if len(name) < 2 {
		return
	}
	s.add(name, weightName)
	if last := lastSegment(name); last != name && len(last) >= 2 {
		s.add(last, weightName)
	}
}

// addWords adds the words of free text, without short and common words.
func (s *termSet) addWords(text string, w int) {
	for _, tok := range tokenize(clip(text, maxTextScan)) {
		if len(tok) < 3 || stopwords[asciiLower(tok)] {
			continue
		}
		s.add(tok, w)
	}
}

// targetTerms adds the terms of every target variant but location, which
// Perceive resolves as a path, and pattern, which becomes its own probe.
func (s *termSet) addTarget(t protocol.PerceptionTarget) {
	switch {
	case t.Entity != nil:
		s.addName(t.Entity.Name)
		if t.Entity.Identifier != nil {
			s.addName(*t.Entity.Identifier)
		}
	case t.Rule != nil:
		s.addName(t.Rule.Name)
	case t.Resource != nil:
		s.addName(t.Resource.Name)
	case t.State != nil:
		s.addName(t.State.Target)
	case t.Relation != nil:
		for i, e := range t.Relation.Entities {
			if i == maxTerms {
				break
			}
			s.addName(e)
		}
	case t.Event != nil:
		s.addWords(t.Event.Description, weightWord)
	}
}

// lowers returns the terms' lower-case texts.
func (s *termSet) lowers() []string {
	out := make([]string, len(s.list))
	for i, t := range s.list {
		out[i] = t.lower
	}
	return out
}

// lastSegment returns the part of a qualified name after its last separator.
// A dot separates only when what follows holds an upper-case letter, so that
// "pkg.Func" gives "Func" but "main.go" stays whole.
func lastSegment(name string) string {
	if i := strings.LastIndexAny(name, "/\\:#"); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		if rest := name[i+1:]; strings.ContainsFunc(rest, unicode.IsUpper) {
			return rest
		}
	}
	return name
}

// tokenize splits text into words made of letters, digits and "_./-",
// trimming the punctuation at their ends.
func tokenize(text string) []string {
	fields := strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_./-", r))
	})
	out := fields[:0]
	for _, f := range fields {
		if f = strings.Trim(f, "./-"); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// clip cuts s to at most n bytes at a UTF-8 boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// asciiLower lower-cases ASCII letters only, so byte offsets do not move.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			lowerBytes(b[i:])
			return string(b)
		}
	}
	return s
}

// lowerBytes lower-cases the ASCII letters of b in place.
func lowerBytes(b []byte) {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
}

// stopwords are words of requests that say nothing about where to look.
var stopwords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`the and but for nor with from into onto over under
		that this these those what where which who whom whose why how when does did done
		are was were been being have has had not can could should would will shall may
		might must please show find look search tell give get let make about all any some
		its there here then than them they their our your you use used using file files
		code function functions method methods implementation implemented defined define
		locate need want like also just more most other same such only very each every
		after before again out off is it in on of to a an or be by at as we me my i`) {
		m[w] = true
	}
	return m
}()
