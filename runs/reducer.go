package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// Options configure a Reducer. The zero value works.
type Options struct {
	// Descriptor, when set, names the Agent Harness Descriptor in force for
	// an event; the record keeps the latest one (see SetDescriptor). It
	// must be cheap and safe for concurrent use; nil results are ignored.
	Descriptor func(ev *protocol.Event) *DescriptorRef
	// MaxAttempts bounds the read-modify-write attempts of one update when
	// the record changes concurrently (default 8).
	MaxAttempts int
	// Logger receives update failures (ids and errors, never payloads).
	// Nil discards.
	Logger *slog.Logger
	// Registerer, when set, gets the metrics ahp_runs_events_total and
	// ahp_runs_update_conflicts_total.
	Registerer prometheus.Registerer
}

// lockStripes is the number of mutexes run ids are spread over: a bounded
// stand-in for one mutex per run.
const lockStripes = 64

// Reducer keeps the run records of a store up to date as run contract
// events arrive. It is safe for concurrent use; events of one run are
// reduced one at a time, in the order Observe is called.
type Reducer struct {
	st    store.Runs
	opts  Options
	log   *slog.Logger
	met   *metrics
	locks [lockStripes]sync.Mutex
}

// New returns a Reducer writing to st.
func New(st store.Runs, opts Options) (*Reducer, error) {
	if st == nil {
		return nil, errors.New("runs: nil store")
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 8
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	met, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	return &Reducer{st: st, opts: opts, log: log, met: met}, nil
}

// Observe reduces ev into its run's record when ev is a run_lifecycle,
// task_list or verification event, and returns nil at once for any other
// event. It first appends ev to the run's events (store.RunEvent, whose
// Payload is the event envelope without its context), then updates the
// record with Apply, retrying when the store reports store.ErrConflict. An
// invalid payload fails with ErrInvalidPayload and stores nothing. When the
// update fails after the append, the event stays in the log and Replay
// rebuilds the record from it.
func (r *Reducer) Observe(ctx context.Context, ev *protocol.Event) error {
	if ev == nil || !ev.EventType.RunContract() {
		return nil
	}
	kind := string(ev.EventType)
	s, err := decodeSnapshot(ev)
	if err != nil {
		r.met.events.WithLabelValues(kind, "error").Inc()
		return err
	}
	var desc *DescriptorRef
	if r.opts.Descriptor != nil {
		desc = r.opts.Descriptor(ev)
	}
	out, err := r.observe(ctx, ev, s, desc)
	if err != nil {
		r.met.events.WithLabelValues(kind, "error").Inc()
		r.log.Warn("run record not updated", "run_id", clip(s.runID, maxIDInTexts), "event", kind, "err", err)
		return err
	}
	r.met.events.WithLabelValues(kind, string(out)).Inc()
	if out != OutcomeApplied {
		r.log.Debug("run snapshot not applied", "run_id", clip(s.runID, maxIDInTexts), "event", kind, "outcome", string(out))
	}
	return nil
}

func (r *Reducer) observe(ctx context.Context, ev *protocol.Event, s *snapshot, desc *DescriptorRef) (Outcome, error) {
	mu := r.lock(s.runID)
	mu.Lock()
	defer mu.Unlock()

	env := *ev
	env.Context = nil
	raw, err := json.Marshal(&env)
	if err != nil {
		return "", fmt.Errorf("runs: encode event of run %s: %w", clip(s.runID, maxIDInTexts), err)
	}
	re := store.RunEvent{RunID: s.runID, SessionID: s.sessionID, Kind: string(s.kind), UpdatedAt: s.updated, Payload: raw}
	if err := r.st.AppendEvent(ctx, &re); err != nil {
		return "", fmt.Errorf("runs: append event of run %s: %w", clip(s.runID, maxIDInTexts), err)
	}
	return r.commit(ctx, s.runID, func(rec *Record) (Outcome, error) { return apply(rec, ev, s) }, desc)
}

// commit updates the record of runID with fn, retrying when the store
// reports store.ErrConflict; the run's lock must be held.
func (r *Reducer) commit(ctx context.Context, runID string, fn func(*Record) (Outcome, error), desc *DescriptorRef) (Outcome, error) {
	for attempt := 1; ; attempt++ {
		out, err := r.update(ctx, runID, fn, desc)
		if !errors.Is(err, store.ErrConflict) || attempt >= r.opts.MaxAttempts {
			return out, err
		}
		r.met.conflicts.Inc()
		// Another writer (another process, or Replay) got there first:
		// back off briefly, with jitter, and read again.
		wait := time.Duration(attempt)*time.Millisecond + rand.N(time.Millisecond)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("runs: update run %s: %w", clip(runID, maxIDInTexts), ctx.Err())
		case <-t.C:
		}
	}
}

// update is one read-modify-write of the record of runID: it applies fn to
// the stored record (a new one when there is none).
func (r *Reducer) update(ctx context.Context, runID string, fn func(*Record) (Outcome, error), desc *DescriptorRef) (Outcome, error) {
	var (
		rec     *Record
		version int64
		out     Outcome
	)
	rr, err := r.st.Get(ctx, runID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		rec = new(Record)
	case err != nil:
		return "", fmt.Errorf("runs: read run %s: %w", clip(runID, maxIDInTexts), err)
	default:
		version = rr.Version
		rec, err = Decode(rr)
		if err != nil {
			// An unreadable record (damaged, or written by an incompatible
			// version) is rebuilt from the events, this one included.
			r.log.Warn("rebuilding run record from its events", "run_id", clip(runID, maxIDInTexts), "err", err)
			rec, out, err = replay(ctx, r.st, runID)
			if err != nil {
				return "", err
			}
		}
	}
	if out == "" {
		if out, err = fn(rec); err != nil {
			return "", err
		}
	}
	// A snapshot refused for naming another session says nothing about
	// the descriptor of this run.
	if desc != nil && out != OutcomeRejected {
		rec.SetDescriptor(*desc)
	}
	sr, err := toStore(rec, version)
	if err != nil {
		return "", err
	}
	if err := r.st.Put(ctx, &sr); err != nil {
		return "", fmt.Errorf("runs: write run %s: %w", clip(runID, maxIDInTexts), err)
	}
	return out, nil
}

// lock returns the mutex of runID's stripe.
func (r *Reducer) lock(runID string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(runID))
	return &r.locks[h.Sum32()%lockStripes]
}
