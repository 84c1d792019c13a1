package yamlline

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// Every input has its mistake on line 3 (line 4 for the last); yaml.v3
// names line 2 (3) for the first four.
func TestSyntax(t *testing.T) {
	for _, c := range []struct {
		in   string
		line int
	}{
		{"a:\n  b: 1\n  c: [x\n", 3},
		{"a:\n  b: 1\n\tc: x\n", 3},
		{"a:\n  b: 1\n  c: {d: 1\n", 3},
		{"a:\n  b: 1\n c: 2\n", 3},
		{"a:\n  b: 1\n  c: d: e\n", 3},
		{"a: 1\nb: 2\nc: @x\n", 3},
		{"a: 1\nb: 2\n  c: 3\n", 3},
		{"rules:\n  - id: a\n    condition: \"true\"\n    outcome: {decision: allow\n", 4},
	} {
		var v any
		err := yaml.Unmarshal([]byte(c.in), &v)
		if err == nil {
			t.Fatalf("%q parsed", c.in)
		}
		if line, msg := Syntax([]byte(c.in), err.Error()); line != c.line || msg == "" {
			t.Errorf("%q: line %d (%s), want %d", c.in, line, msg, c.line)
		}
	}
	if line, msg := Syntax(nil, "yaml: something else"); line != 0 || msg != "something else" {
		t.Errorf("no line: %d %q", line, msg)
	}
}
