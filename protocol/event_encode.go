package protocol

import (
	"encoding/json"
	"strconv"
)

// AppendJSON appends the JSON encoding of e to b, as json.Marshal would
// write it, without re-validating Payload and Metadata (they must be valid
// JSON, as they are when e came from DecodeEvent or UnmarshalJSON).
func (e *Event) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"event_type":`...)
	b = appendString(b, string(e.EventType))
	b = append(b, `,"session_id":`...)
	b = appendString(b, e.SessionID)
	b = append(b, `,"agent_id":`...)
	b = appendString(b, e.AgentID)
	b = append(b, `,"timestamp":`...)
	b = appendString(b, e.Timestamp)
	b = append(b, `,"depth":`...)
	b = strconv.AppendUint(b, uint64(e.Depth), 10)
	b = append(b, `,"payload":`...)
	if len(e.Payload) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Payload...)
	}
	if e.Context != nil {
		c, err := json.Marshal(e.Context)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"context":`...)
		b = append(b, c...)
	}
	if len(e.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		b = append(b, e.Metadata...)
	}
	return append(b, '}'), nil
}
