package protocol

import "encoding/json"

// IdleDecision answers an idle event: allow {} or defer {reason?}.
type IdleDecision struct {
	Decision string // "allow" or "defer"
	Reason   string // defer only, optional
}

// MarshalJSON writes the variant's fields only.
func (d IdleDecision) MarshalJSON() ([]byte, error) {
	if d.Decision == "defer" {
		return marshalTagged("defer", field{"reason", d.Reason, d.Reason == ""})
	}
	return marshalTagged(orDefault(d.Decision, "allow"))
}

// UnmarshalJSON reads either variant.
func (d *IdleDecision) UnmarshalJSON(b []byte) error {
	var w struct {
		Reason *string `json:"reason"`
	}
	kind, err := decodeTagged("idle decision", b, variants{"allow": nil, "defer": nil}, &w)
	if err != nil {
		return err
	}
	*d = IdleDecision{Decision: kind, Reason: deref(w.Reason)}
	return nil
}

// TargetHints narrow down what an intent refers to.
type TargetHints struct {
	TargetType string `json:"target_type,omitempty"`
	TargetName string `json:"target_name,omitempty"`
	Domain     string `json:"domain,omitempty"`
}

// IntentDetectionDecision answers intent_detection:
// allow {detected_intent, confidence, target_hints?} or block {reason}.
type IntentDetectionDecision struct {
	Decision       string // "allow" or "block"
	DetectedIntent string
	Confidence     float32
	TargetHints    *TargetHints
	Reason         string
}

// MarshalJSON writes the variant's fields only.
func (d IntentDetectionDecision) MarshalJSON() ([]byte, error) {
	if d.Decision == "block" {
		return marshalTagged("block", field{name: "reason", val: d.Reason})
	}
	return marshalTagged("allow",
		field{name: "detected_intent", val: d.DetectedIntent},
		field{name: "confidence", val: d.Confidence},
		field{"target_hints", d.TargetHints, d.TargetHints == nil})
}

// UnmarshalJSON reads either variant.
func (d *IntentDetectionDecision) UnmarshalJSON(b []byte) error {
	var w struct {
		DetectedIntent string       `json:"detected_intent"`
		Confidence     float32      `json:"confidence"`
		TargetHints    *TargetHints `json:"target_hints"`
		Reason         string       `json:"reason"`
	}
	kind, err := decodeTagged("intent_detection decision", b, variants{
		"allow": {"detected_intent", "confidence"}, "block": {"reason"}}, &w)
	if err != nil {
		return err
	}
	*d = IntentDetectionDecision{Decision: kind, DetectedIntent: w.DetectedIntent,
		Confidence: w.Confidence, TargetHints: w.TargetHints, Reason: w.Reason}
	return nil
}

// FileSnippet is a piece of a file injected as context.
type FileSnippet struct {
	Path           string  `json:"path"`
	Snippet        string  `json:"snippet"`
	RelevanceScore float32 `json:"relevance_score"`
}

// ProjectSummary describes the project an agent works in.
type ProjectSummary struct {
	ProjectName          string   `json:"project_name"`
	Language             string   `json:"language,omitempty"`
	KeyFiles             []string `json:"key_files,omitempty"`
	StructureDescription string   `json:"structure_description"`
}

// InjectedContext is what the harness adds to an agent's context.
type InjectedContext struct {
	Facts          []Fact          `json:"facts"`
	FileContents   []FileSnippet   `json:"file_contents,omitempty"`
	ProjectSummary *ProjectSummary `json:"project_summary,omitempty"`
	Knowledge      []string        `json:"knowledge,omitempty"`
	Suggestions    []string        `json:"suggestions,omitempty"`
}

// MarshalJSON writes facts as [] when empty, as the 2.4 implementation does.
func (c InjectedContext) MarshalJSON() ([]byte, error) {
	type plain InjectedContext
	if c.Facts == nil {
		c.Facts = []Fact{}
	}
	return json.Marshal(plain(c))
}

// ContextPerceptionDecision answers context_perception:
// allow {injected_context, metadata?}, block {reason, metadata?} or
// refine {refined_intent, refined_target, scope_hints} (the first two null-able).
type ContextPerceptionDecision struct {
	Decision        string // "allow", "block" or "refine"
	InjectedContext InjectedContext
	Reason          string
	Metadata        json.RawMessage
	RefinedIntent   *PerceptionIntent
	RefinedTarget   *PerceptionTarget
	ScopeHints      []string
}

// MarshalJSON writes the variant's fields only.
func (d ContextPerceptionDecision) MarshalJSON() ([]byte, error) {
	switch d.Decision {
	case "block":
		return marshalTagged("block", field{name: "reason", val: d.Reason},
			field{"metadata", d.Metadata, len(d.Metadata) == 0})
	case "refine":
		hints := d.ScopeHints
		if hints == nil {
			hints = []string{}
		}
		return marshalTagged("refine",
			field{name: "refined_intent", val: d.RefinedIntent},
			field{name: "refined_target", val: d.RefinedTarget},
			field{name: "scope_hints", val: hints})
	}
	return marshalTagged("allow", field{name: "injected_context", val: d.InjectedContext},
		field{"metadata", d.Metadata, len(d.Metadata) == 0})
}

// UnmarshalJSON reads any variant.
func (d *ContextPerceptionDecision) UnmarshalJSON(b []byte) error {
	var w struct {
		InjectedContext InjectedContext   `json:"injected_context"`
		Reason          string            `json:"reason"`
		Metadata        json.RawMessage   `json:"metadata"`
		RefinedIntent   *PerceptionIntent `json:"refined_intent"`
		RefinedTarget   *PerceptionTarget `json:"refined_target"`
		ScopeHints      []string          `json:"scope_hints"`
	}
	kind, err := decodeTagged("context_perception decision", b, variants{
		"allow": {"injected_context"}, "block": {"reason"}, "refine": {"scope_hints"}}, &w)
	if err != nil {
		return err
	}
	*d = ContextPerceptionDecision{Decision: kind, InjectedContext: w.InjectedContext,
		Reason: w.Reason, Metadata: nullToNil(w.Metadata), RefinedIntent: w.RefinedIntent,
		RefinedTarget: w.RefinedTarget, ScopeHints: w.ScopeHints}
	return nil
}

// MemoryRecallDecision answers memory_recall:
// allow {injected_facts, metadata?} or block {reason, metadata?}.
type MemoryRecallDecision struct {
	Decision      string // "allow" or "block"
	InjectedFacts []Fact
	Reason        string
	Metadata      json.RawMessage
}

// MarshalJSON writes the variant's fields only.
func (d MemoryRecallDecision) MarshalJSON() ([]byte, error) {
	if d.Decision == "block" {
		return marshalTagged("block", field{name: "reason", val: d.Reason},
			field{"metadata", d.Metadata, len(d.Metadata) == 0})
	}
	facts := d.InjectedFacts
	if facts == nil {
		facts = []Fact{}
	}
	return marshalTagged("allow", field{name: "injected_facts", val: facts},
		field{"metadata", d.Metadata, len(d.Metadata) == 0})
}

// UnmarshalJSON reads either variant.
func (d *MemoryRecallDecision) UnmarshalJSON(b []byte) error {
	var w struct {
		InjectedFacts []Fact          `json:"injected_facts"`
		Reason        string          `json:"reason"`
		Metadata      json.RawMessage `json:"metadata"`
	}
	kind, err := decodeTagged("memory_recall decision", b, variants{
		"allow": {"injected_facts"}, "block": {"reason"}}, &w)
	if err != nil {
		return err
	}
	*d = MemoryRecallDecision{Decision: kind, InjectedFacts: w.InjectedFacts,
		Reason: w.Reason, Metadata: nullToNil(w.Metadata)}
	return nil
}

// PlanningDecision answers planning: allow {selected_strategy,
// planning_template?, metadata?}, block {reason, metadata?} or
// modify {modified_task, hints?}.
type PlanningDecision struct {
	Decision         string // "allow", "block" or "modify"
	SelectedStrategy PlanningStrategy
	PlanningTemplate json.RawMessage
	Metadata         json.RawMessage
	Reason           string
	ModifiedTask     string
	Hints            []string
}

// MarshalJSON writes the variant's fields only.
func (d PlanningDecision) MarshalJSON() ([]byte, error) {
	switch d.Decision {
	case "block":
		return marshalTagged("block", field{name: "reason", val: d.Reason},
			field{"metadata", d.Metadata, len(d.Metadata) == 0})
	case "modify":
		return marshalTagged("modify", field{name: "modified_task", val: d.ModifiedTask},
			field{"hints", d.Hints, d.Hints == nil})
	}
	return marshalTagged("allow", field{name: "selected_strategy", val: d.SelectedStrategy},
		field{"planning_template", d.PlanningTemplate, len(d.PlanningTemplate) == 0},
		field{"metadata", d.Metadata, len(d.Metadata) == 0})
}

// UnmarshalJSON reads any variant.
func (d *PlanningDecision) UnmarshalJSON(b []byte) error {
	var w struct {
		SelectedStrategy PlanningStrategy `json:"selected_strategy"`
		PlanningTemplate json.RawMessage  `json:"planning_template"`
		Metadata         json.RawMessage  `json:"metadata"`
		Reason           string           `json:"reason"`
		ModifiedTask     string           `json:"modified_task"`
		Hints            []string         `json:"hints"`
	}
	kind, err := decodeTagged("planning decision", b, variants{
		"allow": {"selected_strategy"}, "block": {"reason"}, "modify": {"modified_task"}}, &w)
	if err != nil {
		return err
	}
	*d = PlanningDecision{Decision: kind, SelectedStrategy: w.SelectedStrategy,
		PlanningTemplate: nullToNil(w.PlanningTemplate), Metadata: nullToNil(w.Metadata),
		Reason: w.Reason, ModifiedTask: w.ModifiedTask, Hints: w.Hints}
	return nil
}

// ReasoningDecision answers reasoning: allow {hints?, metadata?} or
// block {reason, metadata?}.
type ReasoningDecision struct {
	Decision string // "allow" or "block"
	Hints    []string
	Reason   string
	Metadata json.RawMessage
}

// MarshalJSON writes the variant's fields only.
func (d ReasoningDecision) MarshalJSON() ([]byte, error) {
	if d.Decision == "block" {
		return marshalTagged("block", field{name: "reason", val: d.Reason},
			field{"metadata", d.Metadata, len(d.Metadata) == 0})
	}
	return marshalTagged("allow", field{"hints", d.Hints, d.Hints == nil},
		field{"metadata", d.Metadata, len(d.Metadata) == 0})
}

// UnmarshalJSON reads either variant.
func (d *ReasoningDecision) UnmarshalJSON(b []byte) error {
	var w struct {
		Hints    []string        `json:"hints"`
		Reason   string          `json:"reason"`
		Metadata json.RawMessage `json:"metadata"`
	}
	kind, err := decodeTagged("reasoning decision", b, variants{"allow": nil, "block": {"reason"}}, &w)
	if err != nil {
		return err
	}
	*d = ReasoningDecision{Decision: kind, Hints: w.Hints, Reason: w.Reason, Metadata: nullToNil(w.Metadata)}
	return nil
}

// RateLimitDecision answers rate_limit: retry {retry_after_ms, metadata?},
// queue {} or skip {reason}.
type RateLimitDecision struct {
	Decision     string // "retry", "queue" or "skip"
	RetryAfterMs uint64
	Metadata     json.RawMessage
	Reason       string
}

// MarshalJSON writes the variant's fields only.
func (d RateLimitDecision) MarshalJSON() ([]byte, error) {
	switch d.Decision {
	case "queue":
		return marshalTagged("queue")
	case "skip":
		return marshalTagged("skip", field{name: "reason", val: d.Reason})
	}
	return marshalTagged("retry", field{name: "retry_after_ms", val: d.RetryAfterMs},
		field{"metadata", d.Metadata, len(d.Metadata) == 0})
}

// UnmarshalJSON reads any variant.
func (d *RateLimitDecision) UnmarshalJSON(b []byte) error {
	var w struct {
		RetryAfterMs uint64          `json:"retry_after_ms"`
		Metadata     json.RawMessage `json:"metadata"`
		Reason       string          `json:"reason"`
	}
	kind, err := decodeTagged("rate_limit decision", b, variants{
		"retry": {"retry_after_ms"}, "queue": nil, "skip": {"reason"}}, &w)
	if err != nil {
		return err
	}
	*d = RateLimitDecision{Decision: kind, RetryAfterMs: w.RetryAfterMs, Metadata: nullToNil(w.Metadata), Reason: w.Reason}
	return nil
}

// ConfirmationDecision answers confirmation: escalate {}, approve {} or
// reject {reason}.
type ConfirmationDecision struct {
	Decision string // "escalate", "approve" or "reject"
	Reason   string
}

// MarshalJSON writes the variant's fields only.
func (d ConfirmationDecision) MarshalJSON() ([]byte, error) {
	switch d.Decision {
	case "approve":
		return marshalTagged("approve")
	case "reject":
		return marshalTagged("reject", field{name: "reason", val: d.Reason})
	}
	return marshalTagged("escalate")
}

// UnmarshalJSON reads any variant.
func (d *ConfirmationDecision) UnmarshalJSON(b []byte) error {
	var w struct {
		Reason string `json:"reason"`
	}
	kind, err := decodeTagged("confirmation decision", b, variants{
		"escalate": nil, "approve": nil, "reject": {"reason"}}, &w)
	if err != nil {
		return err
	}
	*d = ConfirmationDecision{Decision: kind, Reason: w.Reason}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
