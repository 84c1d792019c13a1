package postgres

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ahp-go/ahp/store"
)

// auditLog is the DB seen as a store.AuditLog.
type auditLog DB

var _ store.AuditLog = (*auditLog)(nil)

// Append implements store.AuditLog: the record is committed (and, with
// PostgreSQL's default synchronous_commit, flushed) when it returns nil.
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
	if err := r.Validate(); err != nil {
		return err
	}
	if err := (*DB)(a).checkOpen(); err != nil {
		return err
	}
	if a.opts.ReadOnly {
		return fmt.Errorf("audit append: %w", store.ErrReadOnly)
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	return nil
}

// QueueDepth implements store.AuditLog.
func (a *auditLog) QueueDepth() int { return a.wr.Pending() }

const auditColumns = `id, ts_ns, session_id, agent_id, event_type, blocking, outcome, rule_id,
	policy_version, principal, transport, latency_ns, descriptor_hash, error, event, decision, redacted,
	shadow, shadow_changed`

// conds collects SQL conditions with numbered parameters.
type conds struct {
	parts []string
	args  []any
}

func (c *conds) add(cond string, v any) {
	c.args = append(c.args, v)
	c.parts = append(c.parts, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(c.args))))
}

func (c *conds) where() string {
	if len(c.parts) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c.parts, " AND ")
}

// next returns the placeholder of one more argument.
func (c *conds) next(v any) string {
	c.args = append(c.args, v)
	return "$" + strconv.Itoa(len(c.args))
}

// Query implements store.AuditLog.
func (a *auditLog) Query(ctx context.Context, f store.AuditFilter) ([]store.AuditRecord, error) {
	db := (*DB)(a)
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	var c conds
	if f.SessionID != "" {
		c.add("session_id = ?", f.SessionID)
	}
	if !f.Since.IsZero() {
		c.add("ts_ns >= ?", f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		c.add("ts_ns < ?", f.Until.UnixNano())
	}
	if f.Outcome != "" {
		c.add("outcome = ?", f.Outcome)
	}
	if f.RuleID != "" {
		c.add("rule_id = ?", f.RuleID)
	}
	if f.EventType != "" {
		c.add("event_type = ?", f.EventType)
	}
	if f.AfterID > 0 {
		c.add("id > ?", f.AfterID)
	}
	switch f.Shadow {
	case store.ShadowEvaluated:
		c.parts = append(c.parts, "shadow IS NOT NULL")
	case store.ShadowChanged:
		c.parts = append(c.parts, "shadow_changed")
	}
	q := "SELECT " + auditColumns + " FROM audit" + c.where()
	if f.Newest {
		q += " ORDER BY id DESC LIMIT "
	} else {
		q += " ORDER BY id ASC LIMIT "
	}
	q += c.next(f.QueryLimit())
	rows, err := db.pool.Query(ctx, q, c.args...)
	if err != nil {
		return nil, db.readErr("audit query", err)
	}
	defer rows.Close()
	var out []store.AuditRecord
	for rows.Next() {
		var (
			r                       store.AuditRecord
			ts, latencyNs           int64
			event, decision, shadow *string
			redacted                string
		)
		if err := rows.Scan(&r.ID, &ts, &r.SessionID, &r.AgentID, &r.EventType, &r.Blocking, &r.Outcome,
			&r.RuleID, &r.PolicyVersion, &r.Principal, &r.Transport, &latencyNs, &r.DescriptorHash,
			&r.Error, &event, &decision, &redacted, &shadow, &r.ShadowChanged); err != nil {
			return nil, db.readErr("audit query", err)
		}
		r.Time = time.Unix(0, ts).UTC()
		r.Latency = time.Duration(latencyNs)
		r.Event, r.Decision, r.Shadow = rawJSON(event), rawJSON(decision), rawJSON(shadow)
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

func rawJSON(s *string) []byte {
	if s == nil || *s == "" {
		return nil
	}
	return []byte(*s)
}

// Tail implements store.AuditLog. Commits of this process wake it at
// once; records of other replicas are seen within TailInterval.
func (a *auditLog) Tail(ctx context.Context, f store.AuditFilter, fn func(store.AuditRecord) error) error {
	db := (*DB)(a)
	if err := db.checkOpen(); err != nil {
		return err
	}
	next := a.wr.CommitSignal()
	wait := func(ctx context.Context) error {
		t := time.NewTimer(db.opts.TailInterval)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-next:
		case <-t.C:
		}
		if err := db.checkOpen(); err != nil {
			return err
		}
		next = a.wr.CommitSignal()
		return nil
	}
	return store.FollowAudit(ctx, a.Query, f, wait, fn)
}

// Export implements store.AuditLog.
func (a *auditLog) Export(ctx context.Context, w io.Writer, f store.AuditFilter) (int64, error) {
	return store.ExportAudit(ctx, a.Query, w, f)
}

// retainChunk is how many rows one retention statement deletes.
const retainChunk = 5000

// Retain implements store.AuditLog, deleting in chunks so that audit
// commits are not held up behind a large deletion.
func (a *auditLog) Retain(ctx context.Context, maxAge time.Duration, maxRows int64) (int64, error) {
	db := (*DB)(a)
	if db.opts.ReadOnly {
		return 0, fmt.Errorf("audit retain: %w", store.ErrReadOnly)
	}
	var total int64
	if maxAge > 0 {
		cutoff := time.Now().Add(-maxAge).UnixNano()
		n, err := a.deleteChunks(ctx, `DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE ts_ns < $1 LIMIT $2)`, cutoff)
		total += n
		if err != nil {
			return total, err
		}
	}
	if maxRows > 0 {
		var boundary int64
		err := db.pool.QueryRow(ctx, `SELECT id FROM audit ORDER BY id DESC LIMIT 1 OFFSET $1`, maxRows).Scan(&boundary)
		switch {
		case err == pgx.ErrNoRows:
		case err != nil:
			return total, db.readErr("audit retain", err)
		default:
			n, err := a.deleteChunks(ctx, `DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE id <= $1 ORDER BY id LIMIT $2)`, boundary)
			total += n
			if err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

func (a *auditLog) deleteChunks(ctx context.Context, q string, arg int64) (int64, error) {
	db := (*DB)(a)
	var total int64
	for {
		var n int64
		err := db.write(ctx, "audit retain", func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, q, arg, retainChunk)
			n = tag.RowsAffected()
			return err
		})
		total += n
		if err != nil || n < retainChunk {
			return total, err
		}
	}
}
