package store

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/ahp-go/ahp/internal/jsonscan"
)

// AuditRecord is one audited event: what arrived, what was decided, by which
// rule of which policy version, for whom, over which transport, and how long
// it took. Notifications are recorded too, with an empty Outcome.
type AuditRecord struct {
	// ID is assigned by the store when the record is written; IDs grow in
	// commit order and are never reused.
	ID int64
	// Time is when the event arrived; Append sets it to now when zero.
	Time           time.Time
	SessionID      string
	AgentID        string
	EventType      string
	Blocking       bool
	Event          json.RawMessage // the event as received (JSON), or nil
	Decision       json.RawMessage // the decision as returned (JSON), or nil for notifications
	Outcome        string          // decision tag: allow, block, modify, defer, escalate, …; "" for notifications
	RuleID         string          // the rule that decided, if any
	PolicyVersion  string          // hash of the policy that decided
	Principal      string          // authenticated caller
	Transport      string          // stdio, unix, http, websocket, grpc, …
	Latency        time.Duration   // time from arrival to decision
	DescriptorHash string          // hash of the agent's harness descriptor, if any
	Error          string          // what went wrong, if anything (a fail-closed block says why here)
	// Redacted lists the kinds of secret (detector kinds, or "field" for an
	// operator's field path) that were replaced by [REDACTED:kind:fp]
	// markers before the record was stored; nil when none.
	Redacted []string
	// Shadow is what shadow rules and the shadow policy would have decided
	// on the event (a JSON object, docs/shadow.md); nil when nothing was
	// evaluated in shadow. It never took part in the decision.
	Shadow json.RawMessage
	// ShadowChanged reports that a shadow rule or the shadow policy would
	// have decided the event differently.
	ShadowChanged bool
}

// Bounds on an audit record; larger records are rejected with ErrInvalid.
const (
	// MaxAuditJSONBytes bounds len(Event)+len(Decision).
	MaxAuditJSONBytes = 4 << 20
	// MaxAuditFieldBytes bounds each string field.
	MaxAuditFieldBytes = 64 << 10
)

// Validate checks the bounds of r and that Event and Decision, when set,
// are valid JSON. Implementations call it before accepting a record.
func (r *AuditRecord) Validate() error {
	if len(r.Event)+len(r.Decision) > MaxAuditJSONBytes {
		return fmt.Errorf("%w: audit record: event and decision are %d bytes, limit %d",
			ErrInvalid, len(r.Event)+len(r.Decision), MaxAuditJSONBytes)
	}
	if len(r.Event) > 0 && !jsonscan.ValidStd(r.Event) {
		return fmt.Errorf("%w: audit record: event is not valid JSON", ErrInvalid)
	}
	if len(r.Decision) > 0 && !jsonscan.ValidStd(r.Decision) {
		return fmt.Errorf("%w: audit record: decision is not valid JSON", ErrInvalid)
	}
	if len(r.Shadow) > MaxAuditFieldBytes {
		return fmt.Errorf("%w: audit record: shadow is %d bytes, limit %d", ErrInvalid, len(r.Shadow), MaxAuditFieldBytes)
	}
	if len(r.Shadow) > 0 && !jsonscan.ValidStd(r.Shadow) {
		return fmt.Errorf("%w: audit record: shadow is not valid JSON", ErrInvalid)
	}
	for _, f := range [...]struct{ name, v string }{
		{"session_id", r.SessionID}, {"agent_id", r.AgentID}, {"event_type", r.EventType},
		{"outcome", r.Outcome}, {"rule_id", r.RuleID}, {"policy_version", r.PolicyVersion},
		{"principal", r.Principal}, {"transport", r.Transport},
		{"descriptor_hash", r.DescriptorHash}, {"error", r.Error},
	} {
		if len(f.v) > MaxAuditFieldBytes {
			return fmt.Errorf("%w: audit record: %s is %d bytes, limit %d", ErrInvalid, f.name, len(f.v), MaxAuditFieldBytes)
		}
	}
	if len(r.Redacted) > 64 {
		return fmt.Errorf("%w: audit record: %d redacted kinds, limit 64", ErrInvalid, len(r.Redacted))
	}
	for _, k := range r.Redacted {
		if k == "" || len(k) > 64 || strings.ContainsRune(k, ',') {
			return fmt.Errorf("%w: audit record: redacted kind must be 1 to 64 bytes without a comma", ErrInvalid)
		}
	}
	if r.Latency < 0 {
		return fmt.Errorf("%w: audit record: negative latency", ErrInvalid)
	}
	return checkTime("audit record: time", r.Time)
}

// Times a store keeps must fit int64 Unix nanoseconds (years 1678 to 2261).
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// checkTime accepts the zero time (meaning "now" or "unset") and times
// within [minTime, maxTime].
func checkTime(what string, t time.Time) error {
	if t.IsZero() || (!t.Before(minTime) && !t.After(maxTime)) {
		return nil
	}
	return fmt.Errorf("%w: %s %s out of range", ErrInvalid, what, t.Format(time.RFC3339))
}

// AuditFilter selects audit records. Zero fields match everything; set
// fields must all match.
type AuditFilter struct {
	SessionID string
	Since     time.Time // records at or after Since
	Until     time.Time // records before Until
	Outcome   string    // decision tag, e.g. "block"
	RuleID    string
	EventType string
	AfterID   int64 // records with ID > AfterID
	// Shadow selects records by their shadow verdicts (ShadowAll: any).
	Shadow ShadowSelect
	// Limit caps the number of records; 0 or more than MaxQueryLimit means
	// MaxQueryLimit for Query, and no cap for Export and Tail.
	Limit int
	// Newest, with a Limit, selects the Limit most recent matches instead
	// of the oldest. Results are in ascending ID order either way.
	Newest bool
}

// ShadowSelect selects audit records by what was evaluated in shadow.
type ShadowSelect int

const (
	// ShadowAll selects records whatever their shadow verdicts.
	ShadowAll ShadowSelect = iota
	// ShadowEvaluated selects records that carry shadow verdicts.
	ShadowEvaluated
	// ShadowChanged selects records where a shadow rule or the shadow
	// policy would have changed the outcome.
	ShadowChanged
)

// MaxQueryLimit is the most records one Query returns.
const MaxQueryLimit = 10000

// QueryLimit returns the effective Limit of f for one Query.
func (f AuditFilter) QueryLimit() int { return clampLimit(f.Limit) }

// clampLimit maps a requested count to (0, MaxQueryLimit].
func clampLimit(n int) int {
	if n <= 0 || n > MaxQueryLimit {
		return MaxQueryLimit
	}
	return n
}

// AuditLog is the append-only record of events and decisions.
type AuditLog interface {
	// Append writes r and returns only once it is durable (committed and
	// synced), setting r.ID. Concurrent appends are committed together
	// (group commit). An error means the record may not be durable: the
	// caller must fail closed. If ctx ends first, Append returns ctx's
	// error; the record may still be written later.
	Append(ctx context.Context, r *AuditRecord) error
	// AppendAsync queues a copy of r (a notification) and returns without
	// waiting for it to be durable. It blocks only while the queue is
	// full. A later write failure is logged, counted and makes Ping fail.
	AppendAsync(ctx context.Context, r *AuditRecord) error
	// Query returns the matching records in ascending ID order, at most
	// f.QueryLimit() of them.
	Query(ctx context.Context, f AuditFilter) ([]AuditRecord, error)
	// Tail calls fn for each matching record with ID > f.AfterID, in order,
	// waiting for new records, until ctx ends (it then returns ctx's error)
	// or fn returns an error (it returns that error). f.Limit is ignored.
	Tail(ctx context.Context, f AuditFilter, fn func(AuditRecord) error) error
	// Export writes the matching records to w as JSON Lines in the format
	// of docs/audit-format.md (see WriteAuditJSON), oldest first.
	Export(ctx context.Context, w io.Writer, f AuditFilter) (int64, error)
	// Retain deletes records older than maxAge, then the oldest records
	// beyond the newest maxRows. Zero means no limit. It returns how many
	// records were deleted.
	Retain(ctx context.Context, maxAge time.Duration, maxRows int64) (int64, error)
	// QueueDepth is the number of records accepted but not yet durable.
	QueueDepth() int
}
