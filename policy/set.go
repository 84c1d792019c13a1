package policy

import (
	"fmt"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/protocol"
)

// Set is a compiled, immutable set of rules: the built-in packs that were
// enabled plus the policy files, with their parameters. It is safe for
// concurrent use.
//
// How rules combine: the rules that apply to an event (target matches,
// condition true) are taken in priority order, highest first. The first
// priority level that has a matching rule decides; within that level the
// most restrictive outcome wins (block > escalate > defer > modify > allow),
// and among equals the rule loaded first (packs, then files in order, then
// position in the file). When no rule matches, the default outcome applies.
// A rule whose condition or modified payload fails to evaluate counts as a
// matching block at its priority (fail closed).
type Set struct {
	version string
	rules   []*rule
	packs   []string
	config  ref.Val
	def     Result
	index   map[protocol.EventType]*bucket
	anyType *bucket
	// shadow holds the shadow rules (mode: shadow, or every rule when the
	// set is in shadow mode); nil when there are none.
	shadow *shadowRules
	// guidance holds the guidance entries of the policy files, in order.
	guidance []*Guidance
	// needs numbers what the rules' condition filters test (needindex.go).
	needs *needIndex
	// agent is what is known of the agents for the effect analysis.
	agent effects.Context

	// onEval, when set (tests only), is called before a rule's condition
	// is evaluated.
	onEval func(ruleID string)
}

// Version is "sha256:" and the hex SHA-256 of what decides: the loaded
// sources in canonical form and load order (not their file names), the
// enabled packs, the parameters without the harness's own
// (Options.Instance), the default, the mode and Options.Settings. It is
// the policy_version of every decision, the same across restarts and
// replicas that run one policy.
func (s *Set) Version() string { return s.version }

// Packs returns the names of the built-in packs in the set.
func (s *Set) Packs() []string { return append([]string(nil), s.packs...) }

// RuleIDs returns the ids of every rule in the set, in load order.
func (s *Set) RuleIDs() []string {
	out := make([]string, len(s.rules))
	for i, r := range s.rules {
		out[i] = r.id
	}
	return out
}

// Evaluate decides on one event. It never fails: an input without an event
// or a rule that cannot be evaluated yields a block with the reason stated.
func (s *Set) Evaluate(in *Input) Result {
	if in == nil || in.Event == nil {
		return Result{Decision: protocol.Block("policy: no event to evaluate")}
	}
	c := ctxPool.Get().(*evalCtx)
	c.set = s
	c.in = *in
	res, best := s.decide(c)
	if s.shadow != nil {
		res.Shadow = s.shadow.evaluate(c, &res, best)
	}
	if o, ok := c.payload.(*jsonObject); ok {
		res.PayloadSecrets = o.secrets
	}
	c.release()
	return res
}

// decide walks the candidate rules of the event (see Set for the order).
// It also returns the deciding rule (nil for the default outcome).
func (s *Set) decide(c *evalCtx) (Result, *rule) {
	b := s.index[c.in.Event.EventType]
	if b == nil {
		b = s.anyType
	}
	cands, checkTools := b.candidates(c)
	var (
		best    *rule
		bestErr error
		bestSev = -1
	)
	for _, r := range cands {
		if best != nil && r.priority < best.priority {
			break
		}
		if !r.targets(c, checkTools) {
			continue
		}
		if s.onEval != nil {
			s.onEval(r.id)
		}
		ok, err := r.test(c)
		if !ok && err == nil {
			continue
		}
		sev := r.severity
		if err != nil {
			sev = severityOf(protocol.DecisionBlock)
		}
		if sev > bestSev {
			best, bestErr, bestSev = r, err, sev
		}
		if bestSev == severityOf(protocol.DecisionBlock) {
			break
		}
	}
	if best == nil {
		return s.def, nil
	}
	return best.result(c, bestErr), best
}

// targets checks the parts of a rule's target the index did not settle.
func (r *rule) targets(c *evalCtx, checkTools bool) bool {
	ev := c.in.Event
	if ev.Depth < r.depthMin || ev.Depth > r.depthMax {
		return false
	}
	if r.agents != nil && !globAny(r.agents, ev.AgentID) {
		return false
	}
	if checkTools && r.tools != nil && !globAny(r.tools, c.toolName()) {
		return false
	}
	return true
}

// test evaluates the rule's condition.
func (r *rule) test(c *evalCtx) (bool, error) {
	if r.cond == nil {
		return true, nil
	}
	if r.kinds != 0 && !noKindFilter && c.kindMask()&r.kinds == 0 {
		return false, nil // it needs an effect of a kind the action has none of
	}
	if r.need != nil && !noKindFilter && !c.meetsAny(r.need) {
		return false, nil // it needs an effect (a program, a word) the action has none of
	}
	if r.limit && !noKindFilter && c.limitReached() == "" {
		return false, nil // it needs the reading to have reached a limit, and it reached none
	}
	v, _, err := r.cond.Eval(c.activation())
	if err != nil {
		return false, fmt.Errorf("rule %s: condition: %w", r.id, err)
	}
	b, ok := v.(types.Bool)
	if !ok {
		return false, fmt.Errorf("rule %s: condition returned %s, not bool", r.id, v.Type().TypeName())
	}
	return bool(b), nil
}

// result builds the result of a rule that matched (or failed).
func (r *rule) result(c *evalCtx, err error) Result {
	res := Result{Decision: r.decision, RuleID: r.id, Pack: r.pack, Matched: true}
	if err == nil && r.modify != nil {
		var v ref.Val
		v, _, err = r.modify.Eval(c.activation())
		if err == nil {
			res.Decision.ModifiedPayload, err = appendJSON(nil, v, 0)
		}
		if err != nil {
			err = fmt.Errorf("rule %s: modified_payload: %w", r.id, err)
		}
	}
	if err != nil {
		res.Decision = r.failed
		res.Err = err
		return res
	}
	if res.Decision.Kind == protocol.DecisionEscalate {
		res.Approval = r.approval
	}
	return res
}
