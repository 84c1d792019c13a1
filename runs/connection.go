package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// KindConnectionEnded is the kind of the run event (store.RunEvent.Kind) a
// Reducer appends to an open run's log when the agent connection of the
// run's session ended. Its Payload is a ConnectionEndedEvent, not an event
// envelope: agents cannot send it.
const KindConnectionEnded = "connection_ended"

// How a connection ended: the values of ConnectionEnd.How.
const (
	// ConnectionClosed: the agent closed its connection (or the harness
	// did, stopping).
	ConnectionClosed = "closed"
	// ConnectionLost: the transport failed (reset, keep-alive or idle
	// timeout): the agent vanished without closing.
	ConnectionLost = "lost"
)

// ConnectionEnd says that the agent connection of a run's session ended
// while the run was open. In a Record it stays until the next run event
// of the run's session arrives (the agent is back).
type ConnectionEnd struct {
	How   string    `json:"connection"`      // ConnectionClosed or ConnectionLost
	Error string    `json:"error,omitempty"` // the transport's error when lost, as the caller redacted it
	At    time.Time `json:"at,omitzero"`     // when the harness saw the connection end (its clock)
	Seq   int       `json:"seq,omitempty"`   // in a Record: the event's position among the run's events
}

// ConnectionEndedEvent is the payload of a KindConnectionEnded run event.
type ConnectionEndedEvent struct {
	RunID     string    `json:"run_id"`
	SessionID string    `json:"session_id"`
	How       string    `json:"connection"`
	Error     string    `json:"error,omitempty"`
	At        time.Time `json:"at,omitzero"`
}

// OutcomeIgnored: a connection_ended event for a run already finished;
// counted, nothing else changes.
const OutcomeIgnored Outcome = "ignored"

// MaxEndedRuns bounds the open runs of one session that ConnectionEnded
// marks: the most recently updated ones.
const MaxEndedRuns = 256

// ApplyConnectionEnded reduces a connection_ended event into rec, like
// Apply does for a run contract event (it is pure, and Replay uses it).
// On an open run it sets rec.Connection, and a lost connection raises a
// connection_lost flag; on a finished run it changes nothing but the event
// count (OutcomeIgnored). An event naming another session than the run's
// is flagged session_mismatch (OutcomeRejected). It fails, leaving rec
// unchanged, with ErrInvalidPayload or ErrOtherRun.
func ApplyConnectionEnded(rec *Record, e ConnectionEndedEvent) (Outcome, error) {
	if e.RunID == "" {
		return "", fmt.Errorf("%w: %s: empty run_id", ErrInvalidPayload, KindConnectionEnded)
	}
	if e.How != ConnectionClosed && e.How != ConnectionLost {
		return "", fmt.Errorf("%w: %s: connection %q, want %q or %q", ErrInvalidPayload, KindConnectionEnded,
			clip(e.How, 32), ConnectionClosed, ConnectionLost)
	}
	if rec.RunID != "" && rec.RunID != e.RunID {
		return "", fmt.Errorf("%w: record %q, event %q", ErrOtherRun, clip(rec.RunID, maxIDInTexts), clip(e.RunID, maxIDInTexts))
	}
	if rec.RunID == "" {
		rec.RunID, rec.SessionID = e.RunID, e.SessionID
	}
	rec.Counts.Events++
	seq := rec.Counts.Events
	// Flag.Event stays empty: it holds 2.4 event types only.
	if e.SessionID != rec.SessionID {
		rec.Counts.Rejected++
		rec.addFlag(Flag{Kind: FlagSessionMismatch, Seq: seq, At: e.At,
			Detail: fmt.Sprintf("connection of session %q ended, run session %q; not applied",
				clip(e.SessionID, maxIDInTexts), clip(rec.SessionID, maxIDInTexts))})
		return OutcomeRejected, nil
	}
	if rec.Status.Terminal() {
		return OutcomeIgnored, nil
	}
	end := &ConnectionEnd{How: e.How, At: e.At, Seq: seq}
	if e.How == ConnectionLost {
		end.Error = clip(e.Error, maxDetail)
		detail := "the agent's connection was lost while the run was open"
		if rec.Status != "" {
			detail = "the agent's connection was lost while the run was " + string(rec.Status)
		}
		if end.Error != "" {
			detail += ": " + end.Error
		}
		rec.addFlag(Flag{Kind: FlagConnectionLost, Seq: seq, At: e.At, Detail: detail})
	}
	rec.Connection = end
	rec.Counts.Applied++
	return OutcomeApplied, nil
}

// ConnectionEnded records, in each open run of a session (status not
// completed, failed or cancelled; at most MaxEndedRuns, the most recently
// updated), that the agent connection of the session ended: it appends a
// KindConnectionEnded event to the run's log and applies it with
// ApplyConnectionEnded. end.Error should already be redacted; end.Seq is
// ignored. It returns how many runs it marked, and the errors of those it
// could not (the others are still marked).
func (r *Reducer) ConnectionEnded(ctx context.Context, sessionID string, end ConnectionEnd) (int, error) {
	if end.How != ConnectionClosed && end.How != ConnectionLost {
		return 0, fmt.Errorf("%w: %s: connection %q, want %q or %q", ErrInvalidPayload, KindConnectionEnded,
			clip(end.How, 32), ConnectionClosed, ConnectionLost)
	}
	rrs, err := r.st.List(ctx, store.RunFilter{SessionID: sessionID, Limit: MaxEndedRuns})
	if err != nil {
		return 0, fmt.Errorf("runs: runs of session %s: %w", clip(sessionID, maxIDInTexts), err)
	}
	var (
		marked int
		errs   []error
	)
	for _, rr := range rrs {
		if protocol.RunStatus(rr.Status).Terminal() {
			continue
		}
		e := ConnectionEndedEvent{RunID: rr.RunID, SessionID: sessionID, How: end.How, Error: end.Error, At: end.At}
		out, err := r.connectionEnded(ctx, e)
		if err != nil {
			r.met.events.WithLabelValues(KindConnectionEnded, "error").Inc()
			r.log.Warn("run record not updated", "run_id", clip(e.RunID, maxIDInTexts), "event", KindConnectionEnded, "err", err)
			errs = append(errs, err)
			continue
		}
		if out == "" { // finished meanwhile: nothing appended
			continue
		}
		r.met.events.WithLabelValues(KindConnectionEnded, string(out)).Inc()
		if out == OutcomeApplied {
			marked++
		}
	}
	return marked, errors.Join(errs...)
}

// connectionEnded appends e to its run's log and applies it, unless the
// run finished since it was listed (then it returns "" and nil).
func (r *Reducer) connectionEnded(ctx context.Context, e ConnectionEndedEvent) (Outcome, error) {
	mu := r.lock(e.RunID)
	mu.Lock()
	defer mu.Unlock()

	// Under the run's lock, a run finished by an event of this process
	// since the listing is seen here.
	rr, err := r.st.Get(ctx, e.RunID)
	if err != nil {
		return "", fmt.Errorf("runs: read run %s: %w", clip(e.RunID, maxIDInTexts), err)
	}
	if protocol.RunStatus(rr.Status).Terminal() {
		return "", nil
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return "", fmt.Errorf("runs: encode event of run %s: %w", clip(e.RunID, maxIDInTexts), err)
	}
	re := store.RunEvent{RunID: e.RunID, SessionID: e.SessionID, Kind: KindConnectionEnded, UpdatedAt: e.At, Payload: raw}
	if err := r.st.AppendEvent(ctx, &re); err != nil {
		return "", fmt.Errorf("runs: append event of run %s: %w", clip(e.RunID, maxIDInTexts), err)
	}
	return r.commit(ctx, e.RunID, func(rec *Record) (Outcome, error) { return ApplyConnectionEnded(rec, e) }, nil)
}

// decodeConnectionEnded reads the payload of a KindConnectionEnded event.
func decodeConnectionEnded(raw []byte) (ConnectionEndedEvent, error) {
	var e ConnectionEndedEvent
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, fmt.Errorf("%w: %s: %w", ErrInvalidPayload, KindConnectionEnded, err)
	}
	return e, nil
}
