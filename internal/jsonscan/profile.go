package jsonscan

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// ProfileError reports well-formed JSON that the I-JSON profile (RFC 7493)
// refuses because common parsers would read it in different ways: an
// object with the same member name twice (some keep the first value, most
// the last), a string that is not valid UTF-8 (some replace the bad bytes,
// some keep them), a \u escape of an unpaired surrogate, or a number
// beyond the range of a double (infinity to some, an error to others).
type ProfileError struct {
	// Reason says what is wrong, in a few words.
	Reason string
	// Key is the duplicated member name, for duplicates; it is cut to
	// MaxReportedKey bytes.
	Key string
	// Path names the offending value from the root: member names and
	// [index] steps, outermost first. For a duplicate it ends with Key.
	Path []string
}

// MaxReportedKey bounds how much of a member name a ProfileError repeats.
const MaxReportedKey = 64

// maxPathSteps bounds how many path steps a ProfileError keeps.
const maxPathSteps = 32

func (e *ProfileError) Error() string {
	var b strings.Builder
	b.WriteString(e.Reason)
	if e.Key != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(e.Key))
	}
	if p := e.PathString(); p != "" {
		b.WriteString(" at ")
		b.WriteString(p)
	}
	return b.String()
}

// PathString renders Path as a dotted path ("params.payload.arguments.command",
// "events[2].payload"); names that are not plain identifiers are quoted
// (`metadata["a.b"]`).
func (e *ProfileError) PathString() string {
	var b strings.Builder
	for i, s := range e.Path {
		switch {
		case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") && s != "[]" && isIndex(s[1:len(s)-1]):
			b.WriteString(s)
		case plainName(s):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		default:
			b.WriteByte('[')
			b.WriteString(strconv.Quote(s))
			b.WriteByte(']')
		}
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" || s == "…" {
		return s == "…"
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && isDigit(c)) {
			return false
		}
	}
	return true
}

// prepend adds an outer path step (a member name or an array index).
func (e *ProfileError) prepend(step string) {
	if len(e.Path) >= maxPathSteps {
		e.Path[0] = "…"
		return
	}
	e.Path = append(e.Path, "")
	copy(e.Path[1:], e.Path)
	e.Path[0] = step
}

func reportedKey(k []byte) string {
	s := string(k)
	if len(s) > MaxReportedKey {
		cut := MaxReportedKey
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func indexStep(n int) string { return "[" + strconv.Itoa(n) + "]" }

// keyRef is one member name of an object being scanned: its raw bytes
// between the quotes, and whether they hold escapes (then names are
// compared after unescaping).
type keyRef struct {
	raw     []byte
	escaped bool
}

// smallObject is how many members an object may have before duplicate
// detection switches from pairwise comparison to a map.
const smallObject = 16

// scanner carries the state of one validating pass: the names of the
// objects still open (for duplicate detection) and the first profile
// violation found. A violation does not stop the pass, so that syntax
// errors later in the input are still reported as such and callers can
// read the members they need (an id, a method) to answer.
type scanner struct {
	keys []keyRef
	prob *ProfileError
}

var scanners = sync.Pool{New: func() any { return &scanner{keys: make([]keyRef, 0, 64)} }}

// getScanner returns a reset scanner from the pool (a validating pass
// allocates nothing).
func getScanner() *scanner { return scanners.Get().(*scanner) }

// putScanner returns s to the pool, dropping its references to the input.
func putScanner(s *scanner) {
	if cap(s.keys) > 1024 {
		return
	}
	clear(s.keys[:cap(s.keys)])
	s.keys = s.keys[:0]
	s.prob = nil
	scanners.Put(s)
}

func (s *scanner) fail(reason string, key []byte) {
	if s.prob == nil {
		s.prob = &ProfileError{Reason: reason}
		if key != nil {
			s.prob.Key = reportedKey(key)
			s.prob.Path = []string{s.prob.Key}
		}
	}
}

// keyName returns the member name of k as a string (unescaped).
func keyName(k keyRef) string {
	if !k.escaped {
		return string(k.raw)
	}
	q := make([]byte, 0, len(k.raw)+2)
	q = append(q, '"')
	q = append(q, k.raw...)
	q = append(q, '"')
	u, _ := unquoteJSON(q)
	return u
}

// Reasons for a refused member name.
const (
	reasonDuplicate = "duplicate member name"
	reasonCaseTwin  = "member names that differ only in letter case"
)

// compareKeys says whether a and b name the same member for some common
// reader: exactly (every reader), or only when letter case is ignored, as
// Go's encoding/json matches names to struct fields (Unicode simple case
// folding: bytes.EqualFold). It returns "" when they differ.
func compareKeys(a, b keyRef) string {
	var an, bn []byte
	if !a.escaped && !b.escaped {
		an, bn = a.raw, b.raw
	} else {
		an, bn = []byte(keyName(a)), []byte(keyName(b))
	}
	switch {
	case bytes.Equal(an, bn):
		return reasonDuplicate
	case bytes.EqualFold(an, bn):
		return reasonCaseTwin
	}
	return ""
}

// foldName maps a member name to a key equal for exactly the names
// bytes.EqualFold finds equal: every rune becomes the smallest rune of its
// simple case-folding orbit (for ASCII letters, the upper case one: the
// Kelvin sign folds to 'K', the long s to 'S').
func foldName(name string) string {
	out := make([]byte, 0, len(name))
	for _, r := range name {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			out = append(out, byte(r))
			continue
		}
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		out = utf8.AppendRune(out, r)
	}
	return string(out)
}

// objectKeys tracks the member names of one open object.
type objectKeys struct {
	base int
	big  map[string]string // folded name → name, for large objects
}

// add records key k of the object that started at o.base and returns why
// the object may not have it ("" when it may): another member of the same
// name, or of a name equal to it when letter case is ignored.
func (s *scanner) add(o *objectKeys, k keyRef) string {
	if o.big != nil {
		name := keyName(k)
		folded := foldName(name)
		if prev, dup := o.big[folded]; dup {
			if prev == name {
				return reasonDuplicate
			}
			return reasonCaseTwin
		}
		o.big[folded] = name
		return ""
	}
	for _, prev := range s.keys[o.base:] {
		if why := compareKeys(prev, k); why != "" {
			return why
		}
	}
	s.keys = append(s.keys, k)
	if len(s.keys)-o.base > smallObject {
		o.big = make(map[string]string, 2*smallObject)
		for _, prev := range s.keys[o.base:] {
			name := keyName(prev)
			o.big[foldName(name)] = name
		}
		s.keys = s.keys[:o.base]
	}
	return ""
}

// checkString applies the profile's string rules to the well-formed
// string b[i:end]: valid UTF-8, and no unpaired surrogate escapes.
func (s *scanner) checkString(b []byte, i, end int, flags uint8) {
	if s.prob != nil {
		return
	}
	inner := b[i+1 : end-1]
	if flags&strHigh != 0 && !utf8.Valid(inner) {
		s.fail("invalid UTF-8 in a string", nil)
		return
	}
	if flags&strEscapes != 0 && !surrogatesPaired(inner) {
		s.fail("unpaired UTF-16 surrogate escape in a string", nil)
	}
}

// checkNumber refuses a number too large for an IEEE 754 double, which
// parsers read as infinity, as an error, or exactly, depending on the
// language. Only a number with an exponent or more than 300 digits can be
// that large, so others skip the check.
func (s *scanner) checkNumber(n []byte) {
	if s.prob != nil {
		return
	}
	if _, err := strconv.ParseFloat(string(n), 64); err != nil {
		s.fail("number too large for a double", nil)
	}
}

// surrogatesPaired reports whether every \uD800-\uDBFF escape in the
// well-formed string body b is followed by a \uDC00-\uDFFF escape, and
// every low surrogate escape follows a high one.
func surrogatesPaired(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++
		if b[i] != 'u' {
			continue
		}
		r := hex4(b[i+1 : i+5])
		i += 4
		switch {
		case r >= 0xDC00 && r < 0xE000:
			return false
		case r >= 0xD800 && r < 0xDC00:
			if i+6 >= len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
				return false
			}
			r2 := hex4(b[i+3 : i+7])
			if r2 < 0xDC00 || r2 >= 0xE000 {
				return false
			}
			i += 6
		}
	}
	return true
}

func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		default:
			r |= rune(c-'A') + 10
		}
	}
	return r
}
