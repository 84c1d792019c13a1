package protocol

import (
	"encoding/json"
	"fmt"
)

// members parses b as a JSON object and returns its members.
func members(b []byte, path string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%s: expected a JSON object", path)
	}
	return m, nil
}

// checkMembers checks that every key in required is in m with a value other
// than null, and that every key in present is in m (null allowed: those are
// fields of type "any JSON"). Fields the spec calls null-able are listed in
// neither: a reader accepts them absent or null.
func checkMembers(m map[string]json.RawMessage, path string, required, present []string) error {
	for _, k := range required {
		v, ok := m[k]
		if !ok {
			return fmt.Errorf("%s: missing field %s", path, k)
		}
		if isNull(v) {
			return fmt.Errorf("%s: field %s must not be null", path, k)
		}
	}
	for _, k := range present {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("%s: missing field %s", path, k)
		}
	}
	return nil
}

// isNull reports whether a raw member value is the literal null. Member
// values handed out by encoding/json carry no surrounding space.
func isNull(v json.RawMessage) bool { return string(v) == "null" }

// requireKeys checks that b is a JSON object holding every key in required
// (not null) and every key in present (any value).
func requireKeys(b []byte, path string, required, present []string) error {
	m, err := members(b, path)
	if err != nil {
		return err
	}
	return checkMembers(m, path, required, present)
}

// strictDecode checks the required keys of b and then decodes it into out,
// prefixing any error with path.
func strictDecode(b []byte, path string, required []string, out any) error {
	return decodeObject(b, path, required, nil, out)
}

// decodeObject is strictDecode with keys that must be present but may hold
// null (fields of type "any JSON").
func decodeObject(b []byte, path string, required, present []string, out any) error {
	if err := requireKeys(b, path, required, present); err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return prefixErr(path, err)
	}
	return nil
}

// pathError is a decoding error that already names where it happened. It
// keeps the underlying error for errors.Is and errors.As.
type pathError struct {
	msg string
	err error
}

func (e *pathError) Error() string { return e.msg }

func (e *pathError) Unwrap() error { return e.err }

func prefixErr(path string, err error) error {
	if pe, ok := err.(*pathError); ok {
		return &pathError{msg: path + "." + pe.msg, err: pe.err}
	}
	return &pathError{msg: path + ": " + err.Error(), err: err}
}

// decodeList decodes a JSON array element by element so that an error names
// the index of the bad item (e.g. "tasks[2]: missing field title").
func decodeList[T any](raw json.RawMessage, path string) ([]T, error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%s: expected an array", path)
	}
	out := make([]T, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it, &out[i]); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", path, i, err)
		}
	}
	return out, nil
}

// emptyIfNil returns s, or an empty non-nil slice when s is nil, so that a
// required array encodes as [] rather than null.
func emptyIfNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
