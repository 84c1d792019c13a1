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
			var ev protocol.Event
			if err := json.Unmarshal(evs[i].Payload, &ev); err != nil {
				return nil, "", fmt.Errorf("runs: run %s event %d: %w", clip(runID, maxIDInTexts), evs[i].ID, err)
			}
			if last, err = Apply(rec, &ev); err != nil {
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
