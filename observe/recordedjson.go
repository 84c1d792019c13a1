package observe

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// The ahp/recorded action (one per audit record) is the action observers
// get most: with a dashboard on a busy session, one per decision. Its
// encoding here gives the very bytes encoding/json gives (tested), about
// four times faster, and tells where the entry's event sits in them, so
// that a client that asked for lean timeline entries
// (_meta.ahp.leanTimeline) gets the same bytes without the event, at
// the cost of one copy, not another encoding.

// recordedJSON is an encoded ahp/recorded notification: data is the
// whole JSON-RPC notification, params its params, and data[evFrom:evTo]
// the entry's `,"event":…` member (evFrom == evTo when it has none).
type recordedJSON struct {
	data, params []byte
	evFrom, evTo int
}

// notificationHead starts every action notification; params follow.
const notificationHead = `{"jsonrpc":"2.0","method":"action","params":`

// encodeRecorded encodes the ahp/recorded action of e on channel with
// serverSeq seq. ok is false when a value needs what only encoding/json
// does (an event that is not valid JSON, a time outside years 0–9999, a
// latency that is not finite): the caller then encodes it the usual way.
func encodeRecorded(channel string, e *Entry, seq uint64) (r recordedJSON, ok bool) {
	if y := e.Time.Year(); y < 0 || y > 9999 || math.IsNaN(e.LatencyMs) || math.IsInf(e.LatencyMs, 0) {
		return r, false
	}
	b := make([]byte, 0, 512+len(e.Event)+len(e.Reason))
	b = append(b, notificationHead...)
	b = append(b, `{"channel":`...)
	b = appendJSONString(b, channel)
	b = append(b, `,"action":{"entry":{`...)
	if e.AuditID != 0 {
		b = append(b, `"auditId":`...)
		b = strconv.AppendInt(b, e.AuditID, 10)
		b = append(b, ',')
	}
	b = append(b, `"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","eventType":`...)
	b = appendJSONString(b, e.EventType)
	b = append(b, `,"agentId":`...)
	b = appendJSONString(b, e.AgentID)
	b = append(b, `,"depth":`...)
	b = strconv.AppendUint(b, uint64(e.Depth), 10)
	b = append(b, `,"blocking":`...)
	b = strconv.AppendBool(b, e.Blocking)
	b = appendOptString(b, `,"outcome":`, e.Outcome)
	b = appendOptString(b, `,"ruleId":`, e.RuleID)
	b = appendOptString(b, `,"reason":`, e.Reason)
	b = append(b, `,"latencyMs":`...)
	b = appendJSONFloat(b, e.LatencyMs)
	b = appendOptString(b, `,"policyVersion":`, e.PolicyVersion)
	b = appendOptString(b, `,"principal":`, e.Principal)
	b = appendOptString(b, `,"transport":`, e.Transport)
	if len(e.Redacted) > 0 {
		b = append(b, `,"redacted":[`...)
		for i, s := range e.Redacted {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, s)
		}
		b = append(b, ']')
	}
	b = appendOptString(b, `,"error":`, e.Error)
	b = appendOptString(b, `,"toolName":`, e.ToolName)
	b = appendOptString(b, `,"toolCallId":`, e.ToolCallID)
	b = appendOptString(b, `,"approvalId":`, e.ApprovalID)
	b = appendOptString(b, `,"approvalStatus":`, e.ApprovalStatus)
	b = appendOptString(b, `,"decidedBy":`, e.DecidedBy)
	b = appendOptString(b, `,"approvalReason":`, e.ApprovalReason)
	b = appendOptString(b, `,"framework":`, e.Framework)
	b = appendOptString(b, `,"runId":`, e.RunID)
	b = append(b, `,"eventBytes":`...)
	b = strconv.AppendInt(b, int64(e.EventBytes), 10)
	r.evFrom = len(b)
	if len(e.Event) > 0 {
		b = append(b, `,"event":`...)
		var ok bool
		if b, ok = appendCompactEvent(b, e.Event); !ok {
			return r, false
		}
	}
	r.evTo = len(b)
	b = append(b, `},"type":"ahp/recorded"},"serverSeq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, "}}"...)
	r.data = b
	r.params = b[len(notificationHead) : len(b)-1]
	return r, true
}

// lean returns the notification without the entry's event (its size
// stays, in eventBytes): data itself when there is none.
func (r *recordedJSON) lean() []byte {
	if r.evFrom == r.evTo {
		return r.data
	}
	out := make([]byte, 0, len(r.data)-(r.evTo-r.evFrom))
	return append(append(out, r.data[:r.evFrom]...), r.data[r.evTo:]...)
}

// appendCompactEvent appends ev as encoding/json writes a RawMessage:
// compacted, with <, >, & and U+2028/U+2029 escaped. ok is false when ev
// is not valid JSON.
func appendCompactEvent(b, ev []byte) ([]byte, bool) {
	buf := bytes.NewBuffer(b)
	if !needsHTMLEscape(ev) {
		if json.Compact(buf, ev) != nil {
			return b, false
		}
		return buf.Bytes(), true
	}
	var tmp bytes.Buffer
	if json.Compact(&tmp, ev) != nil {
		return b, false
	}
	json.HTMLEscape(buf, tmp.Bytes())
	return buf.Bytes(), true
}

// needsHTMLEscape reports whether ev may hold what encoding/json escapes
// in a RawMessage: <, >, & or U+2028/U+2029 (any 0xE2 byte counts: the
// first byte of those two, and of some other characters, which then take
// the slower way to the same bytes).
func needsHTMLEscape(ev []byte) bool {
	for _, c := range ev {
		if c == '<' || c == '>' || c == '&' || c == 0xE2 {
			return true
		}
	}
	return false
}

func appendOptString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, key...), s)
}

// appendJSONString appends s as encoding/json writes it: quoted, with
// <, >, & and U+2028/U+2029 escaped and invalid UTF-8 replaced. Strings
// of plain printable ASCII (nearly all) are copied as they are; any
// other goes through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSONFloat appends a finite f as encoding/json writes a float64:
// the shortest decimal that reads back as f, in exponent form below 1e-6
// and from 1e21 on (with a two-digit exponent written without its
// leading zero).
func appendJSONFloat(b []byte, f float64) []byte {
	a := math.Abs(f)
	if a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	// e-07 becomes e-7 (a positive exponent keeps its zero: e+21).
	if n := len(b) - start; n >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
		b[len(b)-2] = b[len(b)-1]
		b = b[:len(b)-1]
	}
	return b
}
