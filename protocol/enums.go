package protocol

import (
	"encoding/json"
	"fmt"
	"slices"
)

// unmarshalClosed decodes a string that must be one of allowed.
func unmarshalClosed(b []byte, typeName string, allowed []string) (string, error) {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return "", fmt.Errorf("%s: %w", typeName, err)
	}
	if !slices.Contains(allowed, s) {
		return "", fmt.Errorf("%s: unknown variant %.64q, expected one of %v", typeName, s, allowed)
	}
	return s, nil
}

// marshalOpen writes an open enumeration: a unit value as a string, a
// free-form one as an object with one key ({"custom": "x"}).
func marshalOpen(typeName, name, key, other string) ([]byte, error) {
	if name == "" && other == "" {
		return nil, fmt.Errorf("%s: empty value", typeName)
	}
	if name != "" {
		return json.Marshal(name)
	}
	return json.Marshal(map[string]string{key: other})
}

// unmarshalOpen reads an open enumeration written by marshalOpen.
func unmarshalOpen(b []byte, typeName, key string, allowed []string) (name, other string, err error) {
	if len(b) > 0 && b[0] == '{' {
		var m map[string]string
		if err := json.Unmarshal(b, &m); err != nil {
			return "", "", fmt.Errorf("%s: %w", typeName, err)
		}
		v, ok := m[key]
		if !ok || len(m) != 1 {
			return "", "", fmt.Errorf("%s: object form must have exactly the key %q", typeName, key)
		}
		if v == "" {
			// The zero value stands for "no value" and cannot be written back.
			return "", "", fmt.Errorf("%s: %s must not be empty", typeName, key)
		}
		return "", v, nil
	}
	name, err = unmarshalClosed(b, typeName, allowed)
	return name, "", err
}

// PlanningStrategy is a planning strategy: one of the named ones, or a
// custom one ({"custom": "name"} on the wire). Exactly one field is set.
type PlanningStrategy struct {
	Name   string // none, step_by_step, tree_of_thoughts or graph_planning
	Custom string
}

// The named planning strategies.
var (
	StrategyNone           = PlanningStrategy{Name: "none"}
	StrategyStepByStep     = PlanningStrategy{Name: "step_by_step"}
	StrategyTreeOfThoughts = PlanningStrategy{Name: "tree_of_thoughts"}
	StrategyGraphPlanning  = PlanningStrategy{Name: "graph_planning"}
)

// PlanningStrategyNames lists the unit values of PlanningStrategy.
var PlanningStrategyNames = []string{"none", "step_by_step", "tree_of_thoughts", "graph_planning"}

// String returns the name, or the custom value.
func (s PlanningStrategy) String() string { return s.Name + s.Custom }

// MarshalJSON implements json.Marshaler.
func (s PlanningStrategy) MarshalJSON() ([]byte, error) {
	return marshalOpen("planning strategy", s.Name, "custom", s.Custom)
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *PlanningStrategy) UnmarshalJSON(b []byte) (err error) {
	s.Name, s.Custom, err = unmarshalOpen(b, "planning strategy", "custom", PlanningStrategyNames)
	return err
}

// ReasoningType is a reasoning style, or another one ({"other": "name"}).
type ReasoningType struct {
	Name  string // chain_of_thought, tree_of_thoughts, re_act or reflexion
	Other string
}

// ReasoningTypeNames lists the unit values of ReasoningType.
var ReasoningTypeNames = []string{"chain_of_thought", "tree_of_thoughts", "re_act", "reflexion"}

// String returns the name, or the other value.
func (s ReasoningType) String() string { return s.Name + s.Other }

// MarshalJSON implements json.Marshaler.
func (s ReasoningType) MarshalJSON() ([]byte, error) {
	return marshalOpen("reasoning type", s.Name, "other", s.Other)
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *ReasoningType) UnmarshalJSON(b []byte) (err error) {
	s.Name, s.Other, err = unmarshalOpen(b, "reasoning type", "other", ReasoningTypeNames)
	return err
}

// RateLimitType is the kind of limit hit, or a custom one.
type RateLimitType struct {
	Name   string // llm_token_limit, llm_request_limit, api_request_limit or tool_execution_limit
	Custom string
}

// RateLimitTypeNames lists the unit values of RateLimitType.
var RateLimitTypeNames = []string{"llm_token_limit", "llm_request_limit", "api_request_limit", "tool_execution_limit"}

// String returns the name, or the custom value.
func (s RateLimitType) String() string { return s.Name + s.Custom }

// MarshalJSON implements json.Marshaler.
func (s RateLimitType) MarshalJSON() ([]byte, error) {
	return marshalOpen("rate limit type", s.Name, "custom", s.Custom)
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *RateLimitType) UnmarshalJSON(b []byte) (err error) {
	s.Name, s.Custom, err = unmarshalOpen(b, "rate limit type", "custom", RateLimitTypeNames)
	return err
}

// ConfirmationType is the kind of confirmation asked for, or a custom one.
type ConfirmationType struct {
	Name   string // safety_confirm, user_confirm or cost_confirm
	Custom string
}

// ConfirmationTypeNames lists the unit values of ConfirmationType.
var ConfirmationTypeNames = []string{"safety_confirm", "user_confirm", "cost_confirm"}

// String returns the name, or the custom value.
func (s ConfirmationType) String() string { return s.Name + s.Custom }

// MarshalJSON implements json.Marshaler.
func (s ConfirmationType) MarshalJSON() ([]byte, error) {
	return marshalOpen("confirmation type", s.Name, "custom", s.Custom)
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *ConfirmationType) UnmarshalJSON(b []byte) (err error) {
	s.Name, s.Custom, err = unmarshalOpen(b, "confirmation type", "custom", ConfirmationTypeNames)
	return err
}
