package descriptor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Format is the syntax of descriptor data.
type Format int

const (
	// FormatAuto picks JSON when the data starts with '{' (after any
	// whitespace) and YAML otherwise.
	FormatAuto Format = iota
	// FormatYAML is YAML 1.2 (one document).
	FormatYAML
	// FormatJSON is JSON (RFC 8259).
	FormatJSON
)

// String returns "auto", "yaml" or "json".
func (f Format) String() string {
	switch f {
	case FormatYAML:
		return "yaml"
	case FormatJSON:
		return "json"
	default:
		return "auto"
	}
}

// FormatForPath guesses a descriptor's format from its file name: ".json"
// is JSON, ".yaml" and ".yml" are YAML, anything else is FormatAuto.
func FormatForPath(path string) Format {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return FormatJSON
	case ".yaml", ".yml":
		return FormatYAML
	default:
		return FormatAuto
	}
}

const (
	// maxDepth bounds the nesting of objects and arrays in a descriptor.
	maxDepth = 64
	// maxNodes bounds the number of values a descriptor expands to, YAML
	// aliases included, so that a small file cannot explode in memory.
	maxNodes = 1 << 20
)

// decodeTree parses data into the JSON data model (see normalizeValue).
// The top-level value must be an object.
func decodeTree(data []byte, format Format) (map[string]any, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if format == FormatAuto {
		format = FormatYAML
		if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
			format = FormatJSON
		}
	}
	var (
		v   any
		err error
	)
	switch format {
	case FormatJSON:
		v, err = decodeJSON(data)
	case FormatYAML:
		v, err = decodeYAML(data)
	default:
		return nil, fmt.Errorf("unknown format %d", format)
	}
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the descriptor must be an object (mapping), not %s", kindOf(v))
	}
	return m, nil
}

// decodeJSON parses one JSON value, refusing duplicate object keys and
// trailing data.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	j := &jsonTree{dec: dec}
	v, err := j.value(0)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: unexpected data after the top-level value")
	}
	return v, nil
}

// jsonTree builds a generic value from a json.Decoder's token stream.
type jsonTree struct {
	dec   *json.Decoder
	nodes int
}

func (j *jsonTree) value(depth int) (any, error) {
	tok, err := j.dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return j.fromToken(tok, depth)
}

func (j *jsonTree) fromToken(tok json.Token, depth int) (any, error) {
	j.nodes++
	if j.nodes > maxNodes {
		return nil, fmt.Errorf("more than %d values", maxNodes)
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxDepth {
			return nil, fmt.Errorf("nesting deeper than %d levels", maxDepth)
		}
		switch t {
		case '{':
			obj := map[string]any{}
			for j.dec.More() {
				kt, err := j.dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				if _, dup := obj[key]; dup {
					return nil, fmt.Errorf("duplicate object key %q", key)
				}
				v, err := j.value(depth + 1)
				if err != nil {
					return nil, err
				}
				obj[key] = v
			}
			if _, err := j.dec.Token(); err != nil { // '}'
				return nil, err
			}
			return obj, nil
		case '[':
			arr := []any{}
			for j.dec.More() {
				v, err := j.value(depth + 1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := j.dec.Token(); err != nil { // ']'
				return nil, err
			}
			return arr, nil
		default:
			return nil, fmt.Errorf("unexpected %q", rune(t))
		}
	case json.Number:
		return normalizeValue(t)
	case string, bool, nil:
		return t, nil
	default:
		return nil, fmt.Errorf("unexpected token %v", tok)
	}
}

// decodeYAML parses exactly one YAML document. Scalars keep their YAML 1.2
// core-schema meaning (null, booleans, numbers, strings); timestamps stay the
// literal text so that YAML and JSON spellings of a descriptor agree.
// Mapping keys must be strings; merge keys ("<<") are honoured.
func decodeYAML(data []byte) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, errors.New("the descriptor is empty")
		}
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		if err != nil {
			return nil, fmt.Errorf("invalid YAML: %w", err)
		}
		return nil, errors.New("invalid YAML: more than one document")
	}
	y := &yamlTree{}
	return y.convert(&doc, 0)
}

// yamlTree converts a yaml.Node tree, counting expanded values.
type yamlTree struct {
	nodes int
}

func (y *yamlTree) convert(n *yaml.Node, depth int) (any, error) {
	y.nodes++
	if y.nodes > maxNodes {
		return nil, fmt.Errorf("YAML expands to more than %d values", maxNodes)
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("line %d: nesting deeper than %d levels", n.Line, maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, errors.New("the descriptor is empty")
		}
		return y.convert(n.Content[0], depth)
	case yaml.AliasNode:
		return y.convert(n.Alias, depth)
	case yaml.SequenceNode:
		arr := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := y.convert(c, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		return arr, nil
	case yaml.MappingNode:
		return y.mapping(n, depth)
	case yaml.ScalarNode:
		return scalar(n)
	default:
		return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
	}
}

// mapping converts a mapping node. Explicit keys win over keys brought in by
// merge keys, whatever their order.
func (y *yamlTree) mapping(n *yaml.Node, depth int) (map[string]any, error) {
	obj := map[string]any{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.AliasNode {
			k = k.Alias
		}
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			return nil, fmt.Errorf("line %d: mapping keys must be strings (quote %q if it is meant as one)", k.Line, k.Value)
		}
		if _, dup := obj[k.Value]; dup {
			return nil, fmt.Errorf("line %d: duplicate key %q", k.Line, k.Value)
		}
		val, err := y.convert(v, depth+1)
		if err != nil {
			return nil, err
		}
		obj[k.Value] = val
	}
	for _, m := range merges {
		srcs := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			srcs = m.Content
		}
		for _, s := range srcs {
			v, err := y.convert(s, depth+1)
			if err != nil {
				return nil, err
			}
			mm, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("line %d: a merge key needs a mapping or a list of mappings", s.Line)
			}
			for k, e := range mm {
				if _, set := obj[k]; !set {
					obj[k] = e
				}
			}
		}
	}
	return obj, nil
}

// scalar converts a scalar node according to its resolved tag.
func scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!str", "!!timestamp":
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return b, nil
	case "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		f, err := normalizeValue(v)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		if x, ok := f.(float64); !ok || math.IsNaN(x) {
			return nil, fmt.Errorf("line %d: %q is not a finite number", n.Line, n.Value)
		}
		return f, nil
	default:
		return nil, fmt.Errorf("line %d: unsupported YAML tag %s", n.Line, n.ShortTag())
	}
}

// kindOf names the JSON kind of a normalized value, for messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}
