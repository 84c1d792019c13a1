package policy

import (
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/ahp-go/ahp/protocol"
)

// TestFile is a parsed policy test file: cases (an event in, the expected
// decision out) and optional options that the policies are compiled with for
// this file.
type TestFile struct {
	Name  string
	Cases []TestCase

	packs      map[string]bool
	packsExact bool // packs lists exactly the packs to enable
	params     map[string]any
	def        protocol.DecisionKind
}

// TestCase is one case of a test file.
type TestCase struct {
	Name   string
	File   string
	Line   int
	Input  Input
	Expect Expectation
}

// Expectation is what a case expects. Empty fields are not checked.
type Expectation struct {
	Decision         protocol.DecisionKind
	Rule             string
	Matched          *bool
	ReasonContains   string
	ModifiedPayload  any // compared as JSON values
	RetryAfterMs     *uint64
	EscalationTarget string
	Approval         *ApprovalSpec
	// Guidance lists the ids of the guidance entries expected to match a
	// planning or reasoning event, in order; an empty list expects none.
	Guidance *[]string
}

// IsTestFile reports whether src looks like a policy test file (it has a
// top-level "cases" key) rather than a policy.
func IsTestFile(src Source) bool {
	var top map[string]yaml.Node
	if err := yaml.Unmarshal(src.Data, &top); err != nil {
		return false
	}
	_, ok := top["cases"]
	return ok
}

// ParseTestFile reads a policy test file. Problems are reported as a
// *LoadError with lines.
func ParseTestFile(src Source) (*TestFile, error) {
	ps := &problems{}
	root := parseYAML(src.Name, src.Data, ps)
	if root == nil {
		return nil, ps.err()
	}
	tf := &TestFile{Name: src.Name}
	f := mapping(src.Name, root, "", ps, "description", "options", "cases")
	if v := f["options"]; v != nil {
		tf.parseOptions(v, ps)
	}
	cases := f["cases"]
	switch {
	case cases == nil:
		ps.add(src.Name, root.Line, "", "no cases: a test file needs a top-level \"cases\" list")
	case cases.Kind != yaml.SequenceNode:
		ps.add(src.Name, cases.Line, "", "cases: expected a list")
	default:
		for i, n := range cases.Content {
			if c := parseCase(src.Name, i, n, ps); c != nil {
				tf.Cases = append(tf.Cases, *c)
			}
		}
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return tf, nil
}

func (tf *TestFile) parseOptions(n *yaml.Node, ps *problems) {
	f := mapping(tf.Name, n, "", ps, "packs", "params", "default")
	if v := f["packs"]; v != nil {
		tf.packs = map[string]bool{}
		if v.Kind == yaml.SequenceNode {
			names, err := stringList(v)
			if err != nil {
				ps.add(tf.Name, v.Line, "", "options.packs: %v", err)
			}
			tf.packsExact = true
			for _, name := range names {
				tf.packs[name] = true
			}
		} else if err := v.Decode(&tf.packs); err != nil {
			ps.add(tf.Name, v.Line, "", "options.packs: expected a list of pack names or a map of name: true/false")
		}
	}
	if v := f["params"]; v != nil {
		if err := v.Decode(&tf.params); err != nil {
			ps.add(tf.Name, v.Line, "", "options.params: expected a mapping")
		}
	}
	if v := f["default"]; v != nil {
		tf.def = protocol.DecisionKind(v.Value)
	}
}

// Options returns base with the file's own options applied.
func (tf *TestFile) Options(base Options) Options {
	out := base
	if tf.packs != nil {
		out.Packs = map[string]bool{}
		if tf.packsExact {
			for _, name := range PackNames() {
				out.Packs[name] = false
			}
		} else {
			for k, v := range base.Packs {
				out.Packs[k] = v
			}
		}
		for k, v := range tf.packs {
			out.Packs[k] = v
		}
	}
	if tf.params != nil {
		out.Params = map[string]any{}
		for k, v := range base.Params {
			out.Params[k] = v
		}
		for k, v := range tf.params {
			out.Params[k] = v
		}
	}
	if tf.def != "" {
		out.Default = tf.def
	}
	return out
}

func parseCase(file string, i int, n *yaml.Node, ps *problems) *TestCase {
	c := &TestCase{File: file, Line: n.Line, Name: fmt.Sprintf("case %d", i+1)}
	f := mapping(file, n, "", ps, "name", "event", "principal", "session", "transport", "expect")
	if v := f["name"]; v != nil {
		c.Name = v.Value
	}
	before := len(ps.list)
	bad := func(v *yaml.Node, format string, args ...any) {
		ps.add(file, v.Line, "", "%s: %s", c.Name, fmt.Sprintf(format, args...))
	}
	if v := f["event"]; v == nil {
		ps.add(file, n.Line, "", "%s: missing event", c.Name)
	} else if ev, err := caseEvent(v); err != nil {
		bad(v, "event: %v", err)
	} else {
		c.Input.Event = ev
	}
	if v := f["principal"]; v != nil {
		if err := v.Decode(&c.Input.Principal); err != nil {
			bad(v, "principal: expected {id, roles}")
		}
	}
	if v := f["session"]; v != nil {
		if err := v.Decode(&c.Input.Session); err != nil {
			bad(v, "session: expected {actions, tokens, errors, recent_tools, run_status}")
		}
	}
	if v := f["transport"]; v != nil {
		c.Input.Transport = v.Value
	}
	if v := f["expect"]; v == nil {
		ps.add(file, n.Line, "", "%s: missing expect", c.Name)
	} else {
		c.Expect = parseExpect(file, c.Name, v, ps)
	}
	if len(ps.list) > before {
		return nil
	}
	return c
}

// caseEvent builds an event from its YAML form, filling the envelope
// fields a test does not care about.
func caseEvent(n *yaml.Node) (*protocol.Event, error) {
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		return nil, fmt.Errorf("expected a mapping")
	}
	defaults := map[string]any{
		"session_id": "test-session", "agent_id": "test-agent",
		"timestamp": "2026-01-01T00:00:00Z", "depth": 0, "payload": map[string]any{},
	}
	for k, v := range defaults {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var ev protocol.Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return nil, err
	}
	if err := ev.Validate(); err != nil {
		return nil, err
	}
	return &ev, nil
}

func parseExpect(file, name string, n *yaml.Node, ps *problems) Expectation {
	var e Expectation
	f := mapping(file, n, "", ps, "decision", "rule", "matched", "reason_contains", "modified_payload",
		"retry_after_ms", "escalation_target", "approval", "guidance")
	bad := func(v *yaml.Node, format string, args ...any) {
		ps.add(file, v.Line, "", "%s: expect.%s", name, fmt.Sprintf(format, args...))
	}
	if v := f["decision"]; v == nil {
		ps.add(file, n.Line, "", "%s: expect: missing decision", name)
	} else if _, ok := outcomeFields[protocol.DecisionKind(v.Value)]; !ok {
		bad(v, "decision: unknown decision %q", v.Value)
	} else {
		e.Decision = protocol.DecisionKind(v.Value)
	}
	if v := f["rule"]; v != nil {
		e.Rule = v.Value
	}
	if v := f["guidance"]; v != nil {
		ids, err := stringList(v)
		if err != nil {
			bad(v, "guidance: expected a list of guidance ids")
		}
		if ids == nil {
			ids = []string{}
		}
		e.Guidance = &ids
	}
	if v := f["matched"]; v != nil {
		var b bool
		if err := v.Decode(&b); err != nil {
			bad(v, "matched: expected true or false")
		}
		e.Matched = &b
	}
	if v := f["reason_contains"]; v != nil {
		e.ReasonContains = v.Value
	}
	if v := f["modified_payload"]; v != nil {
		var mp any
		if err := v.Decode(&mp); err != nil {
			bad(v, "modified_payload: %v", err)
		}
		e.ModifiedPayload = jsonValue(mp)
	}
	if v := f["retry_after_ms"]; v != nil {
		ms, err := scalarInt(v)
		if err != nil || ms < 0 {
			bad(v, "retry_after_ms: expected a non-negative integer")
		}
		u := uint64(ms)
		e.RetryAfterMs = &u
	}
	if v := f["escalation_target"]; v != nil {
		e.EscalationTarget = v.Value
	}
	if v := f["approval"]; v != nil {
		e.Approval = parseApproval(file, "", v, ps)
	}
	return e
}

// jsonValue normalizes a decoded YAML value to what encoding/json would
// decode from its JSON text, so that the two compare equal.
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}
