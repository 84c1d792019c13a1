package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/ahp-go/ahp/store/internal/groupcommit"
)

// batchWriter is SQLite's part of the group commit writer: the prepared
// statements that write one group in one transaction.
type batchWriter struct {
	db     *DB
	insert [insertRows + 1]*sql.Stmt // insert[n] inserts n rows
	last   *sql.Stmt                 // lastAuditID, prepared once
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

// startWriter prepares the statements and starts the group commit writer
// on the write connection.
func startWriter(ctx context.Context, db *DB) (*groupcommit.Writer, error) {
	bw := &batchWriter{db: db}
	// Prepared now: preparing later, inside a transaction, would wait for
	// the one connection that transaction holds.
	for n := 1; n <= min(insertRows, db.opts.MaxBatch); n++ {
		q := insertAuditHead + strings.TrimSuffix(strings.Repeat(insertAuditRow+",", n), ",")
		st, err := db.w.PrepareContext(ctx, q)
		if err != nil {
			bw.closeStmts()
			return nil, fmt.Errorf("prepare audit insert: %w", err)
		}
		bw.insert[n] = st
	}
	last, err := db.w.PrepareContext(ctx, lastAuditID)
	if err != nil {
		bw.closeStmts()
		return nil, fmt.Errorf("prepare last audit id: %w", err)
	}
	bw.last = last
	return groupcommit.Start(groupcommit.Config{
		QueueSize:    db.opts.QueueSize,
		MaxBatch:     db.opts.MaxBatch,
		BatchWindow:  db.opts.BatchWindow,
		WriteTimeout: db.opts.WriteTimeout,
		Commit:       bw.commit,
		Committed: func(n int, d time.Duration, err error) {
			db.note(err)
			db.met.observeCommit(n, d, err)
		},
		Lost: func(n int, err error) {
			db.met.asyncLost.Add(float64(n))
			db.opts.Logger.Error("audit notifications not recorded", "count", n, "err", err)
		},
		Stopped: bw.closeStmts,
	}), nil
}

func (bw *batchWriter) closeStmts() {
	for _, st := range append(bw.insert[:], bw.last) {
		if st != nil {
			_ = st.Close()
		}
	}
}

// commit writes batch in one transaction. IDs are assigned here, after the
// highest ever given, read while the transaction holds the database's write
// lock: so they are dense and increase in commit order, whichever process
// writes.
func (bw *batchWriter) commit(ctx context.Context, batch []*groupcommit.Request, ids []int64) error {
	args := make([]any, 0, insertRows*auditRowParams)
	return bw.db.inTx(ctx, func(tx *sql.Tx) error {
		var last int64
		if err := tx.StmtContext(ctx, bw.last).QueryRowContext(ctx).Scan(&last); err != nil {
			return err
		}
		for start := 0; start < len(batch); start += insertRows {
			chunk := batch[start:min(start+insertRows, len(batch))]
			args = args[:0]
			for i, req := range chunk {
				r := &req.Rec
				id := last + int64(start+i) + 1
				ids[start+i] = id
				args = append(args, id, r.Time.UnixNano(), r.SessionID, r.AgentID, r.EventType,
					r.Blocking, r.Outcome, r.RuleID, r.PolicyVersion, r.Principal, r.Transport,
					int64(r.Latency), r.DescriptorHash, r.Error, jsonText(r.Event), jsonText(r.Decision),
					strings.Join(r.Redacted, ","), jsonText(r.Shadow), r.ShadowChanged)
			}
			if _, err := tx.StmtContext(ctx, bw.insert[len(chunk)]).ExecContext(ctx, args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// jsonText binds JSON as TEXT (nil as NULL): bound as a BLOB, SQLite's JSON
// functions would read it as JSONB.
func jsonText(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
