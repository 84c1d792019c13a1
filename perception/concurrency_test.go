package perception

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

func TestConcurrentPerceive(t *testing.T) {
	root := workspace(t, goProject)
	writeTree(t, root, manyMatches(40))
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	events := []string{
		`{"session_id":"a","intent":"locate","target":{"pattern":{"pattern":"func\\s+\\w+","pattern_type":"regex"}},"context":{"workspace":"` + root + `"}}`,
		`{"session_id":"b","intent":"locate","target":{"entity":{"name":"ledger","entity_type":"x","identifier":null}},"context":{"workspace":"."},"constraints":{"max_results":3,"max_context_length":200}}`,
		`{"session_id":"c","intent":"explore","target":{"location":{"path":"internal","location_type":"directory"}},"context":{"workspace":".","query":"RetryPolicy"}}`,
		`{"session_id":"d","intent":"retrieve","target":{"location":{"path":"go.mod","location_type":"file"}},"context":{"workspace":"."}}`,
	}
	want := make([]string, len(events))
	for i, e := range events {
		b, _ := json.Marshal(perceive(t, p, event(t, e)))
		want[i] = string(b)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Go(func() {
			for r := range 5 {
				i := (g + r) % len(events)
				pl := event(t, events[i])
				d, err := p.Perceive(context.Background(), pl)
				if err != nil {
					errs <- err
					return
				}
				if b, _ := json.Marshal(d); string(b) != want[i] {
					errs <- fmt.Errorf("event %d answered differently under concurrency:\n%s\nwant\n%s", i, b, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCancelStopsWalk(t *testing.T) {
	root := workspace(t, manyMatches(300))
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	// Fill the summary cache first so that the search is what gets cancelled.
	ev := `{"session_id":"s","intent":"locate","target":{"entity":{"name":"ledger","entity_type":"x","identifier":null}},"context":{"workspace":"."}}`
	perceive(t, p, event(t, ev))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var opened atomic.Int64
	p.onFile = func() {
		if opened.Add(1) == 10 {
			cancel()
		}
	}
	_, err := p.Perceive(ctx, event(t, ev))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if n := opened.Load(); n != 10 {
		t.Errorf("%d files opened, want the walk to stop right after the 10th", n)
	}

	// An already-ended context reads nothing.
	opened.Store(0)
	if _, err := p.Perceive(ctx, event(t, ev)); !errors.Is(err, context.Canceled) || opened.Load() != 0 {
		t.Errorf("ended context: err %v, %d files opened", err, opened.Load())
	}
}

func TestCancelDuringSummaryScan(t *testing.T) {
	root := workspace(t, manyMatches(50))
	p := newPerceiver(t, Options{WorkspaceRoots: []string{root}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := scanDir(ctx, root); !errors.Is(err, context.Canceled) {
		t.Errorf("scanDir err %v, want context.Canceled", err)
	}
	if _, err := p.summary(ctx, nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("summary err %v, want context.Canceled", err)
	}
}
