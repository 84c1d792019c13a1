package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ahp-go/ahp/internal/jsonscan"
)

// ApprovalStatus is where an approval stands. Pending is the only status
// that can change, and it changes exactly once.
type ApprovalStatus string

// The approval statuses.
const (
	ApprovalPending  ApprovalStatus = "pending"
	ApprovalApproved ApprovalStatus = "approved"
	ApprovalDenied   ApprovalStatus = "denied"
	// ApprovalExpired means nobody decided in time, or the request that was
	// waiting is gone (the harness restarted); the fallback applies.
	ApprovalExpired ApprovalStatus = "expired"
)

// Valid reports whether s is one of the four statuses.
func (s ApprovalStatus) Valid() bool {
	switch s {
	case ApprovalPending, ApprovalApproved, ApprovalDenied, ApprovalExpired:
		return true
	}
	return false
}

// Approval is a request for a human decision on one event.
type Approval struct {
	ID        string // assigned by Create when empty
	Created   time.Time
	SessionID string
	AgentID   string
	// RequestedBy is the principal whose event raised the approval ("" when
	// the connection had none). That principal may never answer it.
	RequestedBy string
	// Replica is the harness process whose agent waits for the decision
	// (its ID in the replica registry of a shared store, "" otherwise).
	// When that process stops without a clean shutdown, another replica
	// expires the approval (store.Shared.ExpireOrphaned).
	Replica        string
	Event          json.RawMessage // the event awaiting approval (JSON)
	RuleID         string          // the rule that asked for approval
	Reason         string          // why approval is needed
	Status         ApprovalStatus
	DecidedBy      string    // who decided; empty while pending
	DecidedAt      time.Time // zero while pending
	DecisionReason string    // why it was decided so
}

// Resolution is the decision on a pending approval.
type Resolution struct {
	Status ApprovalStatus // approved, denied or expired
	By     string
	Reason string
	At     time.Time // now when zero
}

// ApprovalFilter selects approvals; zero fields match everything.
type ApprovalFilter struct {
	Status    ApprovalStatus
	SessionID string
	Limit     int // 0 or more than MaxQueryLimit means MaxQueryLimit
}

// QueryLimit returns the effective Limit of f.
func (f ApprovalFilter) QueryLimit() int { return clampLimit(f.Limit) }

// Approvals stores approvals and their decisions.
type Approvals interface {
	// Create stores a as pending, setting a.ID (when empty), a.Created (when
	// zero) and a.Status. It returns when a is durable.
	Create(ctx context.Context, a *Approval) error
	// Get returns one approval or ErrNotFound.
	Get(ctx context.Context, id string) (Approval, error)
	// List returns the matching approvals, oldest first.
	List(ctx context.Context, f ApprovalFilter) ([]Approval, error)
	// Decide moves a pending approval to r.Status, once: deciding one that
	// is no longer pending fails with an error wrapping ErrAlreadyDecided
	// that says how and by whom it was decided. It returns the decided
	// approval, durable.
	Decide(ctx context.Context, id string, r Resolution) (Approval, error)
	// ExpirePending marks every approval still pending and created before
	// t as expired with reason, and returns them. A harness calls it on
	// start: requests that were waiting before a restart are gone.
	ExpirePending(ctx context.Context, before time.Time, reason string) ([]Approval, error)
}

// Bounds on an approval; larger ones are rejected with ErrInvalid.
const (
	MaxApprovalEventBytes = MaxAuditJSONBytes
	MaxApprovalFieldBytes = MaxAuditFieldBytes
)

// Validate checks a before Create.
func (a *Approval) Validate() error {
	if len(a.Event) > MaxApprovalEventBytes {
		return fmt.Errorf("%w: approval: event is %d bytes, limit %d", ErrInvalid, len(a.Event), MaxApprovalEventBytes)
	}
	if len(a.Event) > 0 && !jsonscan.ValidStd(a.Event) {
		return fmt.Errorf("%w: approval: event is not valid JSON", ErrInvalid)
	}
	for _, f := range [...]struct{ name, v string }{
		{"id", a.ID}, {"session_id", a.SessionID}, {"agent_id", a.AgentID},
		{"requested_by", a.RequestedBy}, {"replica", a.Replica}, {"rule_id", a.RuleID}, {"reason", a.Reason},
	} {
		if len(f.v) > MaxApprovalFieldBytes {
			return fmt.Errorf("%w: approval: %s is %d bytes, limit %d", ErrInvalid, f.name, len(f.v), MaxApprovalFieldBytes)
		}
	}
	return checkTime("approval: created", a.Created)
}

// Validate checks r before Decide.
func (r Resolution) Validate() error {
	switch r.Status {
	case ApprovalApproved, ApprovalDenied, ApprovalExpired:
	default:
		return fmt.Errorf("%w: resolution status %q (want approved, denied or expired)", ErrInvalid, r.Status)
	}
	if len(r.By) > MaxApprovalFieldBytes || len(r.Reason) > MaxApprovalFieldBytes {
		return fmt.Errorf("%w: resolution: decided_by or reason longer than %d bytes", ErrInvalid, MaxApprovalFieldBytes)
	}
	return checkTime("resolution: at", r.At)
}

// AlreadyDecided builds the error Decide returns for an approval that is
// no longer pending; it wraps ErrAlreadyDecided.
func AlreadyDecided(a Approval) error {
	by := a.DecidedBy
	if by == "" {
		by = "unknown"
	}
	return fmt.Errorf("%w: approval %s is %s (by %s at %s)", ErrAlreadyDecided, a.ID, a.Status, by,
		a.DecidedAt.UTC().Format(time.RFC3339))
}
