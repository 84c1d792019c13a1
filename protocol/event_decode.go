package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/ahp-go/ahp/internal/jsonscan"
)

// DecodeEvent decodes an Event from b without copying: Payload and Metadata
// alias b, so b must not change while e is in use. Errors name the field.
// Unknown members are ignored, as the 2.4 implementation does.
func DecodeEvent(b []byte, e *Event) error {
	if !jsonscan.Valid(b) {
		return errors.New("event: malformed JSON")
	}
	return DecodeValidEvent(b, e)
}

// DecodeValidEvent is DecodeEvent for input already known to be well-formed
// JSON, such as the params of a message jsonrpc.Decode accepted. It skips
// the validation pass.
func DecodeValidEvent(b []byte, e *Event) error {
	*e = Event{}
	var seenType, seenSession, seenAgent, seenTS, seenDepth bool
	err := jsonscan.ObjectValid(b, func(key, val []byte) error {
		switch string(key) {
		case "event_type":
			s, ok := jsonscan.String(val)
			if !ok {
				return errors.New("event_type: expected a string")
			}
			t := internEventType(s)
			if !t.Known() {
				return fmt.Errorf("event_type: unknown event type %.64q", s)
			}
			e.EventType, seenType = t, true
		case "session_id":
			s, ok := jsonscan.String(val)
			if !ok {
				return errors.New("session_id: expected a string")
			}
			e.SessionID, seenSession = validUTF8(s), true
		case "agent_id":
			s, ok := jsonscan.String(val)
			if !ok {
				return errors.New("agent_id: expected a string")
			}
			e.AgentID, seenAgent = validUTF8(s), true
		case "timestamp":
			s, ok := jsonscan.String(val)
			if !ok {
				return errors.New("timestamp: expected a string")
			}
			e.Timestamp, seenTS = validUTF8(s), true
		case "depth":
			n, ok := jsonscan.Uint(val, math.MaxUint32)
			if !ok {
				return errors.New("depth: expected a non-negative integer")
			}
			e.Depth, seenDepth = uint32(n), true
		case "payload":
			e.Payload = val
		case "context":
			if string(val) == "null" {
				return nil
			}
			e.Context = new(EventContext)
			if err := json.Unmarshal(val, e.Context); err != nil {
				return fmt.Errorf("context: %w", err)
			}
		case "metadata":
			if string(val) != "null" {
				e.Metadata = val
			}
		default:
			if name, ok := jsonscan.CaseVariant(key, eventFields...); ok {
				return fmt.Errorf("member %q: differs from %q only in letter case, which readers treat differently", jsonscan.ReportedKey(key), name)
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, jsonscan.ErrNotObject):
		return errors.New("event: expected a JSON object")
	case err != nil:
		return err
	case !seenType:
		return errors.New("missing field event_type")
	case !seenSession:
		return errors.New("missing field session_id")
	case !seenAgent:
		return errors.New("missing field agent_id")
	case !seenTS:
		return errors.New("missing field timestamp")
	case !seenDepth:
		return errors.New("missing field depth")
	case e.Payload == nil:
		return errors.New("missing field payload")
	}
	return nil
}

// eventFields are the members of an event object.
var eventFields = []string{"event_type", "session_id", "agent_id", "timestamp", "depth", "payload", "context", "metadata"}

// UnmarshalJSON decodes an event and checks its required fields.
func (e *Event) UnmarshalJSON(b []byte) error {
	if err := DecodeEvent(b, e); err != nil {
		return err
	}
	e.Payload = append(json.RawMessage(nil), e.Payload...)
	if e.Metadata != nil {
		e.Metadata = append(json.RawMessage(nil), e.Metadata...)
	}
	return nil
}

// internEventType maps s to the shared constant so decoding does not allocate.
func internEventType(s string) EventType {
	for _, t := range AllEventTypes {
		if string(t) == s {
			return t
		}
	}
	return EventType(s)
}

// validUTF8 returns s with every byte that is not part of a valid UTF-8
// sequence replaced by U+FFFD, as encoding/json does when it decodes a
// string. Without it an event decoded here would differ from the same event
// decoded by encoding/json, and would change when encoded and decoded again.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
