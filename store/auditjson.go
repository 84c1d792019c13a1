package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// AuditFormatVersion is the value of the "v" key of every exported audit
// line. It changes only when a key changes meaning or type; new keys may be
// added within a version and readers ignore keys they do not know.
const AuditFormatVersion = 1

// MaxAuditLineBytes bounds one line read by AuditDecoder.
const MaxAuditLineBytes = MaxAuditJSONBytes + 16*MaxAuditFieldBytes

// auditLine is the JSON shape of docs/audit-format.md. Field order here is
// the order of the keys on every line.
type auditLine struct {
	V              int             `json:"v"`
	ID             int64           `json:"id"`
	Time           string          `json:"time"`
	SessionID      string          `json:"session_id"`
	AgentID        string          `json:"agent_id"`
	EventType      string          `json:"event_type"`
	Blocking       bool            `json:"blocking"`
	Outcome        string          `json:"outcome"`
	RuleID         string          `json:"rule_id"`
	PolicyVersion  string          `json:"policy_version"`
	Principal      string          `json:"principal"`
	Transport      string          `json:"transport"`
	LatencyNs      int64           `json:"latency_ns"`
	DescriptorHash string          `json:"descriptor_hash"`
	Error          string          `json:"error"`
	Event          json.RawMessage `json:"event"`
	Decision       json.RawMessage `json:"decision"`
	Redacted       []string        `json:"redacted,omitempty"`
	Shadow         json.RawMessage `json:"shadow,omitempty"`
	ShadowChanged  bool            `json:"shadow_changed,omitempty"`
}

// MarshalJSON writes r in the audit line format (every key present, time in
// RFC 3339 UTC with nanoseconds, event and decision as JSON or null).
func (r AuditRecord) MarshalJSON() ([]byte, error) {
	l := auditLine{
		V: AuditFormatVersion, ID: r.ID, Time: r.Time.UTC().Format(time.RFC3339Nano),
		SessionID: r.SessionID, AgentID: r.AgentID, EventType: r.EventType, Blocking: r.Blocking,
		Outcome: r.Outcome, RuleID: r.RuleID, PolicyVersion: r.PolicyVersion, Principal: r.Principal,
		Transport: r.Transport, LatencyNs: int64(r.Latency), DescriptorHash: r.DescriptorHash,
		Error: r.Error, Event: rawOrNull(r.Event), Decision: rawOrNull(r.Decision),
		Redacted: r.Redacted, Shadow: r.Shadow, ShadowChanged: r.ShadowChanged,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// UnmarshalJSON reads one audit line. It rejects a missing or unknown
// format version and ignores keys it does not know.
func (r *AuditRecord) UnmarshalJSON(b []byte) error {
	var l auditLine
	if err := json.Unmarshal(b, &l); err != nil {
		return fmt.Errorf("audit line: %w", err)
	}
	if l.V != AuditFormatVersion {
		return fmt.Errorf("audit line: format version %d, want %d", l.V, AuditFormatVersion)
	}
	t, err := time.Parse(time.RFC3339Nano, l.Time)
	if err != nil {
		return fmt.Errorf("audit line %d: time: %w", l.ID, err)
	}
	*r = AuditRecord{
		ID: l.ID, Time: t, SessionID: l.SessionID, AgentID: l.AgentID, EventType: l.EventType,
		Blocking: l.Blocking, Event: nullToNil(l.Event), Decision: nullToNil(l.Decision),
		Outcome: l.Outcome, RuleID: l.RuleID, PolicyVersion: l.PolicyVersion, Principal: l.Principal,
		Transport: l.Transport, Latency: time.Duration(l.LatencyNs), DescriptorHash: l.DescriptorHash,
		Error: l.Error, Redacted: l.Redacted, Shadow: nullToNil(l.Shadow), ShadowChanged: l.ShadowChanged,
	}
	return nil
}

func rawOrNull(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("null")
	}
	return r
}

func nullToNil(r json.RawMessage) json.RawMessage {
	if len(r) == 0 || string(r) == "null" {
		return nil
	}
	return r
}

// AuditEncoder writes audit records as JSON Lines: one compact object per
// line, no HTML escaping, in the format of docs/audit-format.md.
type AuditEncoder struct{ enc *json.Encoder }

// NewAuditEncoder returns an encoder writing to w.
func NewAuditEncoder(w io.Writer) *AuditEncoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &AuditEncoder{enc: enc}
}

// Encode writes r and a newline.
func (e *AuditEncoder) Encode(r *AuditRecord) error { return e.enc.Encode(r) }

// AuditDecoder reads the JSON Lines written by AuditEncoder. Blank lines
// are skipped; a line longer than MaxAuditLineBytes is an error.
type AuditDecoder struct {
	sc   *bufio.Scanner
	line int
}

// NewAuditDecoder returns a decoder reading from r.
func NewAuditDecoder(r io.Reader) *AuditDecoder {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxAuditLineBytes)
	return &AuditDecoder{sc: sc}
}

// Decode reads the next record into r. It returns io.EOF after the last
// one; other errors name the line number.
func (d *AuditDecoder) Decode(r *AuditRecord) error {
	for d.sc.Scan() {
		d.line++
		b := bytes.TrimSpace(d.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if err := r.UnmarshalJSON(b); err != nil {
			return fmt.Errorf("line %d: %w", d.line, err)
		}
		return nil
	}
	if err := d.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("line %d: longer than %d bytes: %w", d.line+1, MaxAuditLineBytes, err)
		}
		return fmt.Errorf("line %d: %w", d.line+1, err)
	}
	return io.EOF
}
