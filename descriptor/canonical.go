package descriptor

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MarshalCanonical encodes v as canonical JSON, the form the descriptor
// hash is computed over (see the package documentation for the exact
// rules). v may be any value encoding/json accepts; it is first reduced to
// the JSON data model (objects, arrays, strings, numbers as float64,
// booleans and null). NaN and infinities are written as null, as
// JSON.stringify writes them.
func MarshalCanonical(v any) ([]byte, error) {
	n, err := normalizeValue(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := writeCanonical(&b, n); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// hashCanonical returns "sha256:" followed by the lowercase hex SHA-256 of
// canon.
func hashCanonical(canon []byte) string {
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// writeCanonical appends the canonical encoding of a normalized value.
func writeCanonical(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b.WriteString("null") // JSON.stringify
			break
		}
		s, err := formatNumber(x)
		if err != nil {
			return err
		}
		b.WriteString(s)
	case string:
		writeCanonicalString(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			if k != protoKey {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, compareKeys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonicalString(b, k)
			b.WriteByte(':')
			if err := writeCanonical(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("canonical JSON: unsupported value of type %T", v)
	}
	return nil
}

// writeCanonicalString writes s as a JSON string with the minimal escaping
// of RFC 8785: quote, backslash and control characters only. Invalid UTF-8
// bytes are written as U+FFFD.
func writeCanonicalString(b *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b.WriteString(`\"`)
			case c == '\\':
				b.WriteString(`\\`)
			case c == '\b':
				b.WriteString(`\b`)
			case c == '\f':
				b.WriteString(`\f`)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20:
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// protoKey is left out of canonical objects: aioc builds its canonical
// object by assignment, and assigning "__proto__" on a JavaScript object
// sets its prototype instead of adding a member, so JSON.stringify never
// writes it.
const protoKey = "__proto__"

// compareKeys orders object members as JSON.stringify writes the members of
// an object whose keys were inserted in code-unit order (aioc's canonical
// form): array-index keys ("0" to "4294967294", without leading zeros)
// first, in numeric order, then every other key in UTF-16 code-unit order.
func compareKeys(a, b string) int {
	ia, aIdx := arrayIndex(a)
	ib, bIdx := arrayIndex(b)
	switch {
	case aIdx && bIdx:
		return cmp.Compare(ia, ib)
	case aIdx:
		return -1
	case bIdx:
		return 1
	}
	return compareUTF16(a, b)
}

// arrayIndex reports whether k is an ECMAScript array index, the canonical
// decimal form of an integer below 2^32-1, and returns its value.
func arrayIndex(k string) (uint64, bool) {
	if k == "" || len(k) > 10 || (k[0] == '0' && len(k) > 1) {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(k); i++ {
		if !isDec(k[i]) {
			return 0, false
		}
		v = v*10 + uint64(k[i]-'0')
	}
	return v, v < 1<<32-1
}

// compareUTF16 orders strings by their UTF-16 code units, as RFC 8785 and
// ECMAScript's default sort do. It differs from Go's byte order only for
// characters above U+FFFF against characters in U+E000..U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return compareUnits(ra, rb)
		}
		a, b = a[na:], b[nb:]
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	default:
		return 1
	}
}

// compareUnits compares two different runes by their UTF-16 encodings.
func compareUnits(ra, rb rune) int {
	ua := utf16.AppendRune(nil, ra)
	ub := utf16.AppendRune(nil, rb)
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			if ua[i] < ub[i] {
				return -1
			}
			return 1
		}
	}
	return len(ua) - len(ub)
}

// formatNumber renders f the way ECMAScript's Number.prototype.toString
// does (RFC 8785 section 3.2.2.3): the shortest digits that round-trip,
// plain notation for decimal exponents from -6 to 20, exponent notation
// otherwise, and "0" for both zeros.
func formatNumber(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("canonical JSON: number %v is not finite", f)
	}
	if f == 0 {
		return "0", nil
	}
	var b strings.Builder
	if f < 0 {
		b.WriteByte('-')
		f = -f
	}
	// Shortest round-trip digits and decimal exponent: d.ddd e±x.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expPart, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, err := strconv.Atoi(expPart)
	if err != nil {
		return "", fmt.Errorf("canonical JSON: formatting %v: %w", f, err)
	}
	k := len(digits) // number of significant digits
	n := exp + 1     // position of the decimal point relative to the digits
	switch {
	case k <= n && n <= 21:
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", n-k))
	case 0 < n && n <= 21:
		b.WriteString(digits[:n])
		b.WriteByte('.')
		b.WriteString(digits[n:])
	case -6 < n && n <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -n))
		b.WriteString(digits)
	default:
		b.WriteByte(digits[0])
		if k > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if n-1 >= 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(n - 1))
	}
	return b.String(), nil
}

// normalizeValue reduces v to the JSON data model used throughout this
// package: map[string]any, []any, string, float64, bool and nil. Common Go
// types are converted directly; anything else goes through encoding/json.
func normalizeValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case float64:
		return x, nil
	case float32:
		return normalizeValue(float64(x))
	case int:
		return float64(x), nil
	case int8:
		return float64(x), nil
	case int16:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint:
		return float64(x), nil
	case uint8:
		return float64(x), nil
	case uint16:
		return float64(x), nil
	case uint32:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			// Out of range reads as an infinity or zero, as in JavaScript.
			return nil, fmt.Errorf("number %s: %w", x, err)
		}
		return normalizeValue(f)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			n, err := normalizeValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := normalizeValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out, nil
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	return normalizeValue(generic)
}

// cloneValue deep-copies a normalized value.
func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	default:
		return x
	}
}
