package store

import (
	"context"
	"errors"
)

// Store is a harness's durable state. Each area has its own interface so that
// callers ask for only what they use. A Store is safe for concurrent use.
type Store interface {
	// Audit returns the audit log.
	Audit() AuditLog
	// Approvals returns the human approvals.
	Approvals() Approvals
	// Memory returns the facts kept for memory_recall.
	Memory() Memory
	// Runs returns the run events and run records.
	Runs() Runs
	// Ping reports readiness: nil when the store can read and durably write.
	// After a failed write (disk full, read-only file system) it returns an
	// error until a write succeeds again.
	Ping(ctx context.Context) error
	// Close flushes every record already accepted, stops the writer and
	// releases the database. Calls after Close fail with ErrClosed.
	Close() error
}

// Errors shared by every implementation; test them with errors.Is.
var (
	// ErrClosed is returned by every call on a closed store.
	ErrClosed = errors.New("store: closed")
	// ErrNotFound is returned when the named record does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrAlreadyDecided is returned when an approval that is no longer
	// pending is decided again.
	ErrAlreadyDecided = errors.New("store: approval already decided")
	// ErrConflict is returned when a run record changed since it was read.
	ErrConflict = errors.New("store: run record changed concurrently")
	// ErrInvalid wraps every rejection of a record or filter by validation.
	ErrInvalid = errors.New("store: invalid")
	// ErrReadOnly is returned by writes on a store opened read-only.
	ErrReadOnly = errors.New("store: opened read-only")
)
