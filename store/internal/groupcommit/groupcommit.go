// Package groupcommit is the audit writer shared by the SQLite and
// PostgreSQL stores: one goroutine takes the records queued while the
// previous commit ran and commits them together, answering each waiting
// caller only once its record is committed. How a group is written (one
// transaction, IDs assigned in commit order) is the store's Commit function.
package groupcommit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-go/ahp/store"
)

// Request is one record waiting for the writer.
type Request struct {
	// Rec is the record to write; its ID is ignored.
	Rec store.AuditRecord
	// done is nil for AppendAsync; otherwise it receives exactly one ack.
	done chan ack
}

type ack struct {
	id  int64
	err error
}

// Config is what a store gives the writer. Commit is required.
type Config struct {
	// QueueSize bounds the records accepted but not yet taken by the
	// writer; Append waits while the queue is full.
	QueueSize int
	// MaxBatch bounds the records of one commit.
	MaxBatch int
	// BatchWindow, when positive, is how long the writer waits for more
	// records once the queue is empty before it commits.
	BatchWindow time.Duration
	// WriteTimeout bounds one commit.
	WriteTimeout time.Duration
	// Commit writes batch atomically (all or nothing) and sets ids[i] to
	// the ID given to batch[i]. Its error is wrapped with the batch size.
	Commit func(ctx context.Context, batch []*Request, ids []int64) error
	// Committed, when set, is called after every commit attempt with the
	// group's size, the time Commit took and its (wrapped) error, before
	// any caller is answered.
	Committed func(n int, d time.Duration, err error)
	// Lost, when set, is called with the number of AppendAsync records of
	// a failed commit (they have nobody to answer) and the error.
	Lost func(n int, err error)
	// Stopped, when set, is called once the writer has exited, before
	// Close wakes the waiters of CommitSignal.
	Stopped func()
}

// Writer is the group-commit goroutine and its queue. Start one with
// Start; stop it with Close.
type Writer struct {
	cfg   Config
	queue chan *Request

	mu      sync.RWMutex // held for reading while enqueueing, for writing by Close
	closing bool
	stop    chan struct{}
	done    chan struct{}

	pending atomic.Int64 // accepted, not yet acknowledged

	commitMu  sync.Mutex
	committed chan struct{} // closed and replaced after every commit
}

// Start starts the writer's goroutine.
func Start(cfg Config) *Writer {
	w := &Writer{
		cfg:       cfg,
		queue:     make(chan *Request, cfg.QueueSize),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		committed: make(chan struct{}),
	}
	go w.run()
	return w
}

// Append queues rec and waits until it is committed, returning its ID. It
// returns store.ErrClosed once Close has begun, and ctx's error (wrapped)
// when ctx ends first, while the queue is full or before the commit: the
// record may then still be committed.
func (w *Writer) Append(ctx context.Context, rec *store.AuditRecord) (int64, error) {
	req := &Request{Rec: *rec, done: make(chan ack, 1)}
	if err := w.enqueue(ctx, req); err != nil {
		return 0, err
	}
	select {
	case res := <-req.done:
		return res.id, res.err
	case <-ctx.Done():
		return 0, fmt.Errorf("audit append: not known to be durable: %w", ctx.Err())
	}
}

// AppendAsync queues rec without waiting for its commit; a failed commit
// is reported to Config.Lost only.
func (w *Writer) AppendAsync(ctx context.Context, rec *store.AuditRecord) error {
	return w.enqueue(ctx, &Request{Rec: *rec})
}

// Pending returns the records accepted and not yet answered.
func (w *Writer) Pending() int { return int(w.pending.Load()) }

// CommitSignal returns a channel closed at the next successful commit, or
// when Close ends.
func (w *Writer) CommitSignal() <-chan struct{} {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	return w.committed
}

// enqueue hands req to the writer, waiting while the queue is full.
func (w *Writer) enqueue(ctx context.Context, req *Request) error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closing {
		return store.ErrClosed
	}
	w.pending.Add(1)
	select {
	case w.queue <- req:
		return nil
	default:
	}
	select {
	case w.queue <- req:
		return nil
	case <-ctx.Done():
		w.pending.Add(-1)
		return fmt.Errorf("audit append: queue full: %w", ctx.Err())
	}
}

// Close stops accepting records, lets the writer commit everything queued
// (answering its callers), waits for it to exit, calls Config.Stopped and
// wakes the waiters of CommitSignal. Call it once.
func (w *Writer) Close() {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	if w.cfg.Stopped != nil {
		w.cfg.Stopped()
	}
	w.commitMu.Lock()
	close(w.committed)
	w.commitMu.Unlock()
}

// run collects a group and commits it, until stopped. A group is every
// record queued by the time the previous commit returned, up to MaxBatch,
// plus those arriving within BatchWindow.
func (w *Writer) run() {
	defer close(w.done)
	batch := make([]*Request, 0, w.cfg.MaxBatch)
	for {
		select {
		case req := <-w.queue:
			batch = append(batch, req)
		case <-w.stop:
			w.drain(batch)
			return
		}
		batch = w.fill(batch)
		w.flush(batch)
		clear(batch)
		batch = batch[:0]
	}
}

func (w *Writer) fill(batch []*Request) []*Request {
	batch = w.takeQueued(batch)
	limit := w.cfg.MaxBatch
	if w.cfg.BatchWindow <= 0 || len(batch) >= limit {
		return batch
	}
	t := time.NewTimer(w.cfg.BatchWindow)
	defer t.Stop()
	for len(batch) < limit {
		select {
		case req := <-w.queue:
			batch = append(batch, req)
		case <-t.C:
			return batch
		case <-w.stop:
			return batch
		}
	}
	return batch
}

// takeQueued appends what is queued right now, up to MaxBatch.
func (w *Writer) takeQueued(batch []*Request) []*Request {
	for len(batch) < w.cfg.MaxBatch {
		select {
		case req := <-w.queue:
			batch = append(batch, req)
		default:
			return batch
		}
	}
	return batch
}

// drain commits everything still queued; no record can be added any more.
func (w *Writer) drain(batch []*Request) {
	for {
		batch = w.takeQueued(batch)
		if len(batch) == 0 {
			return
		}
		w.flush(batch)
		clear(batch)
		batch = batch[:0]
	}
}

// flush commits batch and acknowledges every waiter with its ID, or all
// of them with the error: on failure nothing of the batch is committed.
func (w *Writer) flush(batch []*Request) {
	start := time.Now()
	ids := make([]int64, len(batch))
	err := w.commit(batch, ids)
	if w.cfg.Committed != nil {
		w.cfg.Committed(len(batch), time.Since(start), err)
	}
	lost := 0
	for i, req := range batch {
		switch {
		case req.done != nil && err != nil:
			req.done <- ack{err: err}
		case req.done != nil:
			req.done <- ack{id: ids[i]}
		case err != nil:
			lost++
		}
	}
	w.pending.Add(-int64(len(batch)))
	if lost > 0 && w.cfg.Lost != nil {
		w.cfg.Lost(lost, err)
	}
	if err == nil {
		w.commitMu.Lock()
		close(w.committed)
		w.committed = make(chan struct{})
		w.commitMu.Unlock()
	}
}

func (w *Writer) commit(batch []*Request, ids []int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.WriteTimeout)
	defer cancel()
	if err := w.cfg.Commit(ctx, batch, ids); err != nil {
		return fmt.Errorf("audit commit of %d records: %w", len(batch), err)
	}
	return nil
}
