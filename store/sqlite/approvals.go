package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ahp-go/ahp/store"
)

// approvals is the DB seen as store.Approvals.
type approvals DB

var _ store.Approvals = (*approvals)(nil)

const approvalColumns = `id, created_ns, session_id, agent_id, event, rule_id, reason, status,
	decided_by, decided_ns, decision_reason, requested_by, replica`

// Create implements store.Approvals.
func (s *approvals) Create(ctx context.Context, a *store.Approval) error {
	if err := a.Validate(); err != nil {
		return err
	}
	id := a.ID
	if id == "" {
		id = newApprovalID()
	}
	created := a.Created
	if created.IsZero() {
		created = time.Now()
	}
	err := (*DB)(s).write(ctx, "create approval", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO approvals (id, created_ns, session_id, agent_id, event,
			rule_id, reason, status, requested_by, replica) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
			id, created.UnixNano(), a.SessionID, a.AgentID, jsonText(a.Event), a.RuleID, a.Reason, a.RequestedBy, a.Replica)
		if isConstraint(err) {
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

// newApprovalID returns 128 random bits in hex.
func newApprovalID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// Get implements store.Approvals.
func (s *approvals) Get(ctx context.Context, id string) (store.Approval, error) {
	db := (*DB)(s)
	if err := db.checkOpen(); err != nil {
		return store.Approval{}, err
	}
	a, err := scanApproval(db.r.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
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
	var (
		conds []string
		args  []any
	)
	if f.Status != "" {
		if !f.Status.Valid() {
			return nil, fmt.Errorf("%w: approval status %q", store.ErrInvalid, f.Status)
		}
		conds, args = append(conds, "status = ?"), append(args, string(f.Status))
	}
	if f.SessionID != "" {
		conds, args = append(conds, "session_id = ?"), append(args, f.SessionID)
	}
	q := `SELECT ` + approvalColumns + ` FROM approvals`
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	q += " ORDER BY created_ns, id LIMIT ?"
	args = append(args, f.QueryLimit())
	return queryApprovals(ctx, db, db.r, q, args...)
}

type queryer interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

func queryApprovals(ctx context.Context, db *DB, q queryer, query string, args ...any) ([]store.Approval, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, db.readErr("list approvals", err)
	}
	defer rows.Close()
	var out []store.Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, db.readErr("list approvals", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, db.readErr("list approvals", err)
	}
	return out, nil
}

// Decide implements store.Approvals. The update only matches a pending row,
// so of two concurrent decisions exactly one wins.
func (s *approvals) Decide(ctx context.Context, id string, r store.Resolution) (store.Approval, error) {
	if err := r.Validate(); err != nil {
		return store.Approval{}, err
	}
	at := r.At
	if at.IsZero() {
		at = time.Now()
	}
	var out store.Approval
	err := (*DB)(s).write(ctx, "decide approval", func(tx *sql.Tx) error {
		a, err := scanApproval(tx.QueryRowContext(ctx, `UPDATE approvals
			SET status = ?, decided_by = ?, decided_ns = ?, decision_reason = ?
			WHERE id = ? AND status = 'pending' RETURNING `+approvalColumns,
			string(r.Status), r.By, at.UnixNano(), r.Reason, id))
		if err == nil {
			out = a
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		cur, err := scanApproval(tx.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
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
	if len(reason) > store.MaxApprovalFieldBytes {
		return nil, fmt.Errorf("%w: expiry reason longer than %d bytes", store.ErrInvalid, store.MaxApprovalFieldBytes)
	}
	db := (*DB)(s)
	var out []store.Approval
	err := db.write(ctx, "expire approvals", func(tx *sql.Tx) error {
		var err error
		out, err = queryApprovals(ctx, db, tx, `UPDATE approvals
			SET status = 'expired', decided_by = 'harness', decided_ns = ?, decision_reason = ?
			WHERE status = 'pending' AND created_ns < ? RETURNING `+approvalColumns,
			time.Now().UnixNano(), reason, before.UnixNano())
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

type rowScanner interface{ Scan(...any) error }

func scanApproval(row rowScanner) (store.Approval, error) {
	var (
		a         store.Approval
		created   int64
		decided   sql.NullInt64
		status    string
		eventJSON []byte
	)
	if err := row.Scan(&a.ID, &created, &a.SessionID, &a.AgentID, &eventJSON, &a.RuleID, &a.Reason,
		&status, &a.DecidedBy, &decided, &a.DecisionReason, &a.RequestedBy, &a.Replica); err != nil {
		return store.Approval{}, err
	}
	a.Created = time.Unix(0, created).UTC()
	a.Status = store.ApprovalStatus(status)
	a.Event = eventJSON
	if decided.Valid {
		a.DecidedAt = time.Unix(0, decided.Int64).UTC()
	}
	return a, nil
}
