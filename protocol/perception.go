package protocol

import (
	"encoding/json"
	"fmt"
)

// PerceptionIntent is what an agent wants to do with context.
type PerceptionIntent string

// PerceptionIntentNames lists the values of PerceptionIntent.
var PerceptionIntentNames = []string{"recognize", "understand", "locate", "retrieve", "explore", "reason", "validate", "compare", "track"}

// UnmarshalJSON accepts only the listed values.
func (v *PerceptionIntent) UnmarshalJSON(b []byte) error {
	s, err := unmarshalClosed(b, "perception intent", PerceptionIntentNames)
	*v = PerceptionIntent(s)
	return err
}

// PerceptionDomain is the field an agent works in.
type PerceptionDomain string

// PerceptionDomainNames lists the values of PerceptionDomain.
var PerceptionDomainNames = []string{"coding", "writing", "data_analysis", "research", "project_management", "conversation", "operations", "security", "general"}

// UnmarshalJSON accepts only the listed values.
func (v *PerceptionDomain) UnmarshalJSON(b []byte) error {
	s, err := unmarshalClosed(b, "perception domain", PerceptionDomainNames)
	*v = PerceptionDomain(s)
	return err
}

// PerceptionModality is the preferred form of context.
type PerceptionModality string

// PerceptionModalityNames lists the values of PerceptionModality.
var PerceptionModalityNames = []string{"text", "code", "structured_data", "table", "chart", "image", "audio", "video", "any"}

// UnmarshalJSON accepts only the listed values.
func (v *PerceptionModality) UnmarshalJSON(b []byte) error {
	s, err := unmarshalClosed(b, "perception modality", PerceptionModalityNames)
	*v = PerceptionModality(s)
	return err
}

// PerceptionUrgency is how soon context is needed.
type PerceptionUrgency string

// PerceptionUrgencyNames lists the values of PerceptionUrgency.
var PerceptionUrgencyNames = []string{"critical", "high", "normal", "low"}

// UnmarshalJSON accepts only the listed values.
func (v *PerceptionUrgency) UnmarshalJSON(b []byte) error {
	s, err := unmarshalClosed(b, "perception urgency", PerceptionUrgencyNames)
	*v = PerceptionUrgency(s)
	return err
}

// PerceptionFreshness is how current context must be.
type PerceptionFreshness string

// PerceptionFreshnessNames lists the values of PerceptionFreshness.
var PerceptionFreshnessNames = []string{"realtime", "recent", "static"}

// UnmarshalJSON accepts only the listed values.
func (v *PerceptionFreshness) UnmarshalJSON(b []byte) error {
	s, err := unmarshalClosed(b, "perception freshness", PerceptionFreshnessNames)
	*v = PerceptionFreshness(s)
	return err
}

// PerceptionTarget is what context is wanted about. On the wire it is an
// object with exactly one key naming the variant; exactly one field is set.
type PerceptionTarget struct {
	Entity   *EntityTarget   `json:"entity,omitempty"`
	Location *LocationTarget `json:"location,omitempty"`
	Event    *EventTarget    `json:"event,omitempty"`
	Relation *RelationTarget `json:"relation,omitempty"`
	Rule     *RuleTarget     `json:"rule,omitempty"`
	State    *StateTarget    `json:"state,omitempty"`
	Resource *ResourceTarget `json:"resource,omitempty"`
	Pattern  *PatternTarget  `json:"pattern,omitempty"`
}

// Variant returns the name of the variant that is set, or "".
func (t PerceptionTarget) Variant() string {
	switch {
	case t.Entity != nil:
		return "entity"
	case t.Location != nil:
		return "location"
	case t.Event != nil:
		return "event"
	case t.Relation != nil:
		return "relation"
	case t.Rule != nil:
		return "rule"
	case t.State != nil:
		return "state"
	case t.Resource != nil:
		return "resource"
	case t.Pattern != nil:
		return "pattern"
	}
	return ""
}

// targetRequired lists, per variant, the fields that must be present and not
// null. The null-able fields (identifier, time_range, scope, constraints) are
// not listed: a reader accepts them absent or null.
var targetRequired = map[string][]string{
	"entity":   {"name", "entity_type"},
	"location": {"path", "location_type"},
	"event":    {"description", "event_type"},
	"relation": {"entities", "relation_type"},
	"rule":     {"name", "rule_type"},
	"state":    {"target", "aspect", "include_history"},
	"resource": {"name", "resource_type"},
	"pattern":  {"pattern", "pattern_type"},
}

// UnmarshalJSON requires exactly one known key and that variant's fields.
func (t *PerceptionTarget) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("perception target: %w", err)
	}
	if len(m) != 1 {
		return fmt.Errorf("perception target: want an object with exactly one key, got %d", len(m))
	}
	type plain PerceptionTarget
	for k, v := range m {
		req, ok := targetRequired[k]
		if !ok {
			return fmt.Errorf("perception target: unknown variant %.64q", k)
		}
		if err := requireKeys(v, "target."+k, req, nil); err != nil {
			return err
		}
	}
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("perception target: %w", err)
	}
	*t = PerceptionTarget(p)
	return nil
}

// MarshalJSON writes the one variant that is set. A target with no variant
// or with more than one is an error: no reader would accept it.
func (t PerceptionTarget) MarshalJSON() ([]byte, error) {
	n := 0
	for _, set := range []bool{t.Entity != nil, t.Location != nil, t.Event != nil,
		t.Relation != nil, t.Rule != nil, t.State != nil, t.Resource != nil, t.Pattern != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("perception target: want exactly one variant set, got %d", n)
	}
	type plain PerceptionTarget
	return json.Marshal(plain(t))
}

// EntityTarget names an entity.
type EntityTarget struct {
	Name       string  `json:"name"`
	EntityType string  `json:"entity_type"`
	Identifier *string `json:"identifier"`
}

// LocationTarget names a place such as a path.
type LocationTarget struct {
	Path         string `json:"path"`
	LocationType string `json:"location_type"`
}

// TimeRange bounds an event target in time (Unix timestamps).
type TimeRange struct {
	From     *int64 `json:"from"`
	To       *int64 `json:"to"`
	Relative string `json:"relative,omitempty"`
}

// EventTarget names something that happened.
type EventTarget struct {
	Description string     `json:"description"`
	EventType   string     `json:"event_type"`
	TimeRange   *TimeRange `json:"time_range"`
}

// RelationTarget names a relation between entities.
type RelationTarget struct {
	Entities     []string `json:"entities"`
	RelationType string   `json:"relation_type"`
}

// MarshalJSON writes entities as [] when empty.
func (r RelationTarget) MarshalJSON() ([]byte, error) {
	type plain RelationTarget
	r.Entities = emptyIfNil(r.Entities)
	return json.Marshal(plain(r))
}

// RuleTarget names a rule.
type RuleTarget struct {
	Name     string  `json:"name"`
	RuleType string  `json:"rule_type"`
	Scope    *string `json:"scope"`
}

// StateTarget names an aspect of the state of something.
type StateTarget struct {
	Target         string `json:"target"`
	Aspect         string `json:"aspect"`
	IncludeHistory bool   `json:"include_history"`
}

// ResourceTarget names a resource.
type ResourceTarget struct {
	Name         string          `json:"name"`
	ResourceType string          `json:"resource_type"`
	Constraints  json.RawMessage `json:"constraints"`
}

// UnmarshalJSON maps a null constraints to absent, so both decode alike.
func (r *ResourceTarget) UnmarshalJSON(b []byte) error {
	type plain ResourceTarget
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	r.Constraints = nullToNil(r.Constraints)
	return nil
}

// MarshalJSON writes constraints as null when absent.
func (r ResourceTarget) MarshalJSON() ([]byte, error) {
	type plain ResourceTarget
	if len(r.Constraints) == 0 {
		r.Constraints = json.RawMessage("null")
	}
	return json.Marshal(plain(r))
}

// PatternTarget names a pattern to look for.
type PatternTarget struct {
	Pattern     string `json:"pattern"`
	PatternType string `json:"pattern_type"`
}
