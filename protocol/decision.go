package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/ahp-go/ahp/internal/jsonscan"
)

// DecisionKind is the "decision" tag of a generic Decision.
type DecisionKind string

// The generic decision kinds.
const (
	DecisionAllow    DecisionKind = "allow"
	DecisionBlock    DecisionKind = "block"
	DecisionModify   DecisionKind = "modify"
	DecisionDefer    DecisionKind = "defer"
	DecisionEscalate DecisionKind = "escalate"
)

// Decision is the generic answer to pre_action, pre_prompt and every item of
// a batch. Which fields are written depends on Kind:
//
//	allow    modified_payload?, metadata?
//	block    reason, metadata?
//	modify   modified_payload, metadata?
//	defer    retry_after_ms, reason?
//	escalate reason, escalation_target?
type Decision struct {
	Kind             DecisionKind
	ModifiedPayload  json.RawMessage
	Reason           string
	Metadata         json.RawMessage
	RetryAfterMs     uint64
	EscalationTarget string
}

// Allow returns an allow decision.
func Allow() Decision { return Decision{Kind: DecisionAllow} }

// Block returns a block decision with a reason.
func Block(reason string) Decision { return Decision{Kind: DecisionBlock, Reason: reason} }

// Modify returns a modify decision carrying the payload to use instead.
func Modify(payload json.RawMessage) Decision {
	return Decision{Kind: DecisionModify, ModifiedPayload: payload}
}

// Defer returns a defer decision asking the agent to retry later.
func Defer(retryAfterMs uint64, reason string) Decision {
	return Decision{Kind: DecisionDefer, RetryAfterMs: retryAfterMs, Reason: reason}
}

// Escalate returns an escalate decision.
func Escalate(reason, target string) Decision {
	return Decision{Kind: DecisionEscalate, Reason: reason, EscalationTarget: target}
}

// Allowed reports whether the agent may go ahead (allow or modify).
func (d Decision) Allowed() bool { return d.Kind == DecisionAllow || d.Kind == DecisionModify }

// MarshalJSON writes exactly the fields of d's kind.
func (d Decision) MarshalJSON() ([]byte, error) {
	return d.AppendJSON(make([]byte, 0, 64))
}

// AppendJSON appends d's JSON encoding to b. It fails if d.Kind is not one
// of the five kinds or if a raw field is not valid JSON.
func (d Decision) AppendJSON(b []byte) ([]byte, error) {
	var err error
	b = append(b, `{"decision":"`...)
	switch d.Kind {
	case DecisionAllow, DecisionModify:
		b = append(b, d.Kind...)
		b = append(b, '"')
		if d.Kind == DecisionModify || len(d.ModifiedPayload) > 0 {
			mp := d.ModifiedPayload
			if len(mp) == 0 {
				mp = json.RawMessage("null")
			}
			b = append(b, `,"modified_payload":`...)
			if b, err = appendCompact(b, "modified_payload", mp); err != nil {
				return nil, err
			}
		}
		if b, err = appendRawField(b, "metadata", d.Metadata); err != nil {
			return nil, err
		}
	case DecisionBlock:
		b = append(b, `block","reason":`...)
		b = appendString(b, d.Reason)
		if b, err = appendRawField(b, "metadata", d.Metadata); err != nil {
			return nil, err
		}
	case DecisionDefer:
		b = append(b, `defer","retry_after_ms":`...)
		b = strconv.AppendUint(b, d.RetryAfterMs, 10)
		if d.Reason != "" {
			b = append(b, `,"reason":`...)
			b = appendString(b, d.Reason)
		}
	case DecisionEscalate:
		b = append(b, `escalate","reason":`...)
		b = appendString(b, d.Reason)
		if d.EscalationTarget != "" {
			b = append(b, `,"escalation_target":`...)
			b = appendString(b, d.EscalationTarget)
		}
	default:
		return nil, fmt.Errorf("decision: unknown kind %.64q", d.Kind)
	}
	return append(b, '}'), nil
}

type decisionWire struct {
	Decision         DecisionKind    `json:"decision"`
	ModifiedPayload  json.RawMessage `json:"modified_payload"`
	Reason           *string         `json:"reason"`
	Metadata         json.RawMessage `json:"metadata"`
	RetryAfterMs     *uint64         `json:"retry_after_ms"`
	EscalationTarget *string         `json:"escalation_target"`
}

// UnmarshalJSON reads any generic decision and checks that the fields its
// kind requires are there. Fields that do not belong to the kind are
// ignored, as the 2.4 implementation ignores them, so that the decoded value
// re-encodes to the same decision.
func (d *Decision) UnmarshalJSON(b []byte) error {
	var w decisionWire
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("decision: %w", err)
	}
	out := Decision{Kind: w.Decision}
	switch w.Decision {
	case DecisionAllow:
		out.ModifiedPayload = nullToNil(w.ModifiedPayload)
		out.Metadata = nullToNil(w.Metadata)
	case DecisionBlock:
		if w.Reason == nil {
			return fmt.Errorf("block decision: missing field reason")
		}
		out.Reason = *w.Reason
		out.Metadata = nullToNil(w.Metadata)
	case DecisionModify:
		if w.ModifiedPayload == nil {
			return fmt.Errorf("modify decision: missing field modified_payload")
		}
		out.ModifiedPayload = w.ModifiedPayload
		out.Metadata = nullToNil(w.Metadata)
	case DecisionDefer:
		if w.RetryAfterMs == nil {
			return fmt.Errorf("defer decision: missing field retry_after_ms")
		}
		out.RetryAfterMs = *w.RetryAfterMs
		out.Reason = deref(w.Reason)
	case DecisionEscalate:
		if w.Reason == nil {
			return fmt.Errorf("escalate decision: missing field reason")
		}
		out.Reason = *w.Reason
		out.EscalationTarget = deref(w.EscalationTarget)
	case "":
		return fmt.Errorf("decision: missing field decision")
	default:
		return fmt.Errorf("decision: unknown variant %.64q", w.Decision)
	}
	*d = out
	return nil
}

// nullToNil maps an absent or null raw value to nil.
func nullToNil(r json.RawMessage) json.RawMessage {
	if len(r) == 0 || string(r) == "null" {
		return nil
	}
	return r
}

// appendRawField appends ,"name":v when v is set. v is compacted, which
// also checks that it is valid JSON.
func appendRawField(b []byte, name string, v json.RawMessage) ([]byte, error) {
	if len(v) == 0 {
		return b, nil
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendCompact(b, name, v)
}

// appendCompact appends raw JSON v to b without insignificant space. Valid
// input with no space, tab or newline byte at all is appended as it is.
func appendCompact(b []byte, name string, v json.RawMessage) ([]byte, error) {
	if !bytes.ContainsAny(v, " \t\n\r") {
		if !jsonscan.ValidStd(v) {
			return nil, fmt.Errorf("decision: %s: invalid JSON", name)
		}
		return append(b, v...), nil
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, v); err != nil {
		return nil, fmt.Errorf("decision: %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// appendString appends s as a JSON string. Plain ASCII takes a fast path;
// anything else goes through encoding/json's escaping.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			return appendStringSlow(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendStringSlow escapes s as serde_json does: no HTML escaping.
func appendStringSlow(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
}
