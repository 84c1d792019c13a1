package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ahp-go/ahp/store"
)

// auditLog is the DB seen as a store.AuditLog.
type auditLog DB

var _ store.AuditLog = (*auditLog)(nil)

// Append implements store.AuditLog: the record is durable (committed with
// the configured sync) when it returns nil.
func (a *auditLog) Append(ctx context.Context, r *store.AuditRecord) error {
	if err := a.prepare(r); err != nil {
		return err
	}
	id, err := a.wr.Append(ctx, r)
	if err != nil {
		return err
	}
	r.ID = id
	return nil
}

// AppendAsync implements store.AuditLog.
func (a *auditLog) AppendAsync(ctx context.Context, r *store.AuditRecord) error {
	if err := a.prepare(r); err != nil {
		return err
	}
	return a.wr.AppendAsync(ctx, r)
}

// prepare checks r before it is queued and stamps its time when unset.
func (a *auditLog) prepare(r *store.AuditRecord) error {
	if a.opts.ReadOnly {
		return fmt.Errorf("audit append: %w", store.ErrReadOnly)
	}
	if err := r.Validate(); err != nil {
		return err
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	return nil
}

// QueueDepth implements store.AuditLog.
func (a *auditLog) QueueDepth() int {
	if a.wr == nil {
		return 0
	}
	return a.wr.Pending()
}

const auditColumns = `id, ts_ns, session_id, agent_id, event_type, blocking, outcome, rule_id,
	policy_version, principal, transport, latency_ns, descriptor_hash, error, event, decision, redacted,
	shadow, shadow_changed`

// Query implements store.AuditLog.
func (a *auditLog) Query(ctx context.Context, f store.AuditFilter) ([]store.AuditRecord, error) {
	db := (*DB)(a)
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	var (
		conds []string
		args  []any
	)
	add := func(cond string, v any) {
		conds = append(conds, cond)
		args = append(args, v)
	}
	if f.SessionID != "" {
		add("session_id = ?", f.SessionID)
	}
	if !f.Since.IsZero() {
		add("ts_ns >= ?", f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		add("ts_ns < ?", f.Until.UnixNano())
	}
	if f.Outcome != "" {
		add("outcome = ?", f.Outcome)
	}
	if f.RuleID != "" {
		add("rule_id = ?", f.RuleID)
	}
	if f.EventType != "" {
		add("event_type = ?", f.EventType)
	}
	if f.AfterID > 0 {
		add("id > ?", f.AfterID)
	}
	switch f.Shadow {
	case store.ShadowEvaluated:
		conds = append(conds, "shadow IS NOT NULL")
	case store.ShadowChanged:
		conds = append(conds, "shadow_changed = 1")
	}
	q := "SELECT " + auditColumns + " FROM audit"
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	if f.Newest {
		q += " ORDER BY id DESC LIMIT ?"
	} else {
		q += " ORDER BY id ASC LIMIT ?"
	}
	args = append(args, f.QueryLimit())
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, db.readErr("audit query", err)
	}
	defer rows.Close()
	var out []store.AuditRecord
	for rows.Next() {
		var (
			r               store.AuditRecord
			ts, latencyNs   int64
			event, decision []byte
			redacted        string
			shadow          []byte
		)
		if err := rows.Scan(&r.ID, &ts, &r.SessionID, &r.AgentID, &r.EventType, &r.Blocking, &r.Outcome,
			&r.RuleID, &r.PolicyVersion, &r.Principal, &r.Transport, &latencyNs, &r.DescriptorHash,
			&r.Error, &event, &decision, &redacted, &shadow, &r.ShadowChanged); err != nil {
			return nil, db.readErr("audit query", err)
		}
		r.Time = time.Unix(0, ts).UTC()
		r.Latency = time.Duration(latencyNs)
		r.Event, r.Decision = event, decision
		if len(shadow) > 0 {
			r.Shadow = shadow
		}
		if redacted != "" {
			r.Redacted = strings.Split(redacted, ",")
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, db.readErr("audit query", err)
	}
	if f.Newest {
		slices.Reverse(out)
	}
	return out, nil
}

// Tail implements store.AuditLog. Commits of this process wake it at once;
// records written by another process are seen within TailInterval.
func (a *auditLog) Tail(ctx context.Context, f store.AuditFilter, fn func(store.AuditRecord) error) error {
	db := (*DB)(a)
	if err := db.checkOpen(); err != nil {
		return err
	}
	next := a.commitSignal()
	wait := func(ctx context.Context) error {
		t := time.NewTimer(db.opts.TailInterval)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-next:
		case <-t.C:
		}
		next = a.commitSignal()
		return nil
	}
	return store.FollowAudit(ctx, a.Query, f, wait, fn)
}

// commitSignal returns a channel closed by the next commit of this
// process's writer (nil, never ready, when read-only).
func (a *auditLog) commitSignal() <-chan struct{} {
	if a.wr == nil {
		return nil
	}
	return a.wr.CommitSignal()
}

// Export implements store.AuditLog.
func (a *auditLog) Export(ctx context.Context, w io.Writer, f store.AuditFilter) (int64, error) {
	return store.ExportAudit(ctx, a.Query, w, f)
}

// retainChunk is how many rows one retention transaction deletes, so that
// audit commits are not held up behind a large deletion.
const retainChunk = 5000

// Retain implements store.AuditLog. It deletes in chunks, each its own
// transaction, then returns freed pages to the file system.
func (a *auditLog) Retain(ctx context.Context, maxAge time.Duration, maxRows int64) (int64, error) {
	db := (*DB)(a)
	var total int64
	if maxAge > 0 {
		cutoff := time.Now().Add(-maxAge).UnixNano()
		n, err := a.deleteChunks(ctx, `DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE ts_ns < ? LIMIT ?)`, cutoff)
		total += n
		if err != nil {
			return total, err
		}
	}
	if maxRows > 0 {
		var boundary int64
		err := db.r.QueryRowContext(ctx, `SELECT id FROM audit ORDER BY id DESC LIMIT 1 OFFSET ?`, maxRows).Scan(&boundary)
		switch {
		case err == sql.ErrNoRows:
		case err != nil:
			return total, db.readErr("audit retain", err)
		default:
			n, err := a.deleteChunks(ctx, `DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE id <= ? ORDER BY id LIMIT ?)`, boundary)
			total += n
			if err != nil {
				return total, err
			}
		}
	}
	if total > 0 {
		err := db.write(ctx, "audit retain: vacuum", func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `PRAGMA incremental_vacuum`)
			return err
		})
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (a *auditLog) deleteChunks(ctx context.Context, q string, arg int64) (int64, error) {
	db := (*DB)(a)
	var total int64
	for {
		var n int64
		err := db.write(ctx, "audit retain", func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, q, arg, retainChunk)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		total += n
		if err != nil || n < retainChunk {
			return total, err
		}
	}
}
