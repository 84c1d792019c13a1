package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ahp-go/ahp/store"
)

// approvals is the DB seen as store.Approvals.
type approvals DB

var _ store.Approvals = (*approvals)(nil)

// ApprovalChannel is the LISTEN/NOTIFY channel on which every decided or
// expired approval's ID is announced, in the deciding transaction.
const ApprovalChannel = "ahp_approval_decided"

const approvalColumns = `id, created_ns, session_id, agent_id, event, rule_id, reason, status,
	decided_by, decided_ns, decision_reason, requested_by, replica`

// Create implements store.Approvals.
func (s *approvals) Create(ctx context.Context, a *store.Approval) error {
	if err := a.Validate(); err != nil {
		return err
	}
	id := a.ID
	if id == "" {
		var b [16]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		id = hex.EncodeToString(b[:])
	}
	created := a.Created
	if created.IsZero() {
		created = time.Now()
	}
	err := (*DB)(s).write(ctx, "create approval", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO approvals (id, created_ns, session_id, agent_id, event,
			rule_id, reason, status, requested_by, replica) VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9)`,
			id, created.UnixNano(), a.SessionID, a.AgentID, jsonText(a.Event), a.RuleID, a.Reason, a.RequestedBy, a.Replica)
		if isUnique(err) {
			return fmt.Errorf("%w: approval %s already exists", store.ErrInvalid, id)
		}
		return err
	})
	if err != nil {
		return err
	}
	a.ID, a.Created, a.Status = id, created, store.ApprovalPending
	a.DecidedBy, a.DecidedAt, a.DecisionReason = "", time.Time{}, ""
	return nil
}

// Get implements store.Approvals.
func (s *approvals) Get(ctx context.Context, id string) (store.Approval, error) {
	db := (*DB)(s)
	if err := db.checkOpen(); err != nil {
		return store.Approval{}, err
	}
	a, err := scanApproval(db.pool.QueryRow(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Approval{}, fmt.Errorf("approval %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Approval{}, db.readErr("get approval", err)
	}
	return a, nil
}

// List implements store.Approvals.
func (s *approvals) List(ctx context.Context, f store.ApprovalFilter) ([]store.Approval, error) {
	db := (*DB)(s)
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	var c conds
	if f.Status != "" {
		if !f.Status.Valid() {
			return nil, fmt.Errorf("%w: approval status %q", store.ErrInvalid, f.Status)
		}
		c.add("status = ?", string(f.Status))
	}
	if f.SessionID != "" {
		c.add("session_id = ?", f.SessionID)
	}
	q := `SELECT ` + approvalColumns + ` FROM approvals` + c.where() + " ORDER BY created_ns, id LIMIT " + c.next(f.QueryLimit())
	out, err := queryApprovals(ctx, db.pool, q, c.args...)
	if err != nil {
		return nil, db.readErr("list approvals", err)
	}
	return out, nil
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func queryApprovals(ctx context.Context, q querier, query string, args ...any) ([]store.Approval, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// Decide implements store.Approvals. The update only matches a pending
// row, so of two concurrent decisions (on any replicas) exactly one wins;
// the winner announces the ID on ApprovalChannel as it commits.
func (s *approvals) Decide(ctx context.Context, id string, r store.Resolution) (store.Approval, error) {
	if err := r.Validate(); err != nil {
		return store.Approval{}, err
	}
	at := r.At
	if at.IsZero() {
		at = time.Now()
	}
	var out store.Approval
	err := (*DB)(s).write(ctx, "decide approval", func(tx pgx.Tx) error {
		a, err := scanApproval(tx.QueryRow(ctx, `UPDATE approvals
			SET status = $1, decided_by = $2, decided_ns = $3, decision_reason = $4
			WHERE id = $5 AND status = 'pending' RETURNING `+approvalColumns,
			string(r.Status), r.By, at.UnixNano(), r.Reason, id))
		if err == nil {
			out = a
			_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, ApprovalChannel, id)
			return err
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		cur, err := scanApproval(tx.QueryRow(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = $1`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("approval %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		return store.AlreadyDecided(cur)
	})
	return out, err
}

// ExpirePending implements store.Approvals.
func (s *approvals) ExpirePending(ctx context.Context, before time.Time, reason string) ([]store.Approval, error) {
	return s.expire(ctx, "expire approvals", reason, `status = 'pending' AND created_ns < $3`, before.UnixNano())
}

// ExpireOrphaned implements store.Shared.
func (db *DB) ExpireOrphaned(ctx context.Context, maxAge time.Duration, reason string) ([]store.Approval, error) {
	cut := time.Now().Add(-maxAge).UnixNano()
	return (*approvals)(db).expire(ctx, "expire orphaned approvals", reason, `status = 'pending' AND created_ns < $3
		AND replica <> '' AND replica NOT IN (SELECT id FROM replicas WHERE seen_ns >= $3)`, cut)
}

// expire marks the pending approvals matching where (with $3 = arg) as
// expired by the harness with reason, announces each on ApprovalChannel
// in the same transaction, and returns them.
func (s *approvals) expire(ctx context.Context, what, reason, where string, arg int64) ([]store.Approval, error) {
	if len(reason) > store.MaxApprovalFieldBytes {
		return nil, fmt.Errorf("%w: expiry reason longer than %d bytes", store.ErrInvalid, store.MaxApprovalFieldBytes)
	}
	var out []store.Approval
	err := (*DB)(s).write(ctx, what, func(tx pgx.Tx) error {
		var err error
		out, err = queryApprovals(ctx, tx, `UPDATE approvals
			SET status = 'expired', decided_by = 'harness', decided_ns = $1, decision_reason = $2
			WHERE `+where+` RETURNING `+approvalColumns, time.Now().UnixNano(), reason, arg)
		if err != nil {
			return err
		}
		for _, a := range out {
			if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, ApprovalChannel, a.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func scanApproval(row pgx.Row) (store.Approval, error) {
	var (
		a       store.Approval
		created int64
		decided *int64
		status  string
		event   *string
	)
	if err := row.Scan(&a.ID, &created, &a.SessionID, &a.AgentID, &event, &a.RuleID, &a.Reason,
		&status, &a.DecidedBy, &decided, &a.DecisionReason, &a.RequestedBy, &a.Replica); err != nil {
		return store.Approval{}, err
	}
	a.Created = time.Unix(0, created).UTC()
	a.Status = store.ApprovalStatus(status)
	a.Event = rawJSON(event)
	if decided != nil {
		a.DecidedAt = time.Unix(0, *decided).UTC()
	}
	return a, nil
}
