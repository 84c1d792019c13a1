package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// canonicalSource returns the canonical form of a policy source for the
// policy version: its YAML document as JSON with the keys of every mapping
// sorted. Comments, spacing, quoting style, block or flow style, anchors
// and the order of a mapping's keys do not change it; the order of lists
// (rules, guidance) does, as it decides ties. A source that does not parse
// is returned as it is (it fails to compile anyway).
func canonicalSource(data []byte) []byte {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return data
	}
	var b bytes.Buffer
	writeCanonical(&b, v, 0)
	return b.Bytes()
}

// maxCanonicalDepth bounds the nesting canonicalSource follows (a source is
// at most maxSourceSize bytes, but aliases can nest deeply).
const maxCanonicalDepth = 200

// writeCanonical appends the canonical JSON of a decoded YAML value.
func writeCanonical(b *bytes.Buffer, v any, depth int) {
	if depth > maxCanonicalDepth {
		b.WriteString(`"…"`)
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		writeJSON(b, x)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			writeJSON(b, "!!float "+strconv.FormatFloat(x, 'g', -1, 64))
			return
		}
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			b.WriteString(strconv.FormatInt(int64(x), 10)) // 1.0 reads as 1
			return
		}
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case time.Time:
		writeJSON(b, x.UTC().Format(time.RFC3339Nano))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e, depth+1)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, k)
			b.WriteByte(':')
			writeCanonical(b, x[k], depth+1)
		}
		b.WriteByte('}')
	case map[any]any:
		// Keys that are not all strings: each key by its canonical form.
		type kv struct {
			key string
			val any
		}
		entries := make([]kv, 0, len(x))
		for k, e := range x {
			var kb bytes.Buffer
			writeCanonical(&kb, k, depth+1)
			entries = append(entries, kv{kb.String(), e})
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].key < entries[j].key })
		b.WriteByte('{')
		for i, e := range entries {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e.key)
			b.WriteByte(':')
			writeCanonical(b, e.val, depth+1)
		}
		b.WriteByte('}')
	default:
		writeJSON(b, fmt.Sprintf("%s %v", reflect.TypeOf(v), v))
	}
}

// writeJSON appends s as a JSON string.
func writeJSON(b *bytes.Buffer, s string) {
	out, _ := json.Marshal(s) // a string always encodes
	b.Write(out)
}

// joinInstance returns params with the harness's own parameters added
// (see Options.Instance): a parameter only in instance is taken as it is;
// a list in both is joined, instance's items first; otherwise params wins.
func joinInstance(instance, params map[string]any) map[string]any {
	if len(instance) == 0 {
		return params
	}
	out := make(map[string]any, len(params)+len(instance))
	for k, v := range params {
		out[k] = v
	}
	for k, mine := range instance {
		theirs, ok := out[k]
		if !ok || theirs == nil {
			out[k] = mine
			continue
		}
		a, aok := anyList(mine)
		b, bok := anyList(theirs)
		if aok && bok {
			out[k] = append(a, b...)
		}
	}
	return out
}

// anyList returns a slice value as []any (a fresh slice), and false for
// anything else.
func anyList(v any) ([]any, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

// packNames returns the names of packs, in order.
func packNames(packs []*Pack) []string {
	out := make([]string, len(packs))
	for i, p := range packs {
		out[i] = p.Name
	}
	return out
}
