package policy

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// maxDepth bounds the nesting of values converted between CEL, Go and JSON.
const maxDepth = 256

var errTooDeep = fmt.Errorf("value nested deeper than %d levels", maxDepth)

// appendJSON appends the JSON encoding of a CEL value to b. An unread or
// unchanged JSON object is copied through as it came in.
func appendJSON(b []byte, v ref.Val, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	switch x := v.(type) {
	case *jsonObject:
		if err := x.scan(); err != nil {
			return nil, fmt.Errorf("%v", err)
		}
		return append(b, x.src...), nil
	case types.String:
		return appendString(b, string(x)), nil
	case types.Bool:
		return strconv.AppendBool(b, bool(x)), nil
	case types.Int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case types.Uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case types.Double:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("cannot encode %v as JSON", f)
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64), nil
	case types.Null:
		return append(b, "null"...), nil
	case types.Timestamp:
		return appendString(b, x.Time.UTC().Format(time.RFC3339Nano)), nil
	case types.Duration:
		return appendString(b, strconv.FormatFloat(x.Duration.Seconds(), 'f', -1, 64)+"s"), nil
	case *types.Optional:
		if !x.HasValue() {
			return append(b, "null"...), nil
		}
		return appendJSON(b, x.GetValue(), depth+1)
	case *types.Err:
		return nil, x
	case structValue:
		m, err := x.asMap(depth)
		if err != nil {
			return nil, err
		}
		mv, err := nativeToVal(m, depth)
		if err != nil {
			return nil, err
		}
		return appendJSON(b, mv, depth+1)
	case traits.Mapper:
		return appendMap(b, x, depth)
	case traits.Lister:
		b = append(b, '[')
		n, _ := x.Size().(types.Int)
		for i := types.Int(0); i < n; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, x.Get(i), depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	return nil, fmt.Errorf("cannot encode a CEL %s value as JSON", v.Type().TypeName())
}

// appendMap writes a CEL map with string keys, keys in sorted order so that
// the output is stable.
func appendMap(b []byte, m traits.Mapper, depth int) ([]byte, error) {
	var keys []string
	it := m.Iterator()
	for it.HasNext() == types.True {
		k, ok := it.Next().(types.String)
		if !ok {
			return nil, fmt.Errorf("cannot encode a map with non-string keys as JSON")
		}
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendJSON(b, m.Get(types.String(k)), depth+1); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

// toNative converts a CEL value into plain Go values (map[string]any,
// []any, string, int64, uint64, float64, bool, nil).
func toNative(v ref.Val, depth int) (any, error) { return toNativeIn(v, depth, nil) }

// toNativeIn is toNative taking the maps of JSON objects from maps (nil:
// new maps).
func toNativeIn(v ref.Val, depth int, maps *nativeMaps) (any, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	switch x := v.(type) {
	case *jsonObject:
		if err := x.scan(); err != nil {
			return nil, fmt.Errorf("%v", err)
		}
		out := maps.get(len(x.members))
		for i := range x.members {
			n, err := toNativeIn(x.value(i), depth+1, maps)
			if err != nil {
				return nil, err
			}
			out[x.members[i].key] = n
		}
		return out, nil
	case types.String:
		return string(x), nil
	case types.Bool:
		return bool(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		return uint64(x), nil
	case types.Double:
		return float64(x), nil
	case types.Null:
		return nil, nil
	case *types.Err:
		return nil, x
	case structValue:
		return x.asMap(depth)
	case traits.Mapper:
		out := map[string]any{}
		it := x.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("map key %v is not a string", k)
			}
			n, err := toNative(x.Get(k), depth+1)
			if err != nil {
				return nil, err
			}
			out[string(ks)] = n
		}
		return out, nil
	case traits.Lister:
		size, _ := x.Size().(types.Int)
		out := make([]any, 0, int(size))
		for i := types.Int(0); i < size; i++ {
			n, err := toNativeIn(x.Get(i), depth+1, maps)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	}
	return v.Value(), nil
}

// nativeMaps lends the maps toNativeIn builds for JSON objects and takes
// them back, emptied, once their reader is done with them (recycle): the
// effect analysis reads every event's payload as plain maps, and an
// evaluation context keeps a few for the next event instead of making
// them anew. A nil *nativeMaps makes new maps.
type nativeMaps struct {
	free []map[string]any // emptied, ready to lend
	lent []map[string]any // lent since the last recycle
}

// Bounds on what nativeMaps keeps: maps of a few keys (a cleared map
// keeps its room, so a large one is let go), a few of them.
const (
	maxKeptMaps   = 8
	maxKeptMapLen = 16
)

// get returns an empty map for n keys.
func (p *nativeMaps) get(n int) map[string]any {
	if p == nil {
		return make(map[string]any, n)
	}
	var m map[string]any
	if k := len(p.free); k > 0 && n <= maxKeptMapLen {
		m = p.free[k-1]
		p.free[k-1] = nil
		p.free = p.free[:k-1]
	} else {
		m = make(map[string]any, n)
	}
	p.lent = append(p.lent, m)
	return m
}

// recycle takes back every map lent since the last call, emptied. The
// caller must hold none of them (nor any reader it gave them to).
func (p *nativeMaps) recycle() {
	if p == nil {
		return
	}
	for _, m := range p.lent {
		if len(m) <= maxKeptMapLen && len(p.free) < maxKeptMaps {
			clear(m)
			p.free = append(p.free, m)
		}
	}
	clear(p.lent)
	p.lent = p.lent[:0]
}

// nativeToVal converts decoded YAML or JSON values into immutable CEL values
// that may be shared by concurrent evaluations.
func nativeToVal(v any, depth int) (ref.Val, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	switch x := v.(type) {
	case nil:
		return types.NullValue, nil
	case string:
		return types.String(x), nil
	case bool:
		return types.Bool(x), nil
	case int:
		return types.Int(x), nil
	case int64:
		return types.Int(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return types.Uint(x), nil
		}
		return types.Int(int64(x)), nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return types.Int(int64(x)), nil
		}
		return types.Double(x), nil
	case []string:
		return types.NewStringList(types.DefaultTypeAdapter, x), nil
	case []any:
		vals := make([]ref.Val, len(x))
		for i, e := range x {
			ev, err := nativeToVal(e, depth+1)
			if err != nil {
				return nil, err
			}
			vals[i] = ev
		}
		return types.NewRefValList(types.DefaultTypeAdapter, vals), nil
	case map[string]any:
		m := make(map[ref.Val]ref.Val, len(x))
		for k, e := range x {
			ev, err := nativeToVal(e, depth+1)
			if err != nil {
				return nil, err
			}
			m[types.String(k)] = ev
		}
		return types.NewRefValMap(types.DefaultTypeAdapter, m), nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32:
		return types.Int(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return types.Int(int64(rv.Uint())), nil
	case reflect.Float32:
		return nativeToVal(rv.Float(), depth)
	}
	return nil, fmt.Errorf("unsupported value of type %T", v)
}
