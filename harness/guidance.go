package harness

import (
	"encoding/json"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
)

// maxGuidanceHints bounds the hints one answer carries.
const maxGuidanceHints = 32

// guidanceFor returns the operator's guidance entries matching a planning
// or reasoning event (policy files' "guidance:" section). Conditions that
// fail to evaluate are logged and skipped: guidance advises, never blocks.
func (h *Harness) guidanceFor(ev *protocol.Event) []*policy.Guidance {
	in, ok := policy.GuidanceInputFor(ev)
	if !ok {
		return nil
	}
	gs, errs := h.opts.Engine.Set().Guidance(in)
	for _, err := range errs {
		h.log.Warn("guidance condition failed", "error", err)
	}
	return gs
}

// planTemplate is the planning_template of a guided plan.
type planTemplate struct {
	Guidance []string `json:"guidance"`
	Subtasks []string `json:"subtasks,omitempty"`
	Hints    []string `json:"hints,omitempty"`
}

// guidedPlan applies guidance to a planning answer: the first entry naming
// an offered strategy selects it; subtasks and hints of every matching
// entry go into planning_template. It returns the ids of the entries.
func guidedPlan(d *protocol.PlanningDecision, p *protocol.PlanningPayload, gs []*policy.Guidance) []string {
	if len(gs) == 0 {
		return nil
	}
	var t planTemplate
	chosen := false
	for _, g := range gs {
		t.Guidance = append(t.Guidance, g.ID)
		t.Subtasks = append(t.Subtasks, g.Subtasks...)
		t.Hints = appendHints(t.Hints, g.Hints)
		if g.Strategy == "" || chosen {
			continue
		}
		for _, s := range p.AvailableStrategies {
			if s.String() == g.Strategy {
				d.SelectedStrategy, chosen = s, true
				break
			}
		}
	}
	d.PlanningTemplate, _ = json.Marshal(t)
	return t.Guidance
}

// appendHints adds hints not yet in list, up to maxGuidanceHints.
func appendHints(list, hints []string) []string {
	for _, x := range hints {
		dup := false
		for _, y := range list {
			dup = dup || x == y
		}
		if !dup && len(list) < maxGuidanceHints {
			list = append(list, x)
		}
	}
	return list
}
