package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ahp-go/ahp/internal/jsonscan"
)

// RunEvent is one run contract snapshot (run_lifecycle, task_list or
// verification) as received, kept so that run records can be rebuilt.
type RunEvent struct {
	ID        int64 // assigned by AppendEvent, increasing
	RunID     string
	SessionID string
	Kind      string    // the event type
	UpdatedAt time.Time // the snapshot's updated_at
	Received  time.Time // now when zero
	Payload   json.RawMessage
}

// RunRecord is the reduced state of one run. The store keeps it as given;
// the reduction (status timeline, task list, checks, illegal transitions)
// belongs to the runs package and lives in Record.
type RunRecord struct {
	RunID     string
	SessionID string
	Status    string    // latest run status
	Created   time.Time // set by the store on the first Put
	UpdatedAt time.Time // updated_at of the newest snapshot reduced in
	Record    json.RawMessage
	Flags     []string // problems seen, e.g. "illegal_transition"; empty when none
	// Version counts the Puts of this run. Put the Version you read (0 for
	// a new run); Put increments it.
	Version int64
}

// RunFilter selects run records; zero fields match everything.
type RunFilter struct {
	SessionID   string
	Status      string
	FlaggedOnly bool // only records with at least one flag
	Limit       int  // 0 or more than MaxQueryLimit means MaxQueryLimit
}

// QueryLimit returns the effective Limit of f.
func (f RunFilter) QueryLimit() int { return clampLimit(f.Limit) }

// Runs stores run events and run records.
type Runs interface {
	// AppendEvent stores e, setting e.ID (and e.Received when zero). It
	// returns when e is durable.
	AppendEvent(ctx context.Context, e *RunEvent) error
	// Events returns a run's events with ID > afterID in ID order.
	Events(ctx context.Context, runID string, afterID int64, limit int) ([]RunEvent, error)
	// Put creates or replaces a run record with optimistic concurrency: it
	// fails with ErrConflict unless r.Version equals the stored version (0
	// when the run is new). On success it sets r.Version and r.Created.
	Put(ctx context.Context, r *RunRecord) error
	// Get returns one run record or ErrNotFound.
	Get(ctx context.Context, runID string) (RunRecord, error)
	// List returns the matching run records, most recently updated first.
	List(ctx context.Context, f RunFilter) ([]RunRecord, error)
}

// Bounds on run data; larger ones are rejected with ErrInvalid.
const (
	MaxRunJSONBytes  = MaxAuditJSONBytes
	MaxRunFieldBytes = 1 << 10
	MaxRunFlags      = 64
)

// Validate checks e before AppendEvent.
func (e *RunEvent) Validate() error {
	if e.RunID == "" {
		return fmt.Errorf("%w: run event: empty run_id", ErrInvalid)
	}
	if len(e.RunID) > MaxRunFieldBytes || len(e.SessionID) > MaxRunFieldBytes || len(e.Kind) > MaxRunFieldBytes {
		return fmt.Errorf("%w: run event: run_id, session_id or kind longer than %d bytes", ErrInvalid, MaxRunFieldBytes)
	}
	if len(e.Payload) > MaxRunJSONBytes || !jsonscan.ValidStd(e.Payload) {
		return fmt.Errorf("%w: run event %s: payload is not JSON of at most %d bytes", ErrInvalid, e.RunID, MaxRunJSONBytes)
	}
	if err := checkTime("run event: updated_at", e.UpdatedAt); err != nil {
		return err
	}
	return checkTime("run event: received", e.Received)
}

// Validate checks r before Put.
func (r *RunRecord) Validate() error {
	if r.RunID == "" {
		return fmt.Errorf("%w: run record: empty run_id", ErrInvalid)
	}
	if len(r.RunID) > MaxRunFieldBytes || len(r.SessionID) > MaxRunFieldBytes || len(r.Status) > MaxRunFieldBytes {
		return fmt.Errorf("%w: run record: run_id, session_id or status longer than %d bytes", ErrInvalid, MaxRunFieldBytes)
	}
	if len(r.Record) > MaxRunJSONBytes || (len(r.Record) > 0 && !jsonscan.ValidStd(r.Record)) {
		return fmt.Errorf("%w: run record %s: record is not JSON of at most %d bytes", ErrInvalid, r.RunID, MaxRunJSONBytes)
	}
	if len(r.Flags) > MaxRunFlags {
		return fmt.Errorf("%w: run record %s: %d flags, limit %d", ErrInvalid, r.RunID, len(r.Flags), MaxRunFlags)
	}
	for _, f := range r.Flags {
		if f == "" || len(f) > MaxRunFieldBytes {
			return fmt.Errorf("%w: run record %s: empty or oversized flag", ErrInvalid, r.RunID)
		}
	}
	if r.Version < 0 {
		return fmt.Errorf("%w: run record %s: negative version", ErrInvalid, r.RunID)
	}
	return checkTime("run record: updated_at", r.UpdatedAt)
}
