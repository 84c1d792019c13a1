package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ahp-go/ahp/store"
)

// appendReq is one record waiting for the writer; done is nil for
// AppendAsync, else it receives exactly one ack.
type appendReq struct {
	rec  store.AuditRecord
	done chan ack
}

type ack struct {
	id  int64
	err error
}

// writer is the goroutine that commits audit records in groups: every
// record queued while the previous commit ran goes into the next one, as
// a single statement (one round trip, one transaction).
type writer struct {
	db    *DB
	queue chan *appendReq

	mu      sync.RWMutex // held for reading while enqueueing, for writing by close
	closing bool
	stop    chan struct{}
	done    chan struct{}

	pending atomic.Int64

	commitMu  sync.Mutex
	committed chan struct{} // closed and replaced after every commit (wakes Tail)
}

// insertAudit takes the next IDs from audit_seq (whose row lock orders the
// commits of every replica) and inserts the batch given as arrays.
const insertAudit = `WITH s AS (UPDATE audit_seq SET last = last + $1 RETURNING last - $1 AS first)
INSERT INTO audit (id, ts_ns, session_id, agent_id, event_type, blocking, outcome, rule_id, policy_version,
	principal, transport, latency_ns, descriptor_hash, error, event, decision, redacted, shadow, shadow_changed)
SELECT s.first + u.n, u.ts_ns, u.session_id, u.agent_id, u.event_type, u.blocking, u.outcome, u.rule_id,
	u.policy_version, u.principal, u.transport, u.latency_ns, u.descriptor_hash, u.error, u.event, u.decision,
	u.redacted, u.shadow, u.shadow_changed
FROM s, unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::boolean[], $7::text[], $8::text[], $9::text[],
	$10::text[], $11::text[], $12::bigint[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[],
	$18::text[], $19::boolean[]) WITH ORDINALITY
	AS u(ts_ns, session_id, agent_id, event_type, blocking, outcome, rule_id, policy_version, principal, transport,
	latency_ns, descriptor_hash, error, event, decision, redacted, shadow, shadow_changed, n)
RETURNING id`

func startWriter(db *DB) *writer {
	w := &writer{db: db, queue: make(chan *appendReq, db.opts.QueueSize), stop: make(chan struct{}),
		done: make(chan struct{}), committed: make(chan struct{})}
	go w.run()
	return w
}

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

func (w *writer) close() {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	w.commitMu.Lock()
	close(w.committed)
	w.commitMu.Unlock()
}

func (w *writer) run() {
	defer close(w.done)
	batch := make([]*appendReq, 0, w.db.opts.MaxBatch)
	for {
		select {
		case req := <-w.queue:
			batch = append(batch, req)
		case <-w.stop:
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
		batch = w.takeQueued(batch)
		w.flush(batch)
		clear(batch)
		batch = batch[:0]
	}
}

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

// flush commits batch and acknowledges every waiter with its ID, or all of
// them with the error (then nothing of the batch was committed).
func (w *writer) flush(batch []*appendReq) {
	ids, err := w.commit(batch)
	w.db.note(err)
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
		w.db.opts.Logger.Error("audit notifications not recorded", "count", lost, "err", err)
	}
	if err == nil {
		w.commitMu.Lock()
		close(w.committed)
		w.committed = make(chan struct{})
		w.commitMu.Unlock()
	}
}

func (w *writer) commit(batch []*appendReq) ([]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), w.db.opts.WriteTimeout)
	defer cancel()
	n := len(batch)
	var (
		ts, latency                                     = make([]int64, n), make([]int64, n)
		session, agent, etype, outcome, rule, pv, princ = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		transport, dh, errs, redacted                   = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		event, decision, shadow                         = make([]*string, n), make([]*string, n), make([]*string, n)
		blocking, changed                               = make([]bool, n), make([]bool, n)
	)
	for i, req := range batch {
		r := &req.rec
		ts[i], latency[i] = r.Time.UnixNano(), int64(r.Latency)
		session[i], agent[i], etype[i], outcome[i], rule[i], pv[i], princ[i] = r.SessionID, r.AgentID, r.EventType, r.Outcome, r.RuleID, r.PolicyVersion, r.Principal
		transport[i], dh[i], errs[i], redacted[i] = r.Transport, r.DescriptorHash, r.Error, strings.Join(r.Redacted, ",")
		event[i], decision[i], shadow[i] = jsonText(r.Event), jsonText(r.Decision), jsonText(r.Shadow)
		blocking[i], changed[i] = r.Blocking, r.ShadowChanged
	}
	rows, err := w.db.pool.Query(ctx, insertAudit, int64(n), ts, session, agent, etype, blocking, outcome, rule, pv,
		princ, transport, latency, dh, errs, event, decision, redacted, shadow, changed)
	if err != nil {
		return nil, fmt.Errorf("audit commit of %d records: %w", n, err)
	}
	ids := make([]int64, 0, n)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("audit commit of %d records: %w", n, err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit commit of %d records: %w", n, err)
	}
	if len(ids) != n {
		return nil, fmt.Errorf("audit commit of %d records: %d IDs returned", n, len(ids))
	}
	// Record i (ordinality i+1) got first+i+1, whatever order RETURNING uses.
	first := slices.Min(ids)
	for i := range ids {
		ids[i] = first + int64(i)
	}
	return ids, nil
}

func (w *writer) committedChan() <-chan struct{} {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	return w.committed
}

// jsonText binds JSON as text, nil as NULL.
func jsonText(b []byte) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}
