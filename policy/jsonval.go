package policy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// This file turns JSON text into CEL values lazily. An object is scanned
// (member keys and value spans) only when a rule first looks into it, and a
// member's value is decoded only when a rule first reads it; decoded values
// are cached. Strings are substrings of the source text, so reading a field
// costs one small allocation (the boxed string) and no copy.
//
// A jsonObject caches what it decodes, so it belongs to one evaluation (one
// goroutine). Values shared between goroutines (the pack parameters) are
// built with nativeToVal instead.

// decodeJSON returns the CEL value of one JSON value. Objects are returned
// unscanned; lists are decoded element by element (objects inside them stay
// lazy). Malformed text yields a *types.Err.
func decodeJSON(src string) ref.Val {
	s := trimSpace(src)
	if s == "" {
		return types.NewErr("invalid JSON: empty value")
	}
	switch c := s[0]; {
	case c == '{':
		return &jsonObject{src: s}
	case c == '[':
		return decodeList(s)
	case c == '"':
		str, err := unquoteJSON(s)
		if err != nil {
			return types.WrapErr(err)
		}
		return types.String(str)
	case s == "true":
		return types.True
	case s == "false":
		return types.False
	case s == "null":
		return types.NullValue
	case c == '-' || (c >= '0' && c <= '9'):
		return decodeNumber(s)
	}
	return types.NewErr("invalid JSON value starting with %q", s[0])
}

// decodeNumber returns an int when the literal is integral and fits, else a
// double.
func decodeNumber(s string) ref.Val {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return types.Int(i)
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return types.NewErr("invalid JSON number %q", s)
	}
	return types.Double(f)
}

// decodeList decodes a JSON array into a CEL list.
func decodeList(s string) ref.Val {
	var vals []ref.Val
	i := skipSpace(s, 1)
	if i < len(s) && s[i] == ']' {
		return types.NewRefValList(types.DefaultTypeAdapter, vals)
	}
	for i < len(s) {
		end, err := skipValue(s, i)
		if err != nil {
			return types.WrapErr(err)
		}
		v := decodeJSON(s[i:end])
		if types.IsError(v) {
			return v
		}
		vals = append(vals, v)
		i = skipSpace(s, end)
		if i >= len(s) {
			break
		}
		switch s[i] {
		case ',':
			i = skipSpace(s, i+1)
		case ']':
			return types.NewRefValList(types.DefaultTypeAdapter, vals)
		default:
			return types.NewErr("invalid JSON: expected , or ] at offset %d", i)
		}
	}
	return types.NewErr("invalid JSON: unterminated array")
}

// jsonMember is one member of a scanned object.
type jsonMember struct {
	key string  // decoded key
	raw string  // value text
	val ref.Val // decoded value, nil until first read
}

// jsonObject is a JSON object exposed to CEL as a map(string, dyn).
type jsonObject struct {
	src     string // the text from '{' to '}'
	scanned bool
	err     ref.Val // scan error, if any
	members []jsonMember
	inline  [4]jsonMember // storage for small objects: one allocation in all
}

// scan splits the object into members once.
func (o *jsonObject) scan() ref.Val {
	if o.scanned {
		return o.err
	}
	o.scanned = true
	o.members = o.inline[:0]
	s := o.src
	i := skipSpace(s, 1)
	if i < len(s) && s[i] == '}' {
		return nil
	}
	for i < len(s) {
		if s[i] != '"' {
			return o.fail("expected a member name at offset %d", i)
		}
		kend, err := skipString(s, i)
		if err != nil {
			return o.fail("%v", err)
		}
		key, err := unquoteJSON(s[i:kend])
		if err != nil {
			return o.fail("%v", err)
		}
		i = skipSpace(s, kend)
		if i >= len(s) || s[i] != ':' {
			return o.fail("expected : at offset %d", i)
		}
		i = skipSpace(s, i+1)
		vend, err := skipValue(s, i)
		if err != nil {
			return o.fail("%v", err)
		}
		o.members = append(o.members, jsonMember{key: key, raw: s[i:vend]})
		i = skipSpace(s, vend)
		if i >= len(s) {
			break
		}
		switch s[i] {
		case ',':
			i = skipSpace(s, i+1)
		case '}':
			return nil
		default:
			return o.fail("expected , or } at offset %d", i)
		}
	}
	return o.fail("unterminated object")
}

func (o *jsonObject) fail(format string, args ...any) ref.Val {
	o.err = types.NewErr("invalid JSON: "+format, args...)
	o.members = nil
	return o.err
}

// value decodes member i once.
func (o *jsonObject) value(i int) ref.Val {
	m := &o.members[i]
	if m.val == nil {
		m.val = decodeJSON(m.raw)
	}
	return m.val
}

// lookup finds key. It returns an error value when the object is malformed.
func (o *jsonObject) lookup(key string) (ref.Val, bool) {
	if err := o.scan(); err != nil {
		return err, true
	}
	for i := range o.members {
		if o.members[i].key == key {
			return o.value(i), true
		}
	}
	return nil, false
}

// FindStringKey is the fast path the CEL interpreter uses for field
// selection with a constant name (payload.tool_name).
func (o *jsonObject) FindStringKey(key string) (any, bool) {
	v, ok := o.lookup(key)
	return v, ok
}

// Find implements traits.Mapper.
func (o *jsonObject) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		return nil, false
	}
	return o.lookup(string(k))
}

// Get implements traits.Indexer.
func (o *jsonObject) Get(key ref.Val) ref.Val {
	v, ok := o.Find(key)
	if !ok {
		return types.NewErr("no such key: %v", key)
	}
	return v
}

// Contains implements traits.Container.
func (o *jsonObject) Contains(key ref.Val) ref.Val {
	v, ok := o.Find(key)
	if ok && types.IsError(v) {
		return v
	}
	return types.Bool(ok)
}

// Size implements traits.Sizer.
func (o *jsonObject) Size() ref.Val {
	if err := o.scan(); err != nil {
		return err
	}
	return types.Int(len(o.members))
}

// Iterator implements traits.Iterable: it yields the member names.
func (o *jsonObject) Iterator() traits.Iterator {
	if err := o.scan(); err != nil {
		return &keyIterator{}
	}
	return &keyIterator{o: o}
}

// ConvertToNative implements ref.Val for map[string]any and any targets.
func (o *jsonObject) ConvertToNative(t reflect.Type) (any, error) {
	switch t {
	case reflect.TypeFor[any](), reflect.TypeFor[map[string]any]():
		v, err := toNative(o, 0)
		if err != nil {
			return nil, err
		}
		return v, nil
	case reflect.TypeFor[json.RawMessage]():
		return json.RawMessage(o.src), nil
	}
	return nil, fmt.Errorf("policy: cannot convert a JSON object to %v", t)
}

// ConvertToType implements ref.Val.
func (o *jsonObject) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.MapType:
		return o
	case types.TypeType:
		return types.MapType
	}
	return types.NewErr("type conversion error from map to '%s'", t)
}

// Equal implements ref.Val with CEL map equality.
func (o *jsonObject) Equal(other ref.Val) ref.Val {
	m, ok := other.(traits.Mapper)
	if !ok {
		return types.False
	}
	if err := o.scan(); err != nil {
		return err
	}
	if m.Size() != types.Int(len(o.members)) {
		return types.False
	}
	for i := range o.members {
		ov, found := m.Find(types.String(o.members[i].key))
		if !found {
			return types.False
		}
		if eq := types.Equal(o.value(i), ov); eq != types.True {
			return eq
		}
	}
	return types.True
}

// Type implements ref.Val.
func (o *jsonObject) Type() ref.Type { return types.MapType }

// Value implements ref.Val.
func (o *jsonObject) Value() any { return o }

// keyIterator walks the member names of an object.
type keyIterator struct {
	o *jsonObject
	i int
}

func (it *keyIterator) HasNext() ref.Val {
	return types.Bool(it.o != nil && it.i < len(it.o.members))
}

func (it *keyIterator) Next() ref.Val {
	if it.o == nil || it.i >= len(it.o.members) {
		return nil
	}
	k := it.o.members[it.i].key
	it.i++
	return types.String(k)
}

func (it *keyIterator) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("policy: cannot convert an iterator to %v", t)
}
func (it *keyIterator) ConvertToType(ref.Type) ref.Val { return types.NewErr("iterator") }
func (it *keyIterator) Equal(ref.Val) ref.Val          { return types.False }
func (it *keyIterator) Type() ref.Type                 { return types.IteratorType }
func (it *keyIterator) Value() any                     { return nil }

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
		for j := i; j < len(s); {
			k := strings.IndexAny(s[j:], `"{}[]`)
			if k < 0 {
				break
			}
			j += k
			switch s[j] {
			case '"':
				end, err := skipString(s, j)
				if err != nil {
					return 0, err
				}
				j = end
				continue
			case '{', '[':
				depth++
			default:
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
			j++
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
