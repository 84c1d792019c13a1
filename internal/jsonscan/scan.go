// Package jsonscan walks the members of a JSON object without decoding
// them, handing out sub-slices of the input. It expects input that
// encoding/json.Valid accepts; callers check validity first, so the scanner
// only has to find where each value ends.
package jsonscan

import (
	"bytes"
	"errors"
	"strconv"
	"unicode/utf8"
)

// ErrNotObject is returned when the input is not a JSON object.
var ErrNotObject = errors.New("not a JSON object")

// errSyntax is returned when the input is not well formed; callers that
// checked validity first never see it.
var errSyntax = errors.New("malformed JSON")

// Object calls fn for each member of the object in b, in order, with the raw
// key (quotes removed, escapes left as they are) and the raw value. It stops
// at the first error fn returns.
func Object(b []byte, fn func(key, val []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ErrNotObject
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return errSyntax
		}
		end := skipString(b, i)
		if end < 0 {
			return errSyntax
		}
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			k, ok := unquoteJSON(b[i:end])
			if !ok {
				return errSyntax
			}
			key = []byte(k)
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return errSyntax
		}
		i = skipSpace(b, i+1)
		vend := skipValue(b, i)
		if vend < 0 {
			return errSyntax
		}
		if err := fn(key, b[i:vend]); err != nil {
			return err
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return errSyntax
		}
		if b[i] == '}' {
			return nil
		}
		if b[i] != ',' {
			return errSyntax
		}
		i = skipSpace(b, i+1)
	}
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

// skipString returns the index just past the string starting at b[i].
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := skipString(b, j)
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
