package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-go/ahp/store"
)

// appendReq is one record waiting for the writer. done is nil for
// AppendAsync; otherwise it receives exactly one ack.
type appendReq struct {
	rec  store.AuditRecord
	done chan ack
}

type ack struct {
	id  int64
	err error
}

// writer is the single goroutine that commits audit records in groups.
type writer struct {
	db     *DB
	insert *sql.Stmt
	queue  chan *appendReq

	mu      sync.RWMutex // held for reading while enqueueing, for writing by close
	closing bool
	stop    chan struct{}
	done    chan struct{}

	pending atomic.Int64 // accepted, not yet acknowledged

	commitMu  sync.Mutex
	committed chan struct{} // closed and replaced after every commit (wakes Tail)
}

const insertAudit = `INSERT INTO audit (ts_ns, session_id, agent_id, event_type, blocking, outcome,
	rule_id, policy_version, principal, transport, latency_ns, descriptor_hash, error, event, decision)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func startWriter(ctx context.Context, db *DB) (*writer, error) {
	stmt, err := db.w.PrepareContext(ctx, insertAudit)
	if err != nil {
		return nil, fmt.Errorf("prepare audit insert: %w", err)
	}
	w := &writer{
		db: db, insert: stmt,
		queue:     make(chan *appendReq, db.opts.QueueSize),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		committed: make(chan struct{}),
	}
	go w.run()
	return w, nil
}

// enqueue hands req to the writer, waiting while the queue is full.
func (w *writer) enqueue(ctx context.Context, req *appendReq) error {
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

// close stops accepting records, lets the writer commit everything queued,
// and waits for it to exit.
func (w *writer) close() {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	_ = w.insert.Close() // the connection closes right after
	w.commitMu.Lock()
	close(w.committed) // wakes tailers, which then see the store closed
	w.commitMu.Unlock()
}

// run collects a group and commits it, until stopped. A group is every
// record queued by the time the previous commit returned, up to MaxBatch,
// plus those arriving within BatchWindow.
func (w *writer) run() {
	defer close(w.done)
	batch := make([]*appendReq, 0, w.db.opts.MaxBatch)
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

func (w *writer) fill(batch []*appendReq) []*appendReq {
	batch = w.takeQueued(batch)
	max := w.db.opts.MaxBatch
	if w.db.opts.BatchWindow <= 0 || len(batch) >= max {
		return batch
	}
	t := time.NewTimer(w.db.opts.BatchWindow)
	defer t.Stop()
	for len(batch) < max {
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
func (w *writer) takeQueued(batch []*appendReq) []*appendReq {
	for len(batch) < w.db.opts.MaxBatch {
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
func (w *writer) drain(batch []*appendReq) {
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

// flush commits batch in one transaction and acknowledges every waiter
// with its ID, or all of them with the error: on failure nothing of the
// batch is committed.
func (w *writer) flush(batch []*appendReq) {
	start := time.Now()
	ids := make([]int64, len(batch))
	err := w.commit(batch, ids)
	w.db.note(err)
	w.db.met.observeCommit(len(batch), time.Since(start), err)
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
	if lost > 0 {
		w.db.met.asyncLost.Add(float64(lost))
		w.db.opts.Logger.Error("audit notifications not recorded", "count", lost, "err", err)
	}
	if err == nil {
		w.commitMu.Lock()
		close(w.committed)
		w.committed = make(chan struct{})
		w.commitMu.Unlock()
	}
}

func (w *writer) commit(batch []*appendReq, ids []int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.db.opts.WriteTimeout)
	defer cancel()
	err := w.db.inTx(ctx, func(tx *sql.Tx) error {
		stmt := tx.StmtContext(ctx, w.insert)
		for i, req := range batch {
			r := &req.rec
			res, err := stmt.ExecContext(ctx, r.Time.UnixNano(), r.SessionID, r.AgentID, r.EventType,
				r.Blocking, r.Outcome, r.RuleID, r.PolicyVersion, r.Principal, r.Transport,
				int64(r.Latency), r.DescriptorHash, r.Error, jsonText(r.Event), jsonText(r.Decision))
			if err != nil {
				return err
			}
			if ids[i], err = res.LastInsertId(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("audit commit of %d records: %w", len(batch), err)
	}
	return nil
}

// committedChan returns a channel closed at the next commit.
func (w *writer) committedChan() <-chan struct{} {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	return w.committed
}

// jsonText binds JSON as TEXT (nil as NULL): bound as a BLOB, SQLite's JSON
// functions would read it as JSONB.
func jsonText(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
