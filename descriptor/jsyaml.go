package descriptor

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// This file reads YAML scalars the way js-yaml 4's default schema does,
// because aioc, whose descriptor hash this package reproduces, parses
// descriptors with it. go.yaml.in/yaml/v3 only supplies the node tree; every
// scalar is resolved here from its text, style and explicit tag:
//
//   - quoted and block scalars are strings;
//   - plain scalars are tried, in order, as null (~, null, Null, NULL,
//     empty), boolean (true/false in three casings; yes, on, y stay
//     strings), integer (decimal, 0x, 0o, 0b, '_' separators, leading zeros
//     read as decimal), float (including .inf, -.inf, .nan) and timestamp
//     (YYYY-MM-DD, or with a time and an optional zone), and are strings
//     otherwise;
//   - numbers become float64 as JavaScript numbers do (rounded to the
//     nearest double; overflow is an infinity);
//   - timestamps become the string Date.prototype.toISOString gives, in UTC
//     with milliseconds.

// yamlFloatPattern is js-yaml's YAML_FLOAT_PATTERN.
var yamlFloatPattern = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)

// yamlDatePattern and yamlTimestampPattern are js-yaml's YAML_DATE_REGEXP
// and YAML_TIMESTAMP_REGEXP.
var (
	yamlDatePattern      = regexp.MustCompile(`^([0-9][0-9][0-9][0-9])-([0-9][0-9])-([0-9][0-9])$`)
	yamlTimestampPattern = regexp.MustCompile(`^([0-9][0-9][0-9][0-9])-([0-9][0-9]?)-([0-9][0-9]?)(?:[Tt]|[ \t]+)([0-9][0-9]?):([0-9][0-9]):([0-9][0-9])(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?$`)
)

// Style bits of a scalar written with quotes or as a block.
const nonPlainStyle = yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle

// yamlTag is the long form of a standard tag, as js-yaml names it in its
// messages.
func yamlTag(short string) string {
	if s, ok := strings.CutPrefix(short, "!!"); ok {
		return "!<tag:yaml.org,2002:" + s + ">"
	}
	return "!<" + short + ">"
}

// explicitTag returns the tag written on n, or "" when it has none.
func explicitTag(n *yaml.Node) string {
	if n.Style&yaml.TaggedStyle == 0 {
		return ""
	}
	return n.ShortTag()
}

// isPlain reports whether n is a plain (unquoted, non-block) scalar.
func isPlain(n *yaml.Node) bool { return n.Style&nonPlainStyle == 0 }

// jsScalar converts a scalar node as js-yaml 4's default schema does.
func jsScalar(n *yaml.Node) (any, error) {
	tag := explicitTag(n)
	if tag == "" {
		if !isPlain(n) {
			return n.Value, nil
		}
		if n.Value == "" {
			return nil, nil
		}
		return resolveImplicit(n.Value), nil
	}
	// An empty plain scalar with a tag is JavaScript's null for the
	// resolvers; a quoted empty scalar is the empty string.
	empty := n.Value == "" && isPlain(n)
	cannot := func() error {
		return fmt.Errorf("line %d: cannot resolve a node with %s explicit tag", n.Line, yamlTag(tag))
	}
	switch tag {
	case "!!str":
		return n.Value, nil
	case "!!null":
		if empty || isYAMLNull(n.Value) {
			return nil, nil
		}
		return nil, cannot()
	case "!!bool":
		if b, ok := yamlBool(n.Value); ok && !empty {
			return b, nil
		}
		return nil, cannot()
	case "!!int":
		if !empty && isYAMLInt(n.Value) {
			return yamlInt(n.Value), nil
		}
		return nil, cannot()
	case "!!float":
		if !empty && isYAMLFloat(n.Value) {
			return yamlFloat(n.Value), nil
		}
		return nil, cannot()
	case "!!timestamp":
		if !empty {
			if s, ok := yamlTimestamp(n.Value); ok {
				return s, nil
			}
		}
		return nil, cannot()
	case "!!binary":
		return yamlBinary(n)
	default:
		return nil, fmt.Errorf("line %d: unknown tag %s", n.Line, yamlTag(tag))
	}
}

// resolveImplicit resolves a non-empty plain scalar.
func resolveImplicit(s string) any {
	if isYAMLNull(s) {
		return nil
	}
	if b, ok := yamlBool(s); ok {
		return b
	}
	if isYAMLInt(s) {
		return yamlInt(s)
	}
	if isYAMLFloat(s) {
		return yamlFloat(s)
	}
	if t, ok := yamlTimestamp(s); ok {
		return t
	}
	return s
}

// isImplicitTimestamp reports whether a plain scalar resolves to a
// timestamp.
func isImplicitTimestamp(s string) bool {
	if s == "" || isYAMLNull(s) || isYAMLInt(s) || isYAMLFloat(s) {
		return false
	}
	if _, ok := yamlBool(s); ok {
		return false
	}
	_, ok := yamlTimestamp(s)
	return ok
}

func isYAMLNull(s string) bool {
	return s == "~" || s == "null" || s == "Null" || s == "NULL"
}

func yamlBool(s string) (value, ok bool) {
	switch s {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	return false, false
}

func isDec(c byte) bool { return '0' <= c && c <= '9' }
func isOct(c byte) bool { return '0' <= c && c <= '7' }
func isHex(c byte) bool {
	return isDec(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// isYAMLInt is js-yaml's resolveYamlInteger, step by step.
func isYAMLInt(s string) bool {
	n := len(s)
	if n == 0 {
		return false
	}
	i := 0
	at := func(i int) byte { // data[i], with 0 for JavaScript's undefined
		if i < n {
			return s[i]
		}
		return 0
	}
	c := at(0)
	if c == '-' || c == '+' {
		i++
		c = at(i)
	}
	if c == '0' {
		if i+1 == n {
			return true
		}
		i++
		c = at(i)
		var digit func(byte) bool
		switch c {
		case 'b':
			digit = func(c byte) bool { return c == '0' || c == '1' }
		case 'x':
			digit = isHex
		case 'o':
			digit = isOct
		}
		if digit != nil {
			hasDigits := false
			for i++; i < n; i++ {
				c = s[i]
				if c == '_' {
					continue
				}
				if !digit(c) {
					return false
				}
				hasDigits = true
			}
			return hasDigits && c != '_'
		}
	}
	if c == '_' {
		return false
	}
	hasDigits := false
	for ; i < n; i++ {
		c = s[i]
		if c == '_' {
			continue
		}
		if !isDec(c) {
			return false
		}
		hasDigits = true
	}
	return hasDigits && c != '_'
}

// yamlInt is js-yaml's constructYamlInteger: parseInt in the scalar's
// base, which rounds to the nearest double.
func yamlInt(s string) float64 {
	v := strings.ReplaceAll(s, "_", "")
	sign := 1.0
	if v[0] == '-' || v[0] == '+' {
		if v[0] == '-' {
			sign = -1
		}
		v = v[1:]
	}
	if v == "0" {
		return 0
	}
	if len(v) > 1 && v[0] == '0' {
		base := 0
		switch v[1] {
		case 'b':
			base = 2
		case 'x':
			base = 16
		case 'o':
			base = 8
		}
		if base != 0 {
			var i big.Int
			if _, ok := i.SetString(v[2:], base); !ok {
				return math.NaN() // unreachable: isYAMLInt checked the digits
			}
			f, _ := new(big.Float).SetInt(&i).Float64()
			return sign * f
		}
	}
	// Decimal: correctly rounded; beyond the double range, an infinity.
	f, _ := strconv.ParseFloat(v, 64)
	return sign * f
}

// isYAMLFloat is js-yaml's resolveYamlFloat.
func isYAMLFloat(s string) bool {
	return yamlFloatPattern.MatchString(s) && s[len(s)-1] != '_'
}

// yamlFloat is js-yaml's constructYamlFloat.
func yamlFloat(s string) float64 {
	v := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if v[0] == '-' {
		sign = -1
	}
	if v[0] == '-' || v[0] == '+' {
		v = v[1:]
	}
	switch v {
	case ".inf":
		return math.Inf(int(sign))
	case ".nan":
		return math.NaN()
	}
	f, _ := strconv.ParseFloat(v, 64) // the pattern admits only decimal literals
	return sign * f
}

// yamlTimestamp is js-yaml's timestamp type followed by
// Date.prototype.toISOString: the instant in UTC with milliseconds.
// Out-of-range fields roll over as Date.UTC makes them (February 30 is in
// March), and years 0 to 99 are read as 1900 to 1999, as Date.UTC does.
func yamlTimestamp(s string) (string, bool) {
	m := yamlDatePattern.FindStringSubmatch(s)
	if m == nil {
		m = yamlTimestampPattern.FindStringSubmatch(s)
		if m == nil {
			return "", false
		}
	}
	num := func(i int) int {
		if i >= len(m) || m[i] == "" {
			return 0
		}
		v, _ := strconv.Atoi(m[i])
		return v
	}
	year := num(1)
	if year <= 99 {
		year += 1900
	}
	month, day := num(2), num(3)
	var hour, minute, second, millis int
	if len(m) > 4 && m[4] != "" {
		hour, minute, second = num(4), num(5), num(6)
		if frac := m[7]; frac != "" {
			frac = (frac + "00")[:3]
			millis, _ = strconv.Atoi(frac)
		}
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, millis*int(time.Millisecond), time.UTC)
	if len(m) > 9 && m[9] != "" {
		delta := time.Duration(num(10)*60+num(11)) * time.Minute
		if m[9] == "-" {
			delta = -delta
		}
		t = t.Add(-delta)
	}
	return isoString(t), true
}

// isoString formats t as Date.prototype.toISOString does, including the
// six-digit signed years outside 0000-9999.
func isoString(t time.Time) string {
	t = t.UTC()
	y := t.Year()
	var year string
	switch {
	case y >= 0 && y <= 9999:
		year = fmt.Sprintf("%04d", y)
	case y < 0:
		year = fmt.Sprintf("-%06d", -y)
	default:
		year = fmt.Sprintf("+%06d", y)
	}
	return year + t.Format("-01-02T15:04:05.000Z")
}

// yamlBinary is js-yaml's binary type (a Node.js Buffer), as aioc's
// canonical JSON sees it: an object whose keys are the byte indexes.
func yamlBinary(n *yaml.Node) (any, error) {
	clean := strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, n.Value)
	data, err := base64.StdEncoding.DecodeString(clean)
	if err != nil {
		data, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(clean, "="))
	}
	if err != nil {
		return nil, fmt.Errorf("line %d: cannot resolve a node with %s explicit tag", n.Line, yamlTag("!!binary"))
	}
	obj := make(map[string]any, len(data))
	for i, b := range data {
		obj[strconv.Itoa(i)] = float64(b)
	}
	return obj, nil
}

// jsKeyString is JavaScript's String() of a scalar key's value, which is
// what js-yaml uses as the property name.
func jsKeyString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case nil:
		return "null", true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		return jsNumberString(x), true
	}
	return "", false
}

// jsNumberString is JavaScript's String(number).
func jsNumberString(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	s, _ := formatNumber(f)
	return s
}
