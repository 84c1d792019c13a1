package policy

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Low-level JSON scanning for the lazy values of jsonval.go: finding where
// a value ends without decoding it, and decoding string literals.

// skipSpace returns the index of the first non-space byte at or after i.
func skipSpace(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func trimSpace(s string) string {
	s = s[skipSpace(s, 0):]
	for len(s) > 0 {
		switch s[len(s)-1] {
		case ' ', '\t', '\n', '\r':
			s = s[:len(s)-1]
			continue
		}
		break
	}
	return s
}

// skipString returns the index just past the string that starts at s[i].
func skipString(s string, i int) (int, error) {
	j := i + 1
	for {
		k := strings.IndexByte(s[j:], '"')
		if k < 0 {
			return 0, fmt.Errorf("unterminated string at offset %d", i)
		}
		j += k
		// The quote ends the string unless an odd run of backslashes escapes it.
		n := 0
		for b := j - 1; b > i && s[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, nil
		}
		j++
	}
}

// skipValue returns the index just past the value that starts at s[i]. It
// balances brackets without recursion; nested values are checked in detail
// only when they are decoded.
func skipValue(s string, i int) (int, error) {
	if i >= len(s) {
		return 0, fmt.Errorf("missing value at offset %d", i)
	}
	switch c := s[i]; c {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				end, err := skipString(s, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("unterminated %q at offset %d", c, i)
	default:
		j := i
		for j < len(s) {
			switch s[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return 0, fmt.Errorf("missing value at offset %d", i)
				}
				return j, nil
			}
			j++
		}
		return j, nil
	}
}

// unquoteJSON decodes a JSON string literal. Literals without escapes are
// returned as substrings without copying.
func unquoteJSON(lit string) (string, error) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", fmt.Errorf("invalid JSON string")
	}
	body := lit[1 : len(lit)-1]
	if strings.IndexByte(body, '\\') < 0 {
		return body, nil
	}
	var out string
	if err := json.Unmarshal([]byte(lit), &out); err != nil {
		return "", fmt.Errorf("invalid JSON string: %w", err)
	}
	return out, nil
}
