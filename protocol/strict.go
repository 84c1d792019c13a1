package protocol

import (
	"encoding/json"
	"fmt"
)

// requireKeys checks that b is a JSON object holding every key in required.
// Keys in nullable may also be absent (the 2.4 implementation writes null
// for them, and a reader must accept both).
func requireKeys(b []byte, path string, required []string, nullable map[string]bool) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return fmt.Errorf("%s: expected a JSON object", path)
	}
	for _, k := range required {
		if _, ok := m[k]; !ok && !nullable[k] {
			return fmt.Errorf("%s: missing field %s", path, k)
		}
	}
	return nil
}

// strictDecode checks the required keys of b and then decodes it into out,
// prefixing any error with path.
func strictDecode(b []byte, path string, required []string, out any) error {
	if err := requireKeys(b, path, required, nil); err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return prefixErr(path, err)
	}
	return nil
}

// pathError is a decoding error that already names where it happened.
type pathError struct{ msg string }

func (e *pathError) Error() string { return e.msg }

func prefixErr(path string, err error) error {
	if pe, ok := err.(*pathError); ok {
		return &pathError{msg: path + "." + pe.msg}
	}
	return &pathError{msg: path + ": " + err.Error()}
}

// decodeList decodes a JSON array element by element so that an error names
// the index of the bad item (e.g. "tasks[2]: missing field title").
func decodeList[T any](raw json.RawMessage, path string) ([]T, error) {
	if len(raw) == 0 || string(raw) == "null" {
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
