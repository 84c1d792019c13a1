package policy

import (
	"sort"

	"github.com/ahp-go/ahp/protocol"
)

// bucket holds the candidate rules for one event type, each list sorted by
// priority (highest first) and then load order. Evaluation only walks the
// list that fits the event, so its cost does not grow with rules written
// for other event types or other tools.
type bucket struct {
	// all is used when no rule of the bucket names tools.
	all []*rule
	// byTool maps each tool name written literally in a target to the rules
	// that can apply to it: rules for that name, rules whose glob matches
	// it, and rules without a tool target.
	byTool map[string][]*rule
	// other is for tools not in byTool: rules with glob targets (checked at
	// evaluation time) and rules without a tool target.
	other []*rule
	// noTool is for events without a tool name: rules without a tool target.
	noTool []*rule
}

// buildIndex fills the per-event-type buckets: the enforced rules decide,
// the shadow rules have buckets of their own.
func (s *Set) buildIndex() {
	var enforced, shadow []*rule
	for _, r := range s.rules {
		if r.shadow {
			shadow = append(shadow, r)
		} else {
			enforced = append(enforced, r)
		}
	}
	s.index, s.anyType = indexRules(enforced)
	if len(shadow) > 0 {
		if s.shadow == nil {
			s.shadow = &shadowRules{}
		}
		s.shadow.index, s.shadow.anyType = indexRules(shadow)
	}
}

// indexRules builds the buckets of rules, by event type.
func indexRules(rules []*rule) (map[protocol.EventType]*bucket, *bucket) {
	index := make(map[protocol.EventType]*bucket, len(protocol.AllEventTypes))
	for _, t := range protocol.AllEventTypes {
		index[t] = newBucket(rules, func(r *rule) bool { return r.appliesToType(t) })
	}
	return index, newBucket(rules, func(r *rule) bool { return len(r.eventTypes) == 0 })
}

func (r *rule) appliesToType(t protocol.EventType) bool {
	if len(r.eventTypes) == 0 {
		return true
	}
	for _, et := range r.eventTypes {
		if et == t {
			return true
		}
	}
	return false
}

func newBucket(rules []*rule, keep func(*rule) bool) *bucket {
	b := &bucket{}
	var names []string
	for _, r := range rules {
		if !keep(r) {
			continue
		}
		b.all = append(b.all, r)
		for _, p := range r.tools {
			if !isGlob(p) {
				names = append(names, p)
			}
		}
	}
	sortRules(b.all)
	hasTools := false
	for _, r := range b.all {
		if r.tools != nil {
			hasTools = true
			break
		}
	}
	if !hasTools {
		return b
	}
	b.byTool = map[string][]*rule{}
	for _, name := range names {
		if _, done := b.byTool[name]; done {
			continue
		}
		var list []*rule
		for _, r := range b.all {
			if r.tools == nil || globAny(r.tools, name) {
				list = append(list, r)
			}
		}
		b.byTool[name] = list
	}
	for _, r := range b.all {
		if r.tools == nil {
			b.noTool = append(b.noTool, r)
			b.other = append(b.other, r)
			continue
		}
		for _, p := range r.tools {
			if isGlob(p) {
				b.other = append(b.other, r)
				break
			}
		}
	}
	return b
}

func sortRules(rs []*rule) {
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].priority != rs[j].priority {
			return rs[i].priority > rs[j].priority
		}
		return rs[i].order < rs[j].order
	})
}

// candidates returns the rules to consider for an event, and whether their
// tool globs still have to be checked.
func (b *bucket) candidates(c *evalCtx) ([]*rule, bool) {
	if b.byTool == nil {
		return b.all, false
	}
	tool := c.toolName()
	if tool == "" {
		return b.noTool, false
	}
	if list, ok := b.byTool[tool]; ok {
		return list, false
	}
	return b.other, true
}
