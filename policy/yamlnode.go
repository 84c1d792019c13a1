package policy

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ahp-go/ahp/internal/yamlline"
)

// Helpers that read yaml.v3 nodes so that every problem can name its line.

// parseYAML parses one YAML document and returns its top-level node, which
// must be a mapping. Syntax errors are reported with their line.
func parseYAML(name string, data []byte, ps *problems) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamlline.Syntax(data, err.Error())
		ps.add(name, line, "", "invalid YAML: %s", msg)
		return nil
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		ps.add(name, 0, "", "empty file")
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		ps.add(name, root.Line, "", "expected a mapping at the top level")
		return nil
	}
	return root
}

// mapping reads the keys of a mapping node, reporting unknown and duplicate
// keys. It returns the value nodes by key.
func mapping(name string, n *yaml.Node, ruleID string, ps *problems, known ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n == nil {
		return out
	}
	if n.Kind != yaml.MappingNode {
		ps.add(name, n.Line, ruleID, "expected a mapping")
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if !contains(known, k.Value) {
			ps.add(name, k.Line, ruleID, "unknown field %q (expected one of: %s)", k.Value, strings.Join(known, ", "))
			continue
		}
		if _, dup := out[k.Value]; dup {
			ps.add(name, k.Line, ruleID, "field %q given twice", k.Value)
			continue
		}
		out[k.Value] = v
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scalarString reads a scalar as text.
func scalarString(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", errors.New("expected a string")
	}
	return n.Value, nil
}

// scalarInt reads an integer scalar.
func scalarInt(n *yaml.Node) (int64, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, errors.New("expected an integer")
	}
	var v int64
	if err := n.Decode(&v); err != nil {
		return 0, fmt.Errorf("expected an integer: %w", err)
	}
	return v, nil
}

// stringList reads a sequence of strings, or a single string as a list of one.
func stringList(n *yaml.Node) ([]string, error) {
	if n.Kind == yaml.ScalarNode {
		s, err := scalarString(n)
		if err != nil {
			return nil, errors.New("expected a list of strings")
		}
		return []string{s}, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, errors.New("expected a list of strings")
	}
	out := make([]string, 0, len(n.Content))
	for _, e := range n.Content {
		s, err := scalarString(e)
		if err != nil {
			return nil, errors.New("expected a list of strings")
		}
		out = append(out, s)
	}
	return out, nil
}

// exprLine returns the file line of line l (1-based) of the text of n,
// which for block scalars (| and >) starts on the line after the key.
func exprLine(n *yaml.Node, l int) int {
	if l < 1 {
		l = 1
	}
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return n.Line + l
	}
	return n.Line + l - 1
}
