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

// marshalTagged writes {"decision":kind, fields...} in the given order, with
// no HTML escaping in strings (the 2.4 implementation writes <, > and & as
// they are).
func marshalTagged(kind string, fields ...field) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	buf.WriteString(`{"decision":`)
	_ = enc.Encode(kind) // a string always encodes
	buf.Truncate(buf.Len() - 1)
	for _, f := range fields {
		if f.omit {
			continue
		}
		buf.WriteString(`,"`)
		buf.WriteString(f.name)
		buf.WriteString(`":`)
		if err := enc.Encode(f.val); err != nil {
			return nil, fmt.Errorf("%s decision: %s: %w", kind, f.name, err)
		}
		buf.Truncate(buf.Len() - 1) // the newline Encode adds
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// errUnknownKind is returned when a typed decision to be encoded names no
// variant of its type. The zero value is such a decision: it never encodes
// as an implicit allow.
func errUnknownKind(name, kind string) error {
	return fmt.Errorf("%s decision: unknown kind %.64q", name, kind)
}

// variants maps each decision tag of a typed decision to the keys it
// requires (present and not null).
type variants map[string][]string

// decodeTagged reads the "decision" tag of b, checks that it names a known
// variant and that every key the variant requires is present and not null
// (null-able keys are not listed), then decodes b into out.
func decodeTagged(name string, b []byte, vs variants, out any) (string, error) {
	keys, err := members(b, name)
	if err != nil {
		return "", err
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
		return "", fmt.Errorf("%s: unknown variant %.64q", name, kind)
	}
	if err := checkMembers(keys, name+" "+kind, req, nil); err != nil {
		return "", err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return "", fmt.Errorf("%s %s: %w", name, kind, err)
	}
	return kind, nil
}
