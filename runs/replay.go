package runs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// replayPage is how many events Replay reads per query.
const replayPage = 1000

// Replay rebuilds a run's record from its stored events, applying them in
// the order they were appended. The result equals the stored record except
// for what the caller attached (Descriptor). It fails with store.ErrNotFound
// when the run has no events.
func Replay(ctx context.Context, st store.Runs, runID string) (*Record, error) {
	rec, _, err := replay(ctx, st, runID)
	return rec, err
}

// replay is Replay that also returns the outcome of the last event.
func replay(ctx context.Context, st store.Runs, runID string) (*Record, Outcome, error) {
	rec := new(Record)
	var (
		after int64
		last  Outcome
		seen  bool
	)
	for {
		evs, err := st.Events(ctx, runID, after, replayPage)
		if err != nil {
			return nil, "", fmt.Errorf("runs: events of run %s: %w", clip(runID, maxIDInTexts), err)
		}
		for i := range evs {
			if last, err = replayOne(rec, &evs[i]); err != nil {
				return nil, "", fmt.Errorf("runs: run %s event %d: %w", clip(runID, maxIDInTexts), evs[i].ID, err)
			}
			seen = true
			after = evs[i].ID
		}
		if len(evs) < replayPage {
			break
		}
	}
	if !seen {
		return nil, "", fmt.Errorf("runs: run %s has no events: %w", clip(runID, maxIDInTexts), store.ErrNotFound)
	}
	return rec, last, nil
}

// replayOne applies one stored event: a run contract event envelope, or
// the harness's own connection_ended.
func replayOne(rec *Record, re *store.RunEvent) (Outcome, error) {
	if re.Kind == KindConnectionEnded {
		e, err := decodeConnectionEnded(re.Payload)
		if err != nil {
			return "", err
		}
		return ApplyConnectionEnded(rec, e)
	}
	var ev protocol.Event
	if err := json.Unmarshal(re.Payload, &ev); err != nil {
		return "", err
	}
	return Apply(rec, &ev)
}

// Load returns the stored record of one run; store.ErrNotFound when none.
func Load(ctx context.Context, st store.Runs, runID string) (*Record, error) {
	rr, err := st.Get(ctx, runID)
	if err != nil {
		return nil, err
	}
	return Decode(rr)
}

// List returns the stored records f selects, most recently updated first.
func List(ctx context.Context, st store.Runs, f store.RunFilter) ([]*Record, error) {
	rrs, err := st.List(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]*Record, 0, len(rrs))
	for _, rr := range rrs {
		rec, err := Decode(rr)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}
