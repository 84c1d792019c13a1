package replay

import (
	"cmp"
	"slices"
	"time"
)

// ChangeKind tells a decision change from a change of deciding rule.
type ChangeKind string

const (
	// DecisionChanged: the new policy decides differently.
	DecisionChanged ChangeKind = "decision"
	// GuidanceChanged: same decision and rule, other operator guidance for
	// a planning or reasoning event.
	GuidanceChanged ChangeKind = "guidance"
	// RuleChanged: same decision, made by another rule (or by the default
	// outcome instead of a rule, or the reverse).
	RuleChanged ChangeKind = "rule"
)

// Report is the result of a replay. Everything in it derives from the
// input and the options, so equal inputs give equal reports.
type Report struct {
	// Input names the source.
	Input string `json:"input"`
	// NewPolicyVersion is the version of the policy replayed.
	NewPolicyVersion string `json:"new_policy_version"`
	// OldPolicyVersions are the versions that decided the compared events,
	// in order of first appearance.
	OldPolicyVersions []VersionCount `json:"old_policy_versions"`
	// Counters is the counter mode used.
	Counters CounterMode `json:"counters"`
	// SessionID, Since and Until are the filters applied (Since resolved
	// from a look-back), RFC 3339 in UTC, "" when unset.
	SessionID string `json:"session_id,omitempty"`
	Since     string `json:"since,omitempty"`
	Until     string `json:"until,omitempty"`

	// Records is how many records passed the session and until filters.
	// It is Notifications + Compared + BeforeSince + Skipped.Total().
	Records int64 `json:"records"`
	// Notifications were fed to the session counters.
	Notifications int64 `json:"notifications"`
	// Compared is how many blocking events were re-decided and compared;
	// Typed of them were typed events.
	Compared int64 `json:"compared"`
	Typed    int64 `json:"typed"`
	// BeforeSince is how many blocking events before Since were replayed
	// only to rebuild the counters.
	BeforeSince int64 `json:"before_since"`
	// Skipped counts the records that could not be replayed.
	Skipped Skipped `json:"skipped"`

	// DecisionChanges and RuleChanges count the changed events.
	DecisionChanges int64 `json:"decision_changes"`
	RuleChanges     int64 `json:"rule_changes"`
	// GuidanceChanges counts planning and reasoning events whose guidance
	// would change (decision and rule the same).
	GuidanceChanges int64 `json:"guidance_changes"`
	// Changes lists changed events in ID order, at most Options.MaxListed;
	// Unlisted counts those left out.
	Changes  []Change `json:"changes"`
	Unlisted int64    `json:"unlisted"`
	// Rules summarises the changes by rule, most affected first, the
	// default outcome (RuleID "") last.
	Rules []RuleSummary `json:"rules"`
}

// VersionCount is a policy version and how many compared events it decided.
type VersionCount struct {
	// Version is a recorded policy_version ("" when none was recorded).
	Version string `json:"version"`
	Events  int64  `json:"events"`
}

// Skipped counts records left out of a replay.
type Skipped struct {
	// Rejected events never reached the policy (the server refused them).
	Rejected int64 `json:"rejected"`
	// NoEvent records carry no event.
	NoEvent int64 `json:"no_event"`
	// Invalid records carry an event that does not decode.
	Invalid int64 `json:"invalid"`
	// Other records are of event types no policy decides (handshake, query).
	Other int64 `json:"other"`
}

// Total is the number of skipped records.
func (s Skipped) Total() int64 { return s.Rejected + s.NoEvent + s.Invalid + s.Other }

// Change is one event whose decision or deciding rule would change.
type Change struct {
	// ID, Time, SessionID, AgentID and EventType come from the record
	// (Time in UTC).
	ID        int64     `json:"id"`
	Time      time.Time `json:"time"`
	SessionID string    `json:"session_id"`
	AgentID   string    `json:"agent_id"`
	EventType string    `json:"event_type"`
	// Kind tells a decision change from a rule change.
	Kind ChangeKind `json:"change"`
	// Old is what was recorded, New what the new policy decides.
	Old Verdict `json:"old"`
	New Verdict `json:"new"`
	// OldPolicyVersion is the version that made the recorded decision.
	OldPolicyVersion string `json:"old_policy_version"`
	// Tool, Command and Prompt describe the event (shortened to
	// maxDetailBytes).
	Tool    string `json:"tool,omitempty"`
	Command string `json:"command,omitempty"`
	Prompt  string `json:"prompt,omitempty"`
}

// RuleSummary counts the changes one rule took part in, as the old or the
// new deciding rule. A change between two rules counts for both, so the
// rows may add up to more than the changes. RuleID "" is the default
// outcome.
type RuleSummary struct {
	RuleID string `json:"rule_id"`
	// Events is DecisionChanges + RuleChanges.
	Events          int64 `json:"events"`
	DecisionChanges int64 `json:"decision_changes"`
	RuleChanges     int64 `json:"rule_changes"`
	// Transitions count the changes by old and new decision.
	Transitions []Transition `json:"transitions"`
}

// Transition counts changes from one decision to another.
type Transition struct {
	// From and To are Verdict.Decision values.
	From  string `json:"from"`
	To    string `json:"to"`
	Count int64  `json:"count"`
}

// Exceeds reports whether the report has more than max changes: decision
// changes, plus rule changes when strict. It is the CI gate of ahp replay.
func (r *Report) Exceeds(max int64, strict bool) bool {
	n := r.DecisionChanges
	if strict {
		n += r.RuleChanges
	}
	return n > max
}

// ruleAcc accumulates one rule's summary.
type ruleAcc struct {
	RuleSummary
	trans map[[2]string]int64
}

// summarize turns the accumulators into sorted summaries: most events
// first, then by rule id, the default outcome last; transitions by
// decision names.
func summarize(m map[string]*ruleAcc) []RuleSummary {
	out := make([]RuleSummary, 0, len(m))
	for _, a := range m {
		s := a.RuleSummary
		s.Transitions = make([]Transition, 0, len(a.trans))
		for k, n := range a.trans {
			s.Transitions = append(s.Transitions, Transition{From: k[0], To: k[1], Count: n})
		}
		slices.SortFunc(s.Transitions, func(x, y Transition) int {
			return cmp.Or(cmp.Compare(x.From, y.From), cmp.Compare(x.To, y.To))
		})
		out = append(out, s)
	}
	slices.SortFunc(out, func(x, y RuleSummary) int {
		return cmp.Or(cmp.Compare(isDefault(x.RuleID), isDefault(y.RuleID)),
			cmp.Compare(y.Events, x.Events), cmp.Compare(x.RuleID, y.RuleID))
	})
	return out
}

// isDefault is 1 for the default outcome's empty rule id, 0 otherwise.
func isDefault(id string) int {
	if id == "" {
		return 1
	}
	return 0
}
