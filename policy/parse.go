package policy

import (
	"math"
	"regexp"
	"time"

	"cel.dev/cel-go/cel"
	"go.yaml.in/yaml/v3"

	"github.com/ahp-go/ahp/protocol"
)

// ruleSpec is a rule as written, before its CEL is compiled.
type ruleSpec struct {
	condAST     *cel.Ast // the checked condition, set when it is compiled
	file        string
	line        int
	lines       []string // the source text, by line
	pack        string
	order       int // position in load order, for stable tie-breaking
	id          string
	description string
	priority    int64
	eventTypes  []protocol.EventType
	tools       []string
	agents      []string
	depthMin    uint32
	depthMax    uint32
	condition   *yaml.Node
	outcome     outcomeSpec
	shadow      bool // mode: shadow
	private     bool // private: true hides the condition from ahp/query "rules"
}

// outcomeSpec is the outcome of a rule as written.
type outcomeSpec struct {
	line     int
	kind     protocol.DecisionKind
	reason   string
	modified *yaml.Node // CEL expression computing the modified payload
	retry    uint64
	target   string
	approval *ApprovalSpec
}

var ruleIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`)

// policyFields are the top-level keys of a policy file; packs add theirs.
var policyFields = []string{"description", "rules", "guidance"}

// parseRules reads the rules of one parsed file.
func parseRules(name, pack string, rules *yaml.Node, ps *problems) []*ruleSpec {
	if rules == nil {
		ps.add(name, 0, "", "no rules: a policy file needs a top-level \"rules\" list")
		return nil
	}
	if rules.Kind != yaml.SequenceNode {
		ps.add(name, rules.Line, "", "rules: expected a list")
		return nil
	}
	var out []*ruleSpec
	for _, n := range rules.Content {
		if r := parseRule(name, pack, n, ps); r != nil {
			out = append(out, r)
		}
	}
	return out
}

func parseRule(name, pack string, n *yaml.Node, ps *problems) *ruleSpec {
	if n.Kind != yaml.MappingNode {
		ps.add(name, n.Line, "", "a rule must be a mapping")
		return nil
	}
	// Read the id first so that every later problem can name the rule.
	r := &ruleSpec{file: name, line: n.Line, pack: pack, depthMax: math.MaxUint32}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "id" {
			r.id, _ = scalarString(n.Content[i+1])
		}
	}
	before := len(ps.list)
	f := mapping(name, n, r.id, ps, "id", "description", "priority", "target", "condition", "outcome", "private", "mode")
	switch {
	case f["id"] == nil:
		ps.add(name, n.Line, "", "rule without an id")
	case !ruleIDRe.MatchString(r.id):
		ps.add(name, f["id"].Line, r.id, "invalid id: use letters, digits and _ . : - (at most 128)")
	}
	if v := f["description"]; v != nil {
		var err error
		if r.description, err = scalarString(v); err != nil {
			ps.add(name, v.Line, r.id, "description: %v", err)
		}
	}
	if v := f["priority"]; v != nil {
		var err error
		if r.priority, err = scalarInt(v); err != nil {
			ps.add(name, v.Line, r.id, "priority: %v", err)
		}
	}
	if v := f["private"]; v != nil {
		if err := v.Decode(&r.private); err != nil || v.Tag != "!!bool" {
			ps.add(name, v.Line, r.id, "private: expected true or false")
		}
	}
	if v := f["mode"]; v != nil {
		r.shadow = parseMode(name, r.id, v, ps)
	}
	r.parseTarget(f["target"], ps)
	if v := f["condition"]; v != nil {
		if s, err := scalarString(v); err != nil || s == "" {
			ps.add(name, v.Line, r.id, "condition: expected a CEL expression")
		} else {
			r.condition = v
		}
	}
	if v := f["outcome"]; v != nil {
		r.outcome = parseOutcome(name, r.id, v, ps)
	} else {
		ps.add(name, n.Line, r.id, "missing outcome")
	}
	if len(ps.list) > before {
		return nil
	}
	return r
}

func (r *ruleSpec) parseTarget(n *yaml.Node, ps *problems) {
	if n == nil {
		return
	}
	f := mapping(r.file, n, r.id, ps, "event_types", "tools", "agents", "depth")
	if v := f["event_types"]; v != nil {
		names, err := stringList(v)
		if err != nil {
			ps.add(r.file, v.Line, r.id, "target.event_types: %v", err)
		}
		for _, s := range names {
			t := protocol.EventType(s)
			if !t.Known() {
				ps.add(r.file, v.Line, r.id, "target.event_types: unknown event type %q", s)
				continue
			}
			r.eventTypes = append(r.eventTypes, t)
		}
	}
	for _, k := range []string{"tools", "agents"} {
		v := f[k]
		if v == nil {
			continue
		}
		list, err := stringList(v)
		if err != nil {
			ps.add(r.file, v.Line, r.id, "target.%s: %v", k, err)
		}
		for _, p := range list {
			if p == "" {
				ps.add(r.file, v.Line, r.id, "target.%s: empty pattern", k)
			}
		}
		if k == "tools" {
			r.tools = list
		} else if !contains(list, "*") {
			r.agents = list
		}
	}
	if v := f["depth"]; v != nil {
		d := mapping(r.file, v, r.id, ps, "min", "max")
		for _, k := range []string{"min", "max"} {
			dv := d[k]
			if dv == nil {
				continue
			}
			x, err := scalarInt(dv)
			if err != nil || x < 0 || x > math.MaxUint32 {
				ps.add(r.file, dv.Line, r.id, "target.depth.%s: expected a non-negative integer", k)
				continue
			}
			if k == "min" {
				r.depthMin = uint32(x)
			} else {
				r.depthMax = uint32(x)
			}
		}
		if r.depthMin > r.depthMax {
			ps.add(r.file, v.Line, r.id, "target.depth: min is greater than max")
		}
	}
}

// outcomeFields lists which outcome keys each decision accepts.
var outcomeFields = map[protocol.DecisionKind][]string{
	protocol.DecisionAllow:    {"decision"},
	protocol.DecisionBlock:    {"decision", "reason"},
	protocol.DecisionModify:   {"decision", "modified_payload"},
	protocol.DecisionDefer:    {"decision", "retry_after_ms", "reason"},
	protocol.DecisionEscalate: {"decision", "reason", "escalation_target", "await_approval"},
}

func parseOutcome(file, id string, n *yaml.Node, ps *problems) outcomeSpec {
	o := outcomeSpec{line: n.Line}
	all := []string{"decision", "reason", "modified_payload", "retry_after_ms", "escalation_target", "await_approval"}
	f := mapping(file, n, id, ps, all...)
	dv := f["decision"]
	if dv == nil {
		ps.add(file, n.Line, id, "outcome: missing decision (allow, block, modify, defer or escalate)")
		return o
	}
	o.kind = protocol.DecisionKind(dv.Value)
	allowed, ok := outcomeFields[o.kind]
	if !ok {
		ps.add(file, dv.Line, id, "outcome.decision: unknown decision %q (allow, block, modify, defer or escalate)", dv.Value)
		return o
	}
	for _, k := range all {
		if f[k] != nil && !contains(allowed, k) {
			ps.add(file, f[k].Line, id, "outcome.%s: not used by %s decisions", k, o.kind)
		}
	}
	if v := f["reason"]; v != nil {
		var err error
		if o.reason, err = scalarString(v); err != nil {
			ps.add(file, v.Line, id, "outcome.reason: %v", err)
		}
	}
	if (o.kind == protocol.DecisionBlock || o.kind == protocol.DecisionEscalate) && o.reason == "" {
		ps.add(file, n.Line, id, "outcome: a %s decision needs a reason", o.kind)
	}
	switch o.kind {
	case protocol.DecisionModify:
		v := f["modified_payload"]
		if v == nil {
			ps.add(file, n.Line, id, "outcome: a modify decision needs modified_payload (a CEL expression)")
		} else if s, err := scalarString(v); err != nil || s == "" {
			ps.add(file, v.Line, id, "outcome.modified_payload: expected a CEL expression")
		} else {
			o.modified = v
		}
	case protocol.DecisionDefer:
		v := f["retry_after_ms"]
		if v == nil {
			ps.add(file, n.Line, id, "outcome: a defer decision needs retry_after_ms")
		} else if ms, err := scalarInt(v); err != nil || ms <= 0 {
			ps.add(file, v.Line, id, "outcome.retry_after_ms: expected a positive integer")
		} else {
			o.retry = uint64(ms)
		}
	case protocol.DecisionEscalate:
		if v := f["escalation_target"]; v != nil {
			var err error
			if o.target, err = scalarString(v); err != nil {
				ps.add(file, v.Line, id, "outcome.escalation_target: %v", err)
			}
		}
		if v := f["await_approval"]; v != nil {
			o.approval = parseApproval(file, id, v, ps)
		}
	}
	return o
}

func parseApproval(file, id string, n *yaml.Node, ps *problems) *ApprovalSpec {
	a := &ApprovalSpec{Fallback: protocol.DecisionBlock}
	f := mapping(file, n, id, ps, "timeout", "fallback", "approver_role")
	if v := f["timeout"]; v == nil {
		ps.add(file, n.Line, id, "outcome.await_approval: missing timeout (e.g. 5m)")
	} else if d, err := time.ParseDuration(v.Value); err != nil || d <= 0 || v.Kind != yaml.ScalarNode {
		ps.add(file, v.Line, id, "outcome.await_approval.timeout: expected a positive duration such as 30s or 5m")
	} else {
		a.Timeout = d
	}
	if v := f["fallback"]; v != nil {
		switch k := protocol.DecisionKind(v.Value); k {
		case protocol.DecisionAllow, protocol.DecisionBlock:
			a.Fallback = k
		default:
			ps.add(file, v.Line, id, "outcome.await_approval.fallback: expected allow or block")
		}
	}
	if v := f["approver_role"]; v != nil {
		var err error
		if a.ApproverRole, err = scalarString(v); err != nil {
			ps.add(file, v.Line, id, "outcome.await_approval.approver_role: %v", err)
		}
	}
	return a
}
