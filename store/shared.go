package store

import (
	"context"
	"time"
)

// Shared is implemented by stores that several harness replicas use at
// once (store/postgres). A harness whose store implements it keeps its
// per-session counters in the store, hears of approvals decided through
// other replicas, and registers itself so that operators can list the
// replicas and the policy each runs. See docs/deployment.md.
type Shared interface {
	// LockSession takes the session's lock, held across replicas until
	// the returned lock is saved or released, and returns it with the
	// session's stored counters.
	LockSession(ctx context.Context, sessionID string) (SessionLock, error)
	// WatchApprovals calls fn with the ID of every approval decided or
	// expired through any replica, until ctx ends. Announcements may be
	// lost while the connection to the database is down: callers also
	// poll (see ApprovalPollInterval).
	WatchApprovals(ctx context.Context, fn func(id string)) error
	// Heartbeat records (or refreshes) a replica in the registry.
	Heartbeat(ctx context.Context, r Replica) error
	// Replicas lists the replicas seen within maxAge, oldest start first.
	Replicas(ctx context.Context, maxAge time.Duration) ([]Replica, error)
	// Forget removes a replica from the registry (on a clean shutdown).
	Forget(ctx context.Context, id string) error
	// ExpireOrphaned marks expired, with reason, every approval still
	// pending that was created more than maxAge ago by a replica (its
	// Approval.Replica) not seen in the registry within maxAge: the agent
	// that waited for it was connected to a process that is gone. It
	// announces each one like Decide, and returns them.
	ExpireOrphaned(ctx context.Context, maxAge time.Duration, reason string) ([]Approval, error)
}

// ApprovalPollInterval is how often a replica checks the approvals it is
// waiting for, in case an announcement was lost.
const ApprovalPollInterval = 500 * time.Millisecond

// SessionLock is one session's counters, locked against every other
// replica. Exactly one of Save or Release must be called.
type SessionLock interface {
	// State returns the stored counters (JSON), nil for a new session.
	State() []byte
	// Save stores the counters and releases the lock.
	Save(ctx context.Context, state []byte) error
	// Release releases the lock without changing the counters.
	Release()
}

// Replica is one harness process using a shared store.
type Replica struct {
	ID            string    // unique per process
	Address       string    // where agents or operators reach it (its admin URL)
	PolicyVersion string    // hash of the loaded policy
	Version       string    // the ahp build
	Started       time.Time // when the process started
	Seen          time.Time // last heartbeat (set by the store)
}
