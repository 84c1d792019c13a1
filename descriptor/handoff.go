package descriptor

import (
	"fmt"
	"slices"
	"strings"
)

// Handoff is one handoff an agent declares: a target agent and, when Where
// is not empty, the context path of a boolean gate. A gated handoff is
// available only while the run context holds exactly true at Where.
//
// In the descriptor a handoff is either a plain agent id or an object
// {agent: ID, where: {context: PATH}}; both forms may be mixed in one list
// and are hashed as written.
type Handoff struct {
	// Agent is the id of the target agent.
	Agent string
	// Where is the gate's context path, normalized (see the package
	// documentation), or "" for an unconditional handoff.
	Where string

	whereRaw string // the gate's path as written
}

// handoffKeys are the keys a handoff object may hold.
var handoffKeys = []string{"agent", "where"}

// handoffList reads an agent's handoffs. Invalid entries are reported and
// kept with an empty Agent so that indexes still match the descriptor.
func handoffList(obj map[string]any, where func(string) string, ps *problems) []Handoff {
	v, set := obj["handoffs"]
	if !set || v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		ps.add(where("handoffs"), "must be a list of agent ids or {agent, where} objects, not %s", kindOf(v))
		return nil
	}
	out := make([]Handoff, 0, len(list))
	for i, e := range list {
		field := fmt.Sprintf("handoffs[%d]", i)
		var h Handoff
		switch x := e.(type) {
		case string:
			if strings.TrimSpace(x) == "" {
				ps.add(where(field), "must be a non-empty string or an object {agent, where}")
			} else {
				h.Agent = x
			}
		case map[string]any:
			checkKeys(x, handoffKeys, where(field), ps)
			agent, isString := x["agent"].(string)
			if !isString || strings.TrimSpace(agent) == "" {
				ps.add(where(field+".agent"), "must be a non-empty string, not %s", show(x["agent"]))
			} else {
				h.Agent = agent
			}
			if w, set := x["where"]; set {
				gate, isObj := w.(map[string]any)
				if !isObj {
					ps.add(where(field+".where"), "must be an object {context: PATH}, not %s", kindOf(w))
					break
				}
				checkKeys(gate, []string{"context"}, where(field+".where"), ps)
				path, isString := gate["context"].(string)
				if !isString || strings.TrimSpace(path) == "" {
					ps.add(where(field+".where.context"), "must be a non-empty context path")
					break
				}
				h.whereRaw = path
			}
		default:
			ps.add(where(field), "must be a non-empty string or an object {agent, where}, not %s", show(e))
		}
		if h.Agent != "" && slices.ContainsFunc(out, func(o Handoff) bool { return o.Agent == h.Agent }) {
			ps.add(where(field), "%q is listed twice", h.Agent)
		}
		out = append(out, h)
	}
	return out
}

// HandoffRules returns the agent's handoffs with their gates, in
// descriptor order.
func (a *Agent) HandoffRules() []Handoff { return slices.Clone(a.handoffs) }

// HandoffAllowed reports whether agent from may hand off to agent to in a
// run whose context is ctx (the JSON data model, as NewContext builds it):
// the handoff must be declared and, when it is gated, ctx must hold exactly
// true at the gate's path. A gate whose value is missing or not a boolean
// makes the handoff unavailable and is reported as an error, as aioc fails
// the run in that case. An unknown from agent is an error.
func (d *Descriptor) HandoffAllowed(from, to string, ctx map[string]any) (bool, error) {
	a, ok := d.agents[from]
	if !ok {
		return false, fmt.Errorf("descriptor: unknown agent %q", from)
	}
	i := slices.IndexFunc(a.handoffs, func(h Handoff) bool { return h.Agent == to })
	if i < 0 {
		return false, nil
	}
	h := a.handoffs[i]
	if h.Where == "" {
		return true, nil
	}
	root := map[string]any{}
	if ctx != nil {
		n, err := normalizeValue(ctx)
		if err != nil {
			return false, fmt.Errorf("descriptor: run context: %w", err)
		}
		root = n.(map[string]any)
	}
	open, err := gateHolds(root, h.Where)
	if err != nil {
		return false, fmt.Errorf("handoff from %q to %q: %w", from, to, err)
	}
	return open, nil
}
