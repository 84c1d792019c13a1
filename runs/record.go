package runs

import (
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// Record is the reduced state of one run, stored as the JSON of
// store.RunRecord.Record. Times are the snapshots' own updated_at values
// (zero, and omitted, when a snapshot's value could not be parsed).
type Record struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`         // from the first snapshot's payload
	AgentID   string `json:"agent_id,omitempty"` // agent of the first snapshot not rejected
	// Status is the current status; empty until a run_lifecycle snapshot
	// has been applied.
	Status        protocol.RunStatus `json:"status,omitempty"`
	StartedAt     time.Time          `json:"started_at,omitzero"`
	UpdatedAt     time.Time          `json:"updated_at,omitzero"` // newest updated_at applied, any kind
	Prompt        string             `json:"prompt,omitempty"`
	ResultSummary string             `json:"result_summary,omitempty"`
	Error         string             `json:"error,omitempty"`
	// Timeline lists, in arrival order, every status change applied and
	// every lifecycle snapshot refused (illegal or out of order). The
	// oldest entries are dropped beyond MaxTimeline.
	Timeline []Transition `json:"timeline"`
	// Connection, when set, says that the agent connection of the run's
	// session ended while the run was open (closed by the agent, or lost)
	// and that no run event of the session has arrived since. It says
	// nothing of the run's outcome: Status is unchanged.
	Connection *ConnectionEnd `json:"connection_ended,omitempty"`
	// Tasks is the latest applied task list, as sent.
	Tasks          []protocol.TaskItem `json:"tasks"`
	TasksUpdatedAt time.Time           `json:"tasks_updated_at,omitzero"`
	// Verification is the latest applied verification; nil before one.
	Verification *Verification `json:"verification,omitempty"`
	// Flags lists the anomalies seen, oldest first; the oldest are dropped
	// beyond MaxFlags.
	Flags []Flag `json:"flags"`
	// FlagKinds lists the distinct kinds ever flagged, in first-seen order;
	// unlike Flags it never loses one.
	FlagKinds []string `json:"flag_kinds,omitempty"`
	// Descriptor identifies the Agent Harness Descriptor in force, when the
	// caller knows one (see Options.Descriptor and SetDescriptor).
	Descriptor *DescriptorRef `json:"descriptor,omitempty"`
	Counts     Counts         `json:"counts"`
	// Cursors hold the ordering state the reduction needs; see Cursor.
	Cursors Cursors `json:"cursors"`
}

// Transition is one entry of a run's status timeline.
type Transition struct {
	From protocol.RunStatus `json:"from,omitempty"` // empty for the first status
	To   protocol.RunStatus `json:"to"`
	At   time.Time          `json:"at,omitzero"` // the snapshot's updated_at
	Seq  int                `json:"seq"`         // the snapshot's position among the run's events, from 1
	// Illegal marks a transition the graph forbids; it was not applied.
	Illegal bool `json:"illegal,omitempty"`
	// OutOfOrder marks a snapshot older than the applied one; not applied.
	OutOfOrder bool   `json:"out_of_order,omitempty"`
	Note       string `json:"note,omitempty"`
}

// Applied reports whether the transition changed the run's status.
func (t Transition) Applied() bool { return !t.Illegal && !t.OutOfOrder }

// Verification is the latest applied verification snapshot of a run.
type Verification struct {
	Status        protocol.VerificationStatus  `json:"status"`
	Checks        []protocol.VerificationCheck `json:"checks"`
	ResidualRisks []string                     `json:"residual_risks"`
	UpdatedAt     time.Time                    `json:"updated_at,omitzero"`
}

// Flag records one anomaly seen while reducing a run.
type Flag struct {
	Kind   string             `json:"kind"`            // one of the Flag* constants
	Event  protocol.EventType `json:"event,omitempty"` // the kind of snapshot that raised it
	Seq    int                `json:"seq,omitempty"`   // the snapshot's position, as in Transition
	At     time.Time          `json:"at,omitzero"`     // the snapshot's updated_at
	Detail string             `json:"detail,omitempty"`
}

// The kinds of Flag.
const (
	// FlagIllegalTransition: a run_lifecycle status the graph does not
	// allow from the current one; recorded, not applied.
	FlagIllegalTransition = "illegal_transition"
	// FlagOutOfOrder: a snapshot older than the last applied one of its
	// kind; not applied.
	FlagOutOfOrder = "out_of_order"
	// FlagDuplicate: a snapshot identical to one already reduced; ignored.
	FlagDuplicate = "duplicate"
	// FlagSameUpdatedAt: a snapshot with the updated_at of the applied one
	// but different content; applied in arrival order.
	FlagSameUpdatedAt = "same_updated_at"
	// FlagBadTimestamp: updated_at is not RFC 3339 (the snapshot is then
	// ordered by arrival), or started_at is not (it is then ignored).
	FlagBadTimestamp = "bad_timestamp"
	// FlagSessionMismatch: the snapshot names another session than the
	// run's or than its own event envelope; not applied.
	FlagSessionMismatch = "session_mismatch"
	// FlagDescriptorChanged: the descriptor hash changed during the run.
	FlagDescriptorChanged = "descriptor_changed"
	// FlagConnectionLost: the agent connection of the run's session was
	// lost (not closed) while the run was open. The flag stays after the
	// agent comes back; Record.Connection says whether it is still away.
	FlagConnectionLost = "connection_lost"
	// FlagTruncated: the record was too large to store whole; evidence,
	// artifacts and metadata (and then tasks or checks) were dropped.
	FlagTruncated = "truncated"
)

// DescriptorRef identifies an Agent Harness Descriptor.
type DescriptorRef struct {
	Hash    string `json:"hash"`
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

// Counts summarise a record.
type Counts struct {
	Events     int `json:"events"`       // run events reduced into the record
	Applied    int `json:"applied"`      // of which applied
	Duplicates int `json:"duplicates"`   // ignored as duplicates
	OutOfOrder int `json:"out_of_order"` // ignored as older than the applied state
	Illegal    int `json:"illegal"`      // refused illegal transitions
	Rejected   int `json:"rejected"`     // refused for naming another session

	TasksTotal   int `json:"tasks_total"`
	TasksDone    int `json:"tasks_done"` // tasks with status completed
	ChecksTotal  int `json:"checks_total"`
	ChecksPassed int `json:"checks_passed"`

	TimelineDropped int `json:"timeline_dropped,omitempty"` // oldest entries dropped beyond MaxTimeline
	FlagsDropped    int `json:"flags_dropped,omitempty"`    // oldest flags dropped beyond MaxFlags
}

// Cursor is the ordering state of one kind of snapshot. Digests are of the
// snapshot's canonical JSON payload, so equal digests mean equal content and
// equal updated_at.
type Cursor struct {
	// At is the updated_at of the newest applied snapshot whose updated_at
	// parsed; zero before one.
	At time.Time `json:"at,omitzero"`
	// Digest is the digest of that snapshot.
	Digest string `json:"digest,omitempty"`
	// Last is the digest of the last snapshot of this kind that was not a
	// duplicate, whatever became of it.
	Last string `json:"last,omitempty"`
}

// Cursors are the three cursors of a record, one per snapshot kind.
type Cursors struct {
	Lifecycle    Cursor `json:"run_lifecycle"`
	Tasks        Cursor `json:"task_list"`
	Verification Cursor `json:"verification"`
}

// Bounds on the lists of a Record.
const (
	MaxTimeline  = 256
	MaxFlags     = 128
	maxDetail    = 512 // bytes of a Flag.Detail or Transition.Note
	maxIDInTexts = 128 // bytes of a session id quoted in a detail
)
