package policy

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/ahp-go/ahp/protocol"
)

// Mode says whether a policy's rules decide (enforce) or are only
// evaluated and reported (shadow).
type Mode string

const (
	// ModeEnforce: rules decide (the default; a rule without mode: is
	// enforced).
	ModeEnforce Mode = "enforce"
	// ModeShadow: rules are evaluated like any other, and what they would
	// have decided is reported in Result.Shadow, but they never decide.
	ModeShadow Mode = "shadow"
)

// MaxShadowMatches bounds the shadow rules reported for one event: the
// first ones in priority order are kept, the rest are not evaluated.
const MaxShadowMatches = 16

// ShadowMatch is what one shadow rule would have decided on an event.
type ShadowMatch struct {
	// RuleID is the shadow rule; "" stands for the default outcome of a
	// set in shadow mode whose default is block (no rule matched).
	RuleID string
	// Pack is the built-in pack of the rule, "" for policy files.
	Pack string
	// Decision is the rule's outcome (block when it failed to evaluate:
	// enforced, it would have failed closed).
	Decision protocol.DecisionKind
	// Reason is the outcome's reason, if it has one.
	Reason string
	// Changes reports whether enforcing this rule alone would have changed
	// the decision: it would have decided (higher priority than the live
	// rule, or the same priority and more restrictive), and differently.
	Changes bool
	// Err is the evaluation error behind a Decision of block, if any.
	Err error
	// Policy is the version of the shadow policy when this is that
	// policy's verdict (the harness adds it), "" for a shadow rule.
	Policy string
}

// shadowRules are the shadow rules of a set, indexed like the enforced
// ones.
type shadowRules struct {
	index   map[protocol.EventType]*bucket
	anyType *bucket
	// def, when set (a set in shadow mode with a block default), is
	// reported when no shadow rule matched.
	def *ShadowMatch
}

// parseMode reads a rule's mode: enforce or shadow. It returns whether the
// rule is a shadow rule.
func parseMode(file, id string, n *yaml.Node, ps *problems) bool {
	switch Mode(n.Value) {
	case ModeEnforce:
		return false
	case ModeShadow:
		if n.Kind == yaml.ScalarNode {
			return true
		}
	}
	ps.add(file, n.Line, id, "mode: expected enforce or shadow")
	return false
}

// shadowMode checks the mode of the options and returns it as it enters
// the policy version ("" for enforce, so that versions stay as they were).
func shadowMode(m Mode, ps *problems) Mode {
	switch m {
	case "", ModeEnforce:
		return ""
	case ModeShadow:
		return ModeShadow
	}
	ps.add("", 0, "", "policy mode %q: expected enforce or shadow", m)
	return ""
}

// applyMode puts every rule in shadow when the options ask for it. The
// live default becomes allow; a block default is reported as a shadow
// match of the default outcome.
func (s *Set) applyMode(m Mode) {
	if m != ModeShadow {
		return
	}
	for _, r := range s.rules {
		r.shadow = true
	}
	s.shadow = &shadowRules{}
	if s.def.Decision.Kind == protocol.DecisionBlock {
		s.shadow.def = &ShadowMatch{Decision: protocol.DecisionBlock, Reason: s.def.Decision.Reason}
	}
	s.def = defaultResult(protocol.DecisionAllow, "", s.version)
}

// ShadowRuleIDs returns the ids of the rules evaluated in shadow, in load
// order.
func (s *Set) ShadowRuleIDs() []string {
	var out []string
	for _, r := range s.rules {
		if r.shadow {
			out = append(out, r.id)
		}
	}
	return out
}

// evaluate runs the shadow rules that apply to the event, after the live
// decision (live, made by rule best, nil for the default). It reads the
// evaluation's cached values and writes nothing the live result holds. A
// panic while evaluating is reported as a failed match of no rule, never
// passed on.
func (sr *shadowRules) evaluate(c *evalCtx, live *Result, best *rule) (out []ShadowMatch) {
	defer func() {
		if p := recover(); p != nil {
			out = append(out, ShadowMatch{Decision: protocol.DecisionBlock,
				Reason: "shadow evaluation failed", Err: fmt.Errorf("policy: shadow evaluation panicked: %v", p)})
		}
	}()
	b := sr.index[c.in.Event.EventType]
	if b == nil {
		b = sr.anyType
	}
	var (
		cands      []*rule
		checkTools bool
	)
	if b != nil { // nil: a set in shadow mode without rules
		cands, checkTools = b.candidates(c)
	}
	liveSev := severityOf(live.Decision.Kind)
	for _, r := range cands {
		if len(out) == MaxShadowMatches {
			break
		}
		if !r.targets(c, checkTools) {
			continue
		}
		ok, err := r.test(c)
		if !ok && err == nil {
			continue
		}
		m := ShadowMatch{RuleID: r.id, Pack: r.pack, Decision: r.decision.Kind, Reason: r.decision.Reason}
		if err != nil {
			m.Decision, m.Reason, m.Err = protocol.DecisionBlock, r.failed.Reason, err
		}
		sev := severityOf(m.Decision)
		wouldDecide := best == nil || r.priority > best.priority ||
			(r.priority == best.priority && (sev > liveSev || (sev == liveSev && r.order < best.order)))
		m.Changes = wouldDecide && m.Decision != live.Decision.Kind
		out = append(out, m)
	}
	if len(out) == 0 && sr.def != nil && best == nil {
		m := *sr.def
		m.Changes = m.Decision != live.Decision.Kind
		out = append(out, m)
	}
	return out
}

// LoadWithShadow reloads a live engine and the engine of its shadow policy
// together: it compiles liveSrcs with live's options and shadowSrcs with
// shadow's, and installs the two sets only when both compile. When either
// fails, both engines keep running what they ran and the error says which
// policy was refused (a shadow policy's *LoadError is wrapped).
func LoadWithShadow(live *Engine, liveSrcs []Source, shadow *Engine, shadowSrcs []Source) error {
	ls, err := Compile(live.opts, liveSrcs...)
	if err != nil {
		live.metrics.load(false)
		return err
	}
	ss, err := Compile(shadow.opts, shadowSrcs...)
	if err != nil {
		live.metrics.load(false)
		return fmt.Errorf("shadow policy refused (neither policy was replaced): %w", err)
	}
	live.install(ls)
	live.metrics.load(true)
	shadow.install(ss)
	return nil
}
