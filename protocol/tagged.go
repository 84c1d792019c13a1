package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// field is one member of a tagged object being encoded.
type field struct {
	name string
	val  any
	omit bool // leave the key out (an absent optional field)
}

// marshalTagged writes {"decision":kind, fields...} in the given order.
func marshalTagged(kind string, fields ...field) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"decision":`)
	k, _ := json.Marshal(kind)
	buf.Write(k)
	for _, f := range fields {
		if f.omit {
			continue
		}
		v, err := json.Marshal(f.val)
		if err != nil {
			return nil, fmt.Errorf("%s decision: %s: %w", kind, f.name, err)
		}
		buf.WriteString(`,"`)
		buf.WriteString(f.name)
		buf.WriteString(`":`)
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// variants maps each decision tag of a typed decision to the keys it requires.
type variants map[string][]string

// decodeTagged reads the "decision" tag of b, checks that it names a known
// variant and that every key the variant requires is present (null counts as
// present only where the spec says null-able, which callers handle by listing
// such keys as required and decoding into pointers), then decodes b into out.
func decodeTagged(name string, b []byte, vs variants, out any) (string, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	rawKind, ok := keys["decision"]
	if !ok {
		return "", fmt.Errorf("%s: missing field decision", name)
	}
	var kind string
	if err := json.Unmarshal(rawKind, &kind); err != nil {
		return "", fmt.Errorf("%s: decision: %w", name, err)
	}
	req, ok := vs[kind]
	if !ok {
		return "", fmt.Errorf("%s: unknown variant %q", name, kind)
	}
	for _, k := range req {
		if _, ok := keys[k]; !ok {
			return "", fmt.Errorf("%s %s: missing field %s", name, kind, k)
		}
	}
	if err := json.Unmarshal(b, out); err != nil {
		return "", fmt.Errorf("%s %s: %w", name, kind, err)
	}
	return kind, nil
}
