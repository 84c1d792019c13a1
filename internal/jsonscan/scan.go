// Package jsonscan validates JSON and walks the members of a JSON object
// without decoding them, handing out sub-slices of the input. It exists
// because the hot path of the server reads every message once: validation
// and the split into members happen in two cheap passes with no
// allocation, and nesting depth is bounded.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// ErrNotObject is returned when the input is not a JSON object.
var ErrNotObject = errors.New("not a JSON object")

// ErrSyntax is returned when the input is not well-formed JSON.
var ErrSyntax = errors.New("malformed JSON")

// Object checks that b is one well-formed JSON object and calls fn for each
// of its members, in order, with the key (unescaped) and the raw value,
// validating as it goes (one pass over the bytes). It returns ErrSyntax for
// malformed input, ErrNotObject for a well-formed value that is not an
// object, and otherwise the first error fn returns. On malformed input fn
// may already have been called for the members before the fault.
func Object(b []byte, fn func(key, val []byte) error) error {
	return walk(b, true, fn)
}

// trailing checks that only white space follows index i.
func trailing(b []byte, i int) error {
	if skipSpace(b, i) != len(b) {
		return ErrSyntax
	}
	return nil
}

// ObjectValid is Object for input already known to be well-formed JSON
// (for example a member of a message that Object accepted). It skips the
// validation pass; on malformed input it may return ErrSyntax late or hand
// out values that are not JSON.
func ObjectValid(b []byte, fn func(key, val []byte) error) error {
	return walk(b, false, fn)
}

// walk is Object (validate) and ObjectValid (trust the input).
func walk(b []byte, validate bool, fn func(key, val []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) {
		return ErrSyntax
	}
	if b[i] != '{' {
		if validate && !Valid(b) {
			return ErrSyntax
		}
		return ErrNotObject
	}
	var st *scanner
	var top objectKeys
	if validate {
		st = getScanner()
		defer putScanner(st)
	}
	done := func(end int) error {
		if validate {
			if err := trailing(b, end); err != nil {
				return err
			}
			if st.prob != nil {
				return st.prob
			}
		}
		return nil
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return done(i + 1)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return ErrSyntax
		}
		end, flags := skipString(b, i)
		if end < 0 {
			return ErrSyntax
		}
		key := b[i+1 : end-1]
		if validate {
			st.checkString(b, i, end, flags)
			if why := st.add(&top, keyRef{raw: key, escaped: flags&strEscapes != 0}); why != "" {
				st.fail(why, decodedKey(key, flags))
			}
		}
		if flags&strEscapes != 0 {
			k, ok := unquoteJSON(b[i:end])
			if !ok {
				return ErrSyntax
			}
			key = []byte(k)
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return ErrSyntax
		}
		i = skipSpace(b, i+1)
		var vend int
		if validate {
			had := st.prob != nil
			vend = st.skipValue(b, i, 1)
			if !had && st.prob != nil {
				st.prob.prepend(reportedKey(key))
			}
		} else {
			vend = skipValid(b, i)
		}
		if vend < 0 {
			return ErrSyntax
		}
		if err := fn(key, b[i:vend]); err != nil {
			return err
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return ErrSyntax
		}
		if b[i] == '}' {
			return done(i + 1)
		}
		if b[i] != ',' {
			return ErrSyntax
		}
		i = skipSpace(b, i+1)
	}
}

// decodedKey returns the raw member name, unescaped when it has escapes
// (for error messages only).
func decodedKey(raw []byte, flags uint8) []byte {
	if flags&strEscapes == 0 {
		return raw
	}
	return []byte(keyName(keyRef{raw: raw, escaped: true}))
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// MaxNesting bounds how deeply objects and arrays may nest in scanned
// input; deeper input is treated as malformed.
const MaxNesting = 512

// Valid reports whether b is one well-formed JSON value (with optional
// surrounding white space), like encoding/json.Valid but faster, and
// refusing nesting deeper than MaxNesting.
func Valid(b []byte) bool {
	i := skipSpace(b, 0)
	end := (*scanner)(nil).skipValue(b, i, 0)
	return end >= 0 && skipSpace(b, end) == len(b)
}

// ValidStd reports exactly what encoding/json.Valid reports, deeper
// nesting included, taking Valid's fast path for the input both accept.
func ValidStd(b []byte) bool {
	return Valid(b) || json.Valid(b)
}

// Check reports whether b is one well-formed JSON value that the I-JSON
// profile accepts: it returns ErrSyntax for malformed input (or nesting
// deeper than MaxNesting), a *ProfileError for a duplicated member name,
// invalid UTF-8 or an unpaired surrogate escape, and nil otherwise.
func Check(b []byte) error {
	st := getScanner()
	defer putScanner(st)
	i := skipSpace(b, 0)
	end := st.skipValue(b, i, 0)
	if end < 0 || skipSpace(b, end) != len(b) {
		return ErrSyntax
	}
	if st.prob != nil {
		return st.prob
	}
	return nil
}

// String flags reported by skipString.
const (
	strEscapes = 1 << iota // the string holds a backslash escape
	strHigh                // the string holds a byte at or above 0x80
)

// skipString returns the index just past the string starting at b[i], or
// -1 when the string is malformed, and flags saying whether it holds
// escapes or non-ASCII bytes (which the profile checks look at).
func skipString(b []byte, i int) (int, uint8) {
	var flags uint8
	for j := i + 1; j < len(b); j++ {
		// Skip eight ordinary bytes at a time: none is a quote, a
		// backslash, a control character or a non-ASCII byte (a word
		// test, exact when it says no).
		for j+8 <= len(b) && !wordSpecial(binary.LittleEndian.Uint64(b[j:])) {
			j += 8
		}
		if j >= len(b) {
			break
		}
		c := b[j]
		switch {
		case c == '"':
			return j + 1, flags
		case c < 0x20:
			return -1, flags
		case c >= 0x80:
			flags |= strHigh
		case c == '\\':
			flags |= strEscapes
			j++
			if j >= len(b) {
				return -1, flags
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) || !isHex(b[j+1]) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) {
					return -1, flags
				}
				j += 4
			default:
				return -1, flags
			}
		}
	}
	return -1, flags
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// wordSpecial reports whether any of the eight bytes in x is '"', '\\',
// below 0x20 or at or above 0x80. It never misses one; it may report true when one byte
// matches and another next to it does not, which only sends the caller to
// the byte-by-byte path.
func wordSpecial(x uint64) bool {
	q := x ^ (ones * '"')
	bs := x ^ (ones * '\\')
	return (x|(x-ones*0x20)&^x|(q-ones)&^q|(bs-ones)&^bs)&highs != 0
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// skipNumber returns the index just past the number starting at b[i].
func skipNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i
}

func skipLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// skipValue returns the index just past the well-formed value starting at
// b[i], or -1 when it is malformed or nests deeper than MaxNesting. With a
// non-nil scanner it also applies the I-JSON profile checks, recording the
// first violation in s.prob (a nil scanner checks syntax only).
func (s *scanner) skipValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; c {
	case '"':
		end, flags := skipString(b, i)
		if end >= 0 && s != nil && flags != 0 {
			s.checkString(b, i, end, flags)
		}
		return end
	case '{', '[':
		if depth >= MaxNesting {
			return -1
		}
		close := byte('}')
		if c == '[' {
			close = ']'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == close {
			return i + 1
		}
		var obj objectKeys
		if s != nil {
			obj.base = len(s.keys)
			defer func() { s.keys = s.keys[:obj.base] }()
		}
		var key []byte
		var keyFlags uint8
		for n := 0; ; n++ {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return -1
				}
				end, flags := skipString(b, i)
				if end < 0 {
					return -1
				}
				if s != nil {
					key, keyFlags = b[i+1:end-1], flags
					if flags != 0 {
						s.checkString(b, i, end, flags)
					}
					if why := s.add(&obj, keyRef{raw: key, escaped: flags&strEscapes != 0}); why != "" {
						s.fail(why, decodedKey(key, flags))
					}
				}
				i = skipSpace(b, end)
				if i >= len(b) || b[i] != ':' {
					return -1
				}
				i = skipSpace(b, i+1)
			}
			had := s == nil || s.prob != nil
			i = s.skipValue(b, i, depth+1)
			if !had && s.prob != nil {
				if c == '{' {
					s.prob.prepend(reportedKey(decodedKey(key, keyFlags)))
				} else {
					s.prob.prepend(indexStep(n))
				}
			}
			if i < 0 {
				return -1
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return -1
			}
			if b[i] == close {
				return i + 1
			}
			if b[i] != ',' {
				return -1
			}
			i = skipSpace(b, i+1)
		}
	case 't':
		return skipLiteral(b, i, "true")
	case 'f':
		return skipLiteral(b, i, "false")
	case 'n':
		return skipLiteral(b, i, "null")
	default:
		end := skipNumber(b, i)
		if s != nil && end > i && (end-i > 300 || bytes.IndexByte(b[i:end], 'e') >= 0 || bytes.IndexByte(b[i:end], 'E') >= 0) {
			s.checkNumber(b[i:end])
		}
		return end
	}
}

// skipValidString returns the index just past the string starting at b[i],
// for input known to be well-formed: it jumps from quote to quote.
func skipValidString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		// The quote ends the string unless an odd number of backslashes
		// precedes it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// skipValid returns the index just past the value starting at b[i], for
// input known to be well-formed.
func skipValid(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipValidString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := skipValidString(b, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j
			}
			j++
		}
		return j
	}
}

// Kind classifies a raw JSON value by its first byte.
func Kind(v []byte) byte {
	if len(v) == 0 {
		return 0
	}
	switch c := v[0]; c {
	case '"', '{', '[', 't', 'f', 'n':
		return c
	default:
		return '0'
	}
}

// String returns the Go string of a raw JSON string value. Values without
// escapes take a fast path; the second result is false if v is not a string.
func String(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	for _, c := range inner {
		if c == '\\' || c < 0x20 {
			return unquoteJSON(v)
		}
	}
	return string(inner), true
}

// Equal reports whether raw JSON string v equals s, without allocating when
// v has no escapes.
func Equal(v []byte, s string) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	inner := v[1 : len(v)-1]
	for _, c := range inner {
		if c == '\\' {
			u, ok := String(v)
			return ok && u == s
		}
	}
	return string(inner) == s
}

// Uint parses a raw JSON number that must be a non-negative integer no
// larger than max.
func Uint(v []byte, max uint64) (uint64, bool) {
	if len(v) == 0 || v[0] < '0' || v[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil || n > max {
		return 0, false
	}
	return n, true
}

// unquoteJSON decodes JSON string escapes that strconv.Unquote rejects
// (such as \/ and surrogate pairs written as \uD83D\uDE00).
func unquoteJSON(v []byte) (string, bool) {
	inner := v[1 : len(v)-1]
	out := make([]byte, 0, len(inner))
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(inner) {
			return "", false
		}
		switch inner[i] {
		case '"', '\\', '/':
			out = append(out, inner[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+4 >= len(inner) {
				return "", false
			}
			r, err := strconv.ParseUint(string(inner[i+1:i+5]), 16, 32)
			if err != nil {
				return "", false
			}
			i += 4
			if r >= 0xD800 && r < 0xDC00 && i+6 < len(inner) && inner[i+1] == '\\' && inner[i+2] == 'u' {
				r2, err := strconv.ParseUint(string(inner[i+3:i+7]), 16, 32)
				if err == nil && r2 >= 0xDC00 && r2 < 0xE000 {
					r = (r-0xD800)<<10 + (r2 - 0xDC00) + 0x10000
					i += 6
				}
			}
			out = utf8.AppendRune(out, rune(r))
		default:
			return "", false
		}
	}
	return string(out), true
}
