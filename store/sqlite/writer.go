package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
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
	insert [insertRows + 1]*sql.Stmt // insert[n] inserts n rows
	last   *sql.Stmt                 // lastAuditID, prepared once
	queue  chan *appendReq

	mu      sync.RWMutex // held for reading while enqueueing, for writing by close
	closing bool
	stop    chan struct{}
	done    chan struct{}

	pending atomic.Int64 // accepted, not yet acknowledged

	commitMu  sync.Mutex
	committed chan struct{} // closed and replaced after every commit (wakes Tail)
}

// insertRows is the most rows one INSERT statement writes: one statement
// per row costs about a third more CPU than one per 32 rows.
const insertRows = 32

const (
	insertAuditHead = `INSERT INTO audit (id, ts_ns, session_id, agent_id, event_type, blocking, outcome,
	rule_id, policy_version, principal, transport, latency_ns, descriptor_hash, error, event, decision, redacted, shadow, shadow_changed) VALUES `
	insertAuditRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	auditRowParams = 19
	// lastAuditID is the highest ID ever given, deleted rows included
	// (AUTOINCREMENT keeps it in sqlite_sequence).
	lastAuditID = `SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'audit'), 0),
	coalesce((SELECT max(id) FROM audit), 0))`
)

func startWriter(ctx context.Context, db *DB) (*writer, error) {
	w := &writer{
		db:        db,
		queue:     make(chan *appendReq, db.opts.QueueSize),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		committed: make(chan struct{}),
	}
	// Prepared now: preparing later, inside a transaction, would wait for
	// the one connection that transaction holds.
	for n := 1; n <= min(insertRows, db.opts.MaxBatch); n++ {
		q := insertAuditHead + strings.TrimSuffix(strings.Repeat(insertAuditRow+",", n), ",")
		st, err := db.w.PrepareContext(ctx, q)
		if err != nil {
			w.closeStmts()
			return nil, fmt.Errorf("prepare audit insert: %w", err)
		}
		w.insert[n] = st
	}
	last, err := db.w.PrepareContext(ctx, lastAuditID)
	if err != nil {
		w.closeStmts()
		return nil, fmt.Errorf("prepare last audit id: %w", err)
	}
	w.last = last
	go w.run()
	return w, nil
}

func (w *writer) closeStmts() {
	for _, st := range append(w.insert[:], w.last) {
		if st != nil {
			_ = st.Close()
		}
	}
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
	w.closeStmts()
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
	limit := w.db.opts.MaxBatch
	if w.db.opts.BatchWindow <= 0 || len(batch) >= limit {
		return batch
	}
	t := time.NewTimer(w.db.opts.BatchWindow)
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

// commit writes batch in one transaction. IDs are assigned here, after the
// highest ever given, read while the transaction holds the database's write
// lock: so they are dense and increase in commit order, whichever process
// writes.
func (w *writer) commit(batch []*appendReq, ids []int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.db.opts.WriteTimeout)
	defer cancel()
	args := make([]any, 0, insertRows*auditRowParams)
	err := w.db.inTx(ctx, func(tx *sql.Tx) error {
		var last int64
		if err := tx.StmtContext(ctx, w.last).QueryRowContext(ctx).Scan(&last); err != nil {
			return err
		}
		for start := 0; start < len(batch); start += insertRows {
			chunk := batch[start:min(start+insertRows, len(batch))]
			args = args[:0]
			for i, req := range chunk {
				r := &req.rec
				id := last + int64(start+i) + 1
				ids[start+i] = id
				args = append(args, id, r.Time.UnixNano(), r.SessionID, r.AgentID, r.EventType,
					r.Blocking, r.Outcome, r.RuleID, r.PolicyVersion, r.Principal, r.Transport,
					int64(r.Latency), r.DescriptorHash, r.Error, jsonText(r.Event), jsonText(r.Decision),
					strings.Join(r.Redacted, ","), jsonText(r.Shadow), r.ShadowChanged)
			}
			if _, err := tx.StmtContext(ctx, w.insert[len(chunk)]).ExecContext(ctx, args...); err != nil {
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
