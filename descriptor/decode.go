package descriptor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// decodeYAML parses exactly one YAML document and reads it as aioc's
// loader (js-yaml 4, default schema) does: see jsyaml.go for scalars.
// Aliases are expanded, merge keys ("<<") applied, scalar mapping keys
// become the strings JavaScript makes of them, and the explicit tags of the
// default schema (!!str, !!int, !!float, !!bool, !!null, !!timestamp,
// !!binary, !!map, !!seq, !!set, !!omap, !!pairs) are honoured; any other
// tag is refused.
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
		return y.sequence(n, depth)
	case yaml.MappingNode:
		switch tag := explicitTag(n); tag {
		case "", "!!map":
			return y.mapping(n, depth)
		case "!!set":
			obj, err := y.mapping(n, depth)
			if err != nil {
				return nil, err
			}
			for _, v := range obj {
				if v != nil {
					return nil, fmt.Errorf("line %d: cannot resolve a node with %s explicit tag", n.Line, yamlTag(tag))
				}
			}
			return obj, nil
		default:
			return nil, fmt.Errorf("line %d: unknown tag %s on a mapping", n.Line, yamlTag(tag))
		}
	case yaml.ScalarNode:
		v, err := jsScalar(n)
		if err != nil {
			return nil, err
		}
		if m, ok := v.(map[string]any); ok { // !!binary
			y.nodes += len(m)
		}
		return v, nil
	default:
		return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
	}
}

// sequence converts a sequence node, with the !!omap and !!pairs forms.
func (y *yamlTree) sequence(n *yaml.Node, depth int) (any, error) {
	tag := explicitTag(n)
	switch tag {
	case "", "!!seq", "!!omap", "!!pairs":
	default:
		return nil, fmt.Errorf("line %d: unknown tag %s on a sequence", n.Line, yamlTag(tag))
	}
	arr := make([]any, 0, len(n.Content))
	seen := map[string]bool{}
	for _, c := range n.Content {
		v, err := y.convert(c, depth+1)
		if err != nil {
			return nil, err
		}
		if tag == "!!omap" || tag == "!!pairs" {
			m, ok := v.(map[string]any)
			if !ok || len(m) != 1 {
				return nil, fmt.Errorf("line %d: cannot resolve a node with %s explicit tag", n.Line, yamlTag(tag))
			}
			for k, e := range m {
				if tag == "!!omap" {
					if seen[k] {
						return nil, fmt.Errorf("line %d: cannot resolve a node with %s explicit tag", n.Line, yamlTag(tag))
					}
					seen[k] = true
				} else {
					v = []any{k, e}
				}
			}
		}
		arr = append(arr, v)
	}
	return arr, nil
}

// mapping converts a mapping node. Explicit keys win over keys brought in
// by merge keys, whatever their order; among merged mappings, the first
// that has a key gives its value.
func (y *yamlTree) mapping(n *yaml.Node, depth int) (map[string]any, error) {
	obj := map[string]any{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.AliasNode {
			k = k.Alias
		}
		if k.Kind == yaml.ScalarNode && explicitTag(k) == "" && isPlain(k) && k.Value == "<<" {
			merges = append(merges, v)
			continue
		}
		key, err := mappingKey(k)
		if err != nil {
			return nil, err
		}
		if _, dup := obj[key]; dup {
			return nil, fmt.Errorf("line %d: duplicate key %q", k.Line, key)
		}
		val, err := y.convert(v, depth+1)
		if err != nil {
			return nil, err
		}
		obj[key] = val
	}
	for _, m := range merges {
		srcs := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode && explicitTag(m) == "" {
			srcs = m.Content
		}
		for _, s := range srcs {
			v, err := y.convert(s, depth+1)
			if err != nil {
				return nil, err
			}
			mm, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("line %d: cannot merge mappings; a merge key needs a mapping or a list of mappings", s.Line)
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

// mappingKey returns the property name js-yaml gives a mapping key: the
// String() of its scalar value. Timestamp keys are refused (their String()
// depends on the machine's time zone), and so are sequences and mappings
// used as keys.
func mappingKey(k *yaml.Node) (string, error) {
	if k.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("line %d: mapping keys must be scalars (complex keys are not supported)", k.Line)
	}
	tag := explicitTag(k)
	if tag == "!!timestamp" || (tag == "" && isPlain(k) && isImplicitTimestamp(k.Value)) {
		return "", fmt.Errorf("line %d: the key %s reads as a timestamp; quote it to use it as a string", k.Line, k.Value)
	}
	v, err := jsScalar(k)
	if err != nil {
		return "", err
	}
	s, ok := jsKeyString(v)
	if !ok {
		return "", fmt.Errorf("line %d: the key %q cannot be used as a mapping key", k.Line, k.Value)
	}
	return s, nil
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
