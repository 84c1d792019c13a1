package harness

import (
	"encoding/json"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/redact"
)

// sealed is an event as it may outlive its request: the result of the one
// redaction step that sits between deciding and storing. The policy decides
// on the event as received; every write the harness makes (audit records,
// approvals, run records) and every log line about the event takes a
// sealed value, so none can see the raw event.
type sealed struct {
	r     *redact.Redactor
	ev    *protocol.Event // the redacted event (ev itself when clean)
	kinds redact.Kinds    // detector kinds redacted so far
}

// seal redacts ev. scan is what the policy's secret detectors found in the
// payload: a payload they scanned and found clean is not scanned again.
func (h *Harness) seal(ev *protocol.Event, scan policy.SecretScan) sealed {
	rev, kinds := h.red.Event(ev, scan == policy.SecretsNone)
	return sealed{r: h.red, ev: rev, kinds: kinds}
}

// text redacts a string that goes with the event (a reason, an error).
func (s *sealed) text(t string) string {
	if t == "" {
		return t
	}
	out, k := s.r.String(t)
	s.kinds.Merge(k)
	return out
}

// decision redacts the JSON of the decision recorded with the event.
func (s *sealed) decision(d json.RawMessage) json.RawMessage {
	out, k := s.r.Decision(d)
	s.kinds.Merge(k)
	return out
}

// sealRejected redacts what is kept of an event the server refused: the
// raw message, its ids and the refusal reason (which may quote the input).
// The raw message has its secrets replaced in place, never re-encoded, so
// that it still shows what made it refused.
func (h *Harness) sealRejected(raw []byte, ev *protocol.Event, reason string) ([]byte, *protocol.Event, string, []string) {
	s := &sealed{r: h.red}
	out, k := h.red.Raw(raw)
	s.kinds.Merge(k)
	cp := *ev
	cp.SessionID, cp.AgentID = s.text(ev.SessionID), s.text(ev.AgentID)
	reason = s.text(reason)
	return out, &cp, reason, s.kinds.List()
}
