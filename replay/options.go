package replay

import (
	"fmt"
	"time"

	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
)

// CounterMode says which decisions rebuild the session counters (actions
// counts only allowed and modified pre_action events).
type CounterMode string

const (
	// CountersNew counts with the decisions of the new policy: the counters
	// are those the live harness would have kept had the new policy been in
	// force from the start. The default.
	CountersNew CounterMode = "new"
	// CountersRecorded counts with the recorded decisions: the counters are
	// those the live harness actually kept.
	CountersRecorded CounterMode = "recorded"
)

// DefaultMaxSessions is how many sessions the counter tracker holds, as
// many as the live harness holds.
const DefaultMaxSessions = 100000

// DefaultMaxListed is how many changed events a report lists when
// Options.MaxListed is 0. Counts stay exact beyond it.
const DefaultMaxListed = 100000

// Options configure Run.
type Options struct {
	// Engine is the new policy. Required.
	Engine *policy.Engine
	// Counters selects the decisions that rebuild the session counters
	// (CountersNew when "").
	Counters CounterMode
	// PrincipalRoles gives roles to principal ids. The audit record keeps
	// only the principal's id, so without an entry a principal replays
	// with no roles.
	PrincipalRoles map[string][]string
	// ApprovalFallback is the decision assumed, for the counters, when the
	// new policy escalates to a human and neither its rule nor the record
	// says what the human answered (block when ""). ahp serve takes it from
	// approvals.fallback.
	ApprovalFallback protocol.DecisionKind
	// SessionID, when set, replays only that session.
	SessionID string
	// Since leaves records before it out of the comparison; they still
	// rebuild the counters.
	Since time.Time
	// Lookback, when positive, sets Since to the time of the last record of
	// the input minus Lookback (relative to the input, never to the clock).
	// It cannot be combined with Since.
	Lookback time.Duration
	// Until leaves records at or after it out entirely.
	Until time.Time
	// MaxSessions bounds the counter tracker (DefaultMaxSessions when 0).
	MaxSessions int
	// MaxListed bounds the changed events a report lists
	// (DefaultMaxListed when 0).
	MaxListed int
}

// check validates o and fills in its defaults.
func (o Options) check() (Options, error) {
	if o.Engine == nil {
		return o, fmt.Errorf("replay: Options.Engine is required")
	}
	switch o.Counters {
	case "":
		o.Counters = CountersNew
	case CountersNew, CountersRecorded:
	default:
		return o, fmt.Errorf("replay: counters %q: want %q or %q", o.Counters, CountersNew, CountersRecorded)
	}
	switch o.ApprovalFallback {
	case "":
		o.ApprovalFallback = protocol.DecisionBlock
	case protocol.DecisionAllow, protocol.DecisionBlock:
	default:
		return o, fmt.Errorf("replay: approval fallback %q: want allow or block", o.ApprovalFallback)
	}
	if o.Lookback < 0 {
		return o, fmt.Errorf("replay: negative lookback %s", o.Lookback)
	}
	if o.Lookback > 0 && !o.Since.IsZero() {
		return o, fmt.Errorf("replay: Since and Lookback cannot both be set")
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxListed <= 0 {
		o.MaxListed = DefaultMaxListed
	}
	return o, nil
}
