package protocol

import "encoding/json"

// IdleDecision answers an idle event: allow {} or defer {reason?}.
// Encoding fails unless Decision names one of the variants.
type IdleDecision struct {
	Decision string // "allow" or "defer"
	Reason   string // defer only, optional
}

// MarshalJSON writes the variant's fields only.
func (d IdleDecision) MarshalJSON() ([]byte, error) {
	switch d.Decision {
	case "allow":
		return marshalTagged("allow")
	case "defer":
		return marshalTagged("defer", field{"reason", d.Reason, d.Reason == ""})
	}
	return nil, errUnknownKind("idle", d.Decision)
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
	*d = IdleDecision{Decision: kind}
	if kind == "defer" {
		d.Reason = deref(w.Reason)
	}
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
// Encoding fails unless Decision names one of the variants.
type IntentDetectionDecision struct {
	Decision       string // "allow" or "block"
	DetectedIntent string
	Confidence     float32
	TargetHints    *TargetHints
	Reason         string
}

// MarshalJSON writes the variant's fields only.
func (d IntentDetectionDecision) MarshalJSON() ([]byte, error) {
	switch d.Decision {
	case "allow":
		return marshalTagged("allow",
			field{name: "detected_intent", val: d.DetectedIntent},
			field{name: "confidence", val: d.Confidence},
			field{"target_hints", d.TargetHints, d.TargetHints == nil})
	case "block":
		return marshalTagged("block", field{name: "reason", val: d.Reason})
	}
	return nil, errUnknownKind("intent_detection", d.Decision)
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
	*d = IntentDetectionDecision{Decision: kind}
	if kind == "allow" {
		d.DetectedIntent, d.Confidence, d.TargetHints = w.DetectedIntent, w.Confidence, w.TargetHints
	} else {
		d.Reason = w.Reason
	}
	return nil
}

// FileSnippet is a piece of a file injected as context.
type FileSnippet struct {
	Path           string  `json:"path"`
	Snippet        string  `json:"snippet"`
	RelevanceScore float32 `json:"relevance_score"`
}

// UnmarshalJSON checks the required fields.
func (s *FileSnippet) UnmarshalJSON(b []byte) error {
	type plain FileSnippet
	return strictDecode(b, "file_contents", []string{"path", "snippet", "relevance_score"}, (*plain)(s))
}

// ProjectSummary describes the project an agent works in.
type ProjectSummary struct {
	ProjectName          string   `json:"project_name"`
	Language             string   `json:"language,omitempty"`
	KeyFiles             []string `json:"key_files,omitempty"`
	StructureDescription string   `json:"structure_description"`
}

// UnmarshalJSON checks the required fields.
func (s *ProjectSummary) UnmarshalJSON(b []byte) error {
	type plain ProjectSummary
	return strictDecode(b, "project_summary", []string{"project_name", "structure_description"}, (*plain)(s))
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
	c.Facts = emptyIfNil(c.Facts)
	return json.Marshal(plain(c))
}

// UnmarshalJSON checks the required fields.
func (c *InjectedContext) UnmarshalJSON(b []byte) error {
	type plain InjectedContext
	return strictDecode(b, "injected_context", []string{"facts"}, (*plain)(c))
}

// ContextPerceptionDecision answers context_perception:
// allow {injected_context, metadata?}, block {reason, metadata?} or
// refine {refined_intent, refined_target, scope_hints} (the first two null-able).
// Encoding fails unless Decision names one of the variants.
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
	case "allow":
		return marshalTagged("allow", field{name: "injected_context", val: d.InjectedContext},
			field{"metadata", d.Metadata, len(d.Metadata) == 0})
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
	return nil, errUnknownKind("context_perception", d.Decision)
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
	*d = ContextPerceptionDecision{Decision: kind}
	switch kind {
	case "allow":
		d.InjectedContext, d.Metadata = w.InjectedContext, nullToNil(w.Metadata)
	case "block":
		d.Reason, d.Metadata = w.Reason, nullToNil(w.Metadata)
	case "refine":
		d.RefinedIntent, d.RefinedTarget, d.ScopeHints = w.RefinedIntent, w.RefinedTarget, w.ScopeHints
	}
	return nil
}

// MemoryRecallDecision answers memory_recall:
// allow {injected_facts, metadata?} or block {reason, metadata?}.
// Encoding fails unless Decision names one of the variants.
type MemoryRecallDecision struct {
	Decision      string // "allow" or "block"
	InjectedFacts []Fact
	Reason        string
	Metadata      json.RawMessage
}

// MarshalJSON writes the variant's fields only.
func (d MemoryRecallDecision) MarshalJSON() ([]byte, error) {
	switch d.Decision {
	case "allow":
		return marshalTagged("allow", field{name: "injected_facts", val: emptyIfNil(d.InjectedFacts)},
			field{"metadata", d.Metadata, len(d.Metadata) == 0})
	case "block":
		return marshalTagged("block", field{name: "reason", val: d.Reason},
			field{"metadata", d.Metadata, len(d.Metadata) == 0})
	}
	return nil, errUnknownKind("memory_recall", d.Decision)
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
	*d = MemoryRecallDecision{Decision: kind, Metadata: nullToNil(w.Metadata)}
	if kind == "allow" {
		d.InjectedFacts = w.InjectedFacts
	} else {
		d.Reason = w.Reason
	}
	return nil
}

// PlanningDecision answers planning: allow {selected_strategy,
// planning_template?, metadata?}, block {reason, metadata?} or
// modify {modified_task, hints?}.
// Encoding fails unless Decision names one of the variants.
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
	case "allow":
		return marshalTagged("allow", field{name: "selected_strategy", val: d.SelectedStrategy},
			field{"planning_template", d.PlanningTemplate, len(d.PlanningTemplate) == 0},
			field{"metadata", d.Metadata, len(d.Metadata) == 0})
	case "block":
		return marshalTagged("block", field{name: "reason", val: d.Reason},
			field{"metadata", d.Metadata, len(d.Metadata) == 0})
	case "modify":
		return marshalTagged("modify", field{name: "modified_task", val: d.ModifiedTask},
			field{"hints", d.Hints, d.Hints == nil})
	}
	return nil, errUnknownKind("planning", d.Decision)
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
	*d = PlanningDecision{Decision: kind}
	switch kind {
	case "allow":
		d.SelectedStrategy, d.PlanningTemplate = w.SelectedStrategy, nullToNil(w.PlanningTemplate)
		d.Metadata = nullToNil(w.Metadata)
	case "block":
		d.Reason, d.Metadata = w.Reason, nullToNil(w.Metadata)
	case "modify":
		d.ModifiedTask, d.Hints = w.ModifiedTask, w.Hints
	}
	return nil
}

// ReasoningDecision answers reasoning: allow {hints?, metadata?} or
// block {reason, metadata?}.
// Encoding fails unless Decision names one of the variants.
type ReasoningDecision struct {
	Decision string // "allow" or "block"
	Hints    []string
	Reason   string
	Metadata json.RawMessage
}

// MarshalJSON writes the variant's fields only.
func (d ReasoningDecision) MarshalJSON() ([]byte, error) {
	switch d.Decision {
	case "allow":
		return marshalTagged("allow", field{"hints", d.Hints, d.Hints == nil},
			field{"metadata", d.Metadata, len(d.Metadata) == 0})
	case "block":
		return marshalTagged("block", field{name: "reason", val: d.Reason},
			field{"metadata", d.Metadata, len(d.Metadata) == 0})
	}
	return nil, errUnknownKind("reasoning", d.Decision)
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
	*d = ReasoningDecision{Decision: kind, Metadata: nullToNil(w.Metadata)}
	if kind == "allow" {
		d.Hints = w.Hints
	} else {
		d.Reason = w.Reason
	}
	return nil
}

// RateLimitDecision answers rate_limit: retry {retry_after_ms, metadata?},
// queue {} or skip {reason}.
// Encoding fails unless Decision names one of the variants.
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
	case "retry":
		return marshalTagged("retry", field{name: "retry_after_ms", val: d.RetryAfterMs},
			field{"metadata", d.Metadata, len(d.Metadata) == 0})
	}
	return nil, errUnknownKind("rate_limit", d.Decision)
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
	*d = RateLimitDecision{Decision: kind}
	switch kind {
	case "retry":
		d.RetryAfterMs, d.Metadata = w.RetryAfterMs, nullToNil(w.Metadata)
	case "skip":
		d.Reason = w.Reason
	}
	return nil
}

// ConfirmationDecision answers confirmation: escalate {}, approve {} or
// reject {reason}.
// Encoding fails unless Decision names one of the variants.
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
	case "escalate":
		return marshalTagged("escalate")
	}
	return nil, errUnknownKind("confirmation", d.Decision)
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
	*d = ConfirmationDecision{Decision: kind}
	if kind == "reject" {
		d.Reason = w.Reason
	}
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
