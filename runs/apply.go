package runs

import (
	"fmt"
	"slices"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// Outcome says what Apply did with one snapshot.
type Outcome string

// The outcomes of Apply.
const (
	// OutcomeApplied: the snapshot changed the record's state (possibly
	// with a same_updated_at or bad_timestamp flag).
	OutcomeApplied Outcome = "applied"
	// OutcomeDuplicate: identical to a snapshot already reduced; ignored.
	OutcomeDuplicate Outcome = "duplicate"
	// OutcomeOutOfOrder: older than the applied state; recorded, ignored.
	OutcomeOutOfOrder Outcome = "out_of_order"
	// OutcomeIllegal: a status change the graph forbids; recorded, ignored.
	OutcomeIllegal Outcome = "illegal_transition"
	// OutcomeRejected: the snapshot names another session; flagged, ignored.
	OutcomeRejected Outcome = "rejected"
)

// Apply reduces one run contract event into rec, which may be the zero
// Record for a run not seen yet. It is pure: the result depends only on rec
// and ev, so replaying a run's events in order rebuilds its record. It
// fails, leaving rec unchanged, when ev is not a run contract event
// (ErrNotRunEvent), when its payload is invalid (ErrInvalidPayload) or when
// it names another run than rec (ErrOtherRun).
func Apply(rec *Record, ev *protocol.Event) (Outcome, error) {
	s, err := decodeSnapshot(ev)
	if err != nil {
		return "", err
	}
	return apply(rec, ev, s)
}

func apply(rec *Record, ev *protocol.Event, s *snapshot) (Outcome, error) {
	if rec.RunID != "" && rec.RunID != s.runID {
		return "", fmt.Errorf("%w: record %q, event %q", ErrOtherRun, clip(rec.RunID, maxIDInTexts), clip(s.runID, maxIDInTexts))
	}
	if rec.RunID == "" {
		rec.RunID, rec.SessionID = s.runID, s.sessionID
	}
	rec.Counts.Events++
	seq := rec.Counts.Events
	mark := func(kind, detail string) {
		rec.addFlag(Flag{Kind: kind, Event: s.kind, Seq: seq, At: s.updated, Detail: detail})
	}

	if s.sessionID != rec.SessionID || (ev.SessionID != "" && ev.SessionID != s.sessionID) {
		rec.Counts.Rejected++
		mark(FlagSessionMismatch, fmt.Sprintf("payload session %q, envelope session %q, run session %q; not applied",
			clip(s.sessionID, maxIDInTexts), clip(ev.SessionID, maxIDInTexts), clip(rec.SessionID, maxIDInTexts)))
		return OutcomeRejected, nil
	}
	if rec.AgentID == "" {
		rec.AgentID = ev.AgentID
	}
	// An event of the run's session, whatever becomes of it, says the
	// agent is connected again.
	rec.Connection = nil

	cur := rec.cursor(s.kind)
	if s.digest == cur.Digest || s.digest == cur.Last {
		rec.Counts.Duplicates++
		mark(FlagDuplicate, "identical to a snapshot already reduced; ignored")
		return OutcomeDuplicate, nil
	}
	cur.Last = s.digest

	switch {
	case !s.updatedOK:
		mark(FlagBadTimestamp, fmt.Sprintf("updated_at %q is not RFC 3339; ordered by arrival", clip(s.updatedRaw, 64)))
	case !cur.At.IsZero() && s.updated.Before(cur.At):
		rec.Counts.OutOfOrder++
		note := fmt.Sprintf("updated_at %s is older than the applied %s; not applied", stamp(s.updated), stamp(cur.At))
		mark(FlagOutOfOrder, note)
		if s.lifecycle != nil {
			rec.addTransition(Transition{From: rec.Status, To: s.lifecycle.Status, At: s.updated, Seq: seq, OutOfOrder: true, Note: note})
		}
		return OutcomeOutOfOrder, nil
	case !cur.At.IsZero() && s.updated.Equal(cur.At):
		mark(FlagSameUpdatedAt, "same updated_at as the applied snapshot, different content; applied in arrival order")
	}

	switch {
	case s.lifecycle != nil:
		if out, ok := applyLifecycle(rec, s, seq); !ok {
			return out, nil
		}
	case s.tasks != nil:
		rec.Tasks = nonNil(s.tasks.Tasks)
		rec.TasksUpdatedAt = s.updated
	case s.verification != nil:
		p := s.verification
		rec.Verification = &Verification{
			Status:        p.Status,
			Checks:        nonNil(p.Checks),
			ResidualRisks: nonNil(p.ResidualRisks),
			UpdatedAt:     s.updated,
		}
	}
	if s.updatedOK {
		cur.At, cur.Digest = s.updated, s.digest
		if s.updated.After(rec.UpdatedAt) {
			rec.UpdatedAt = s.updated
		}
	}
	rec.Counts.Applied++
	rec.recount()
	return OutcomeApplied, nil
}

// applyLifecycle applies a run_lifecycle snapshot already known to be in
// order. It reports false, with the outcome, when the transition is refused.
func applyLifecycle(rec *Record, s *snapshot, seq int) (Outcome, bool) {
	p := s.lifecycle
	if p.Status != rec.Status {
		if !Allowed(rec.Status, p.Status) {
			rec.Counts.Illegal++
			note := fmt.Sprintf("%s → %s is not allowed", rec.Status, p.Status)
			if rec.Status.Terminal() {
				note += fmt.Sprintf(" (%s is terminal)", rec.Status)
			}
			note += "; status stays " + string(rec.Status)
			rec.addTransition(Transition{From: rec.Status, To: p.Status, At: s.updated, Seq: seq, Illegal: true, Note: note})
			rec.addFlag(Flag{Kind: FlagIllegalTransition, Event: s.kind, Seq: seq, At: s.updated, Detail: note})
			return OutcomeIllegal, false
		}
		rec.addTransition(Transition{From: rec.Status, To: p.Status, At: s.updated, Seq: seq})
		rec.Status = p.Status
	}
	// A snapshot may omit what an earlier one said: keep what it omits.
	if p.Prompt != "" {
		rec.Prompt = p.Prompt
	}
	if p.ResultSummary != "" {
		rec.ResultSummary = p.ResultSummary
	}
	if p.Error != "" {
		rec.Error = p.Error
	}
	if p.StartedAt != "" {
		if t, ok := parseTime(p.StartedAt); ok {
			rec.StartedAt = t
		} else {
			rec.addFlag(Flag{Kind: FlagBadTimestamp, Event: s.kind, Seq: seq, At: s.updated,
				Detail: fmt.Sprintf("started_at %q is not RFC 3339; ignored", clip(p.StartedAt, 64))})
		}
	}
	return OutcomeApplied, true
}

// SetDescriptor attaches the descriptor in force to rec. A hash different
// from the one attached before raises a descriptor_changed flag; an empty
// hash is ignored.
func (r *Record) SetDescriptor(d DescriptorRef) {
	if d.Hash == "" {
		return
	}
	if r.Descriptor != nil && r.Descriptor.Hash != d.Hash {
		r.addFlag(Flag{Kind: FlagDescriptorChanged, Seq: r.Counts.Events,
			Detail: fmt.Sprintf("descriptor hash %s → %s", clip(r.Descriptor.Hash, 80), clip(d.Hash, 80))})
	}
	r.Descriptor = &d
}

// cursor returns the ordering state of kind.
func (r *Record) cursor(kind protocol.EventType) *Cursor {
	switch kind {
	case protocol.EventTaskList:
		return &r.Cursors.Tasks
	case protocol.EventVerification:
		return &r.Cursors.Verification
	}
	return &r.Cursors.Lifecycle
}

// addFlag appends f, dropping the oldest flags beyond MaxFlags.
func (r *Record) addFlag(f Flag) {
	f.Detail = clip(f.Detail, maxDetail)
	if !slices.Contains(r.FlagKinds, f.Kind) {
		r.FlagKinds = append(r.FlagKinds, f.Kind)
	}
	r.Flags = append(r.Flags, f)
	if n := len(r.Flags) - MaxFlags; n > 0 {
		r.Flags = slices.Delete(r.Flags, 0, n)
		r.Counts.FlagsDropped += n
	}
}

// addTransition appends t, dropping the oldest entries beyond MaxTimeline.
func (r *Record) addTransition(t Transition) {
	t.Note = clip(t.Note, maxDetail)
	r.Timeline = append(r.Timeline, t)
	if n := len(r.Timeline) - MaxTimeline; n > 0 {
		r.Timeline = slices.Delete(r.Timeline, 0, n)
		r.Counts.TimelineDropped += n
	}
}

// recount refreshes the task and check counts.
func (r *Record) recount() {
	r.Counts.TasksTotal, r.Counts.TasksDone = len(r.Tasks), 0
	for _, t := range r.Tasks {
		if t.Status == "completed" {
			r.Counts.TasksDone++
		}
	}
	r.Counts.ChecksTotal, r.Counts.ChecksPassed = 0, 0
	if v := r.Verification; v != nil {
		r.Counts.ChecksTotal = len(v.Checks)
		for _, c := range v.Checks {
			if c.Status == "passed" {
				r.Counts.ChecksPassed++
			}
		}
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// clip shortens s to at most n bytes without splitting a UTF-8 sequence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := max(n-len("…"), 0)
	for i > 0 && !utf8RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// stamp formats t for notes.
func stamp(t time.Time) string { return t.Format(time.RFC3339Nano) }
