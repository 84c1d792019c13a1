package replay

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/ahp-go/ahp/internal/jsonscan"
	"github.com/ahp-go/ahp/store"
)

// decodeLine reads one export line into r without reflection. It handles
// only the plain lines an export writes (known keys spelled exactly,
// strings without escapes, integer numbers) and reports false for anything
// else, which the caller then hands to store.AuditRecord.UnmarshalJSON, the
// reference decoder. Whenever it reports true, r is what the reference
// decoder gives (a differential test and a fuzz test hold it to that). It
// exists because decoding is half the cost of a replay.
func decodeLine(b []byte, r *store.AuditRecord) bool {
	if !jsonscan.Valid(b) {
		return false
	}
	*r = store.AuditRecord{}
	var version int64 = -1
	ok := true
	str := func(v []byte, dst *string) {
		if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
			ok = false
			return
		}
		*dst = string(v[1 : len(v)-1])
	}
	num := func(v []byte, dst *int64) {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			ok = false
			return
		}
		*dst = n
	}
	raw := func(v []byte, dst *[]byte) {
		if string(v) == "null" {
			*dst = nil
			return
		}
		*dst = append([]byte(nil), v...)
	}
	var timeText string
	var latency int64
	err := jsonscan.ObjectValid(b, func(key, v []byte) error {
		switch string(key) {
		case "v":
			num(v, &version)
		case "id":
			num(v, &r.ID)
		case "time":
			str(v, &timeText)
		case "session_id":
			str(v, &r.SessionID)
		case "agent_id":
			str(v, &r.AgentID)
		case "event_type":
			str(v, &r.EventType)
		case "blocking":
			switch string(v) {
			case "true":
				r.Blocking = true
			case "false":
				r.Blocking = false
			default:
				ok = false
			}
		case "outcome":
			str(v, &r.Outcome)
		case "rule_id":
			str(v, &r.RuleID)
		case "policy_version":
			str(v, &r.PolicyVersion)
		case "principal":
			str(v, &r.Principal)
		case "transport":
			str(v, &r.Transport)
		case "latency_ns":
			num(v, &latency)
		case "descriptor_hash":
			str(v, &r.DescriptorHash)
		case "error":
			str(v, &r.Error)
		case "event":
			raw(v, (*[]byte)(&r.Event))
		case "decision":
			raw(v, (*[]byte)(&r.Decision))
		default:
			// encoding/json matches keys without regard to case; leave
			// anything that is not plainly unknown to it.
			if foldsToKnownKey(key) || bytes.IndexByte(key, '\\') >= 0 {
				ok = false
			}
		}
		return nil
	})
	if err != nil || !ok || version != store.AuditFormatVersion {
		return false
	}
	t, perr := time.Parse(time.RFC3339Nano, timeText)
	if perr != nil {
		return false
	}
	r.Time, r.Latency = t, time.Duration(latency)
	return true
}

// lineKeys are the keys of an export line.
var lineKeys = []string{"v", "id", "time", "session_id", "agent_id", "event_type", "blocking",
	"outcome", "rule_id", "policy_version", "principal", "transport", "latency_ns",
	"descriptor_hash", "error", "event", "decision"}

// foldsToKnownKey reports whether key equals a known key ignoring case.
func foldsToKnownKey(key []byte) bool {
	for _, k := range lineKeys {
		if bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}
