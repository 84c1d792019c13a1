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
func decodeJSON(src string) ref.Val { return decodeValue(src, 0, nil) }

// decodeValue decodes one value; depth counts the lists it is nested in
// (objects are decoded lazily, so only lists recurse). Objects come from
// arena when it has room.
func decodeValue(src string, depth int, arena *objArena) ref.Val {
	s := trimSpace(src)
	if s == "" {
		return types.NewErr("invalid JSON: empty value")
	}
	switch c := s[0]; {
	case c == '{':
		return arena.newObject(s)
	case c == '[':
		if depth >= maxDepth {
			return types.WrapErr(errTooDeep)
		}
		return decodeList(s, depth, arena)
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
func decodeList(s string, depth int, arena *objArena) ref.Val {
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
		v := decodeValue(s[i:end], depth+1, arena)
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
	arena   *objArena
	scanned bool
	folds   bool       // a member name has an upper case or non-ASCII letter
	secrets SecretScan // what has_secret or secret_kinds found in it, if they ran
	sp      *spAction  // what the self_protection functions read from it, if they ran
	// ev is the evaluation whose event payload this object is (nil for
	// any other object): functions given the payload read the
	// evaluation's event.effects through it.
	ev      *evalCtx
	err     ref.Val // scan error, if any
	members []jsonMember
	inline  [4]jsonMember // storage for small objects: one allocation in all
}

// objArena holds the first objects decoded during one evaluation, so that
// a typical payload (an object with an arguments object) costs no
// allocation for them. It lives in the pooled evaluation context and is
// cleared when the evaluation ends; nothing decoded may outlive it.
type objArena struct {
	objs [3]jsonObject
	n    int
}

// newObject returns an unscanned object for src, from the arena if it has
// room (a nil arena has none).
func (a *objArena) newObject(src string) *jsonObject {
	if a != nil && a.n < len(a.objs) {
		o := &a.objs[a.n]
		a.n++
		o.src, o.arena = src, a
		return o
	}
	return &jsonObject{src: src, arena: a}
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
		o.folds = o.folds || mayFold(key)
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
		m.val = decodeValue(m.raw, 0, o.arena)
	}
	return m.val
}

// lookup finds key: the member of that exact name or, when there is none,
// the member whose name equals it when letter case is ignored. Go's
// encoding/json reads a member so into a struct field, as Go agents and
// tools read their arguments ({"Command": "rm -rf /"} runs as command), so
// the policy judges it as that field too. Objects with two such names are
// refused before any policy runs (internal/jsonscan), so at most one
// member matches. It returns an error value when the object is malformed.
func (o *jsonObject) lookup(key string) (ref.Val, bool) {
	if err := o.scan(); err != nil {
		return err, true
	}
	for i := range o.members {
		if o.members[i].key == key {
			return o.value(i), true
		}
	}
	if o.folds || mayFold(key) {
		for i := range o.members {
			if strings.EqualFold(o.members[i].key, key) {
				return o.value(i), true
			}
		}
	}
	return nil, false
}

// mayFold reports whether name could equal another name when letter case
// is ignored without being equal to it: it has an upper case ASCII letter
// or a non-ASCII byte (the Kelvin sign folds to k, the long s to s).
// Two names that may not fold are equal when case is ignored only if
// they are equal, so lookup compares folded names only when the name it
// looks for or one of the object's may fold.
func mayFold(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; ('A' <= c && c <= 'Z') || c >= 0x80 {
			return true
		}
	}
	return false
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
