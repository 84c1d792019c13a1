package replay

import (
	"context"
	"sync"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// item is one record read and decoded ahead of the evaluation.
type item struct {
	rec   store.AuditRecord
	ev    protocol.Event
	evErr error // the event does not decode
}

// batchSize is how many records travel between the stages at once.
const batchSize = 256

// reader decodes records on its own goroutine, so that reading and
// decoding overlap with evaluation; the order of records is kept.
type reader struct {
	batches chan []item
	free    chan []item
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	err     error // set before batches is closed
}

// startReader reads src (records of other sessions and records at or
// after Until left out) until it ends, fails or ctx ends. Call stop when
// done with it, even after the batches ran out.
func startReader(ctx context.Context, src Source, opts *Options) *reader {
	ctx, cancel := context.WithCancel(ctx)
	rd := &reader{batches: make(chan []item, 4), free: make(chan []item, 6), cancel: cancel}
	rd.wg.Add(1)
	go func() {
		defer rd.wg.Done()
		defer close(rd.batches)
		rd.err = rd.run(ctx, src, opts)
	}()
	return rd
}

func (rd *reader) run(ctx context.Context, src Source, opts *Options) error {
	batch := rd.batch()
	send := func() bool {
		select {
		case rd.batches <- batch:
			batch = rd.batch()
			return true
		case <-ctx.Done():
			return false
		}
	}
	n := 0
	for rec, err := range src.Records(ctx, store.AuditFilter{SessionID: opts.SessionID, Until: opts.Until}) {
		if err != nil {
			return err
		}
		if n++; n&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if opts.SessionID != "" && rec.SessionID != opts.SessionID {
			continue
		}
		if !opts.Until.IsZero() && !rec.Time.Before(opts.Until) {
			continue
		}
		batch = append(batch, item{rec: *rec})
		it := &batch[len(batch)-1]
		if len(it.rec.Event) > 0 && it.rec.Outcome != "rejected" {
			it.evErr = protocol.DecodeEvent(it.rec.Event, &it.ev)
		}
		if len(batch) == batchSize && !send() {
			return ctx.Err()
		}
	}
	if len(batch) > 0 && !send() {
		return ctx.Err()
	}
	return ctx.Err()
}

// batch returns an empty batch, reusing one handed back when there is one.
func (rd *reader) batch() []item {
	select {
	case b := <-rd.free:
		return b[:0]
	default:
		return make([]item, 0, batchSize)
	}
}

// release hands a processed batch back for reuse.
func (rd *reader) release(b []item) {
	clear(b)
	select {
	case rd.free <- b:
	default:
	}
}

// stop ends the reader and waits for its goroutine.
func (rd *reader) stop() {
	rd.cancel()
	for range rd.batches { // unblock a pending send
	}
	rd.wg.Wait()
}
