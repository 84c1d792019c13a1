package runs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// Errors of Apply and Observe; test them with errors.Is.
var (
	// ErrNotRunEvent is returned by Apply for an event that is not
	// run_lifecycle, task_list or verification.
	ErrNotRunEvent = errors.New("runs: not a run contract event")
	// ErrInvalidPayload wraps a payload that does not decode as its type.
	ErrInvalidPayload = errors.New("runs: invalid run contract payload")
	// ErrOtherRun is returned by Apply when the event names another run
	// than the record's.
	ErrOtherRun = errors.New("runs: event belongs to another run")
)

// snapshot is a run contract event decoded once for the reduction.
type snapshot struct {
	kind       protocol.EventType
	runID      string
	sessionID  string
	updatedRaw string
	updated    time.Time // zero when updatedRaw does not parse
	updatedOK  bool
	digest     string // of the canonical payload JSON

	lifecycle    *protocol.RunLifecyclePayload
	tasks        *protocol.TaskListPayload
	verification *protocol.VerificationPayload
}

// decodeSnapshot validates ev's payload as its type and digests it.
func decodeSnapshot(ev *protocol.Event) (*snapshot, error) {
	if !ev.EventType.RunContract() {
		return nil, fmt.Errorf("%w: %q", ErrNotRunEvent, ev.EventType)
	}
	v, err := protocol.ValidatePayload(ev.EventType, ev.Payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPayload, err)
	}
	s := &snapshot{kind: ev.EventType}
	switch p := v.(type) {
	case *protocol.RunLifecyclePayload:
		s.lifecycle, s.runID, s.sessionID, s.updatedRaw = p, p.RunID, p.SessionID, p.UpdatedAt
	case *protocol.TaskListPayload:
		s.tasks, s.runID, s.sessionID, s.updatedRaw = p, p.RunID, p.SessionID, p.UpdatedAt
	case *protocol.VerificationPayload:
		s.verification, s.runID, s.sessionID, s.updatedRaw = p, p.RunID, p.SessionID, p.UpdatedAt
	}
	if s.runID == "" {
		return nil, fmt.Errorf("%w: %s: empty run_id", ErrInvalidPayload, ev.EventType)
	}
	// Re-encoding the decoded payload gives one byte form per content:
	// struct field order, no insignificant space (metadata is compacted).
	canon, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidPayload, ev.EventType, err)
	}
	sum := sha256.Sum256(canon)
	s.digest = hex.EncodeToString(sum[:16])
	s.updated, s.updatedOK = parseTime(s.updatedRaw)
	return s, nil
}

// Times outside what the store can hold (int64 nanoseconds since 1970:
// years 1678 to 2262) count as unparsable.
var (
	earliest = time.Unix(0, math.MinInt64)
	latest   = time.Unix(0, math.MaxInt64)
)

// parseTime parses an RFC 3339 time (fraction optional), in UTC.
func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Before(earliest) || t.After(latest) {
		return time.Time{}, false
	}
	return t.UTC(), true
}
