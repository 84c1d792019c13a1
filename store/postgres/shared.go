package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ahp-go/ahp/store"
)

var _ store.Shared = (*DB)(nil)

// maxSessionState bounds the counters stored for one session.
const maxSessionState = 64 << 10

// LockSession implements store.Shared with the session's row lock: the
// row is created when missing and locked by the same statement, and stays
// locked until the transaction ends.
func (db *DB) LockSession(ctx context.Context, sessionID string) (store.SessionLock, error) {
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	if len(sessionID) > store.MaxAuditFieldBytes {
		return nil, fmt.Errorf("%w: session id longer than %d bytes", store.ErrInvalid, store.MaxAuditFieldBytes)
	}
	if db.opts.ReadOnly {
		return nil, fmt.Errorf("lock session: %w", store.ErrReadOnly)
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock session: %w", err)
	}
	var state *string
	err = tx.QueryRow(ctx, `INSERT INTO session_state (session_id, updated_ns) VALUES ($1, $2)
		ON CONFLICT (session_id) DO UPDATE SET session_id = excluded.session_id RETURNING state`,
		sessionID, time.Now().UnixNano()).Scan(&state)
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("lock session: %w", err)
	}
	l := &sessionLock{id: sessionID, tx: tx}
	if state != nil {
		l.state = []byte(*state)
	}
	return l, nil
}

type sessionLock struct {
	id    string
	tx    pgx.Tx
	state []byte
	done  bool
}

func (l *sessionLock) State() []byte { return l.state }

func (l *sessionLock) Save(ctx context.Context, state []byte) error {
	if l.done {
		return errors.New("session lock: already saved or released")
	}
	l.done = true
	ctx = context.WithoutCancel(ctx)
	if len(state) > maxSessionState {
		_ = l.tx.Rollback(ctx)
		return fmt.Errorf("%w: session %s: counters of %d bytes", store.ErrInvalid, l.id, len(state))
	}
	if _, err := l.tx.Exec(ctx, `UPDATE session_state SET state = $1, updated_ns = $2 WHERE session_id = $3`,
		string(state), time.Now().UnixNano(), l.id); err != nil {
		_ = l.tx.Rollback(ctx)
		return fmt.Errorf("save session %s: %w", l.id, err)
	}
	if err := l.tx.Commit(ctx); err != nil {
		return fmt.Errorf("save session %s: %w", l.id, err)
	}
	return nil
}

func (l *sessionLock) Release() {
	if l.done {
		return
	}
	l.done = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.tx.Rollback(ctx)
}

// WatchApprovals implements store.Shared with LISTEN on ApprovalChannel on
// a connection of its own, reconnecting (with a pause) when it drops.
func (db *DB) WatchApprovals(ctx context.Context, fn func(id string)) error {
	for {
		err := db.listen(ctx, fn)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if db.closed.Load() {
			return store.ErrClosed
		}
		db.opts.Logger.Warn("approval announcements interrupted; polling until they resume", "error", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (db *DB) listen(ctx context.Context, fn func(id string)) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A listening connection is not returned to the pool.
	defer func() {
		c := conn.Hijack()
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = c.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+ApprovalChannel); err != nil {
		return err
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if len(n.Payload) <= 256 {
			fn(n.Payload)
		}
	}
}

// Heartbeat implements store.Shared.
func (db *DB) Heartbeat(ctx context.Context, r store.Replica) error {
	if r.ID == "" || len(r.ID) > 256 || len(r.Address) > 1024 || len(r.PolicyVersion) > 256 || len(r.Version) > 256 {
		return fmt.Errorf("%w: replica: empty id or oversized field", store.ErrInvalid)
	}
	return db.write(ctx, "replica heartbeat", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO replicas (id, address, policy_version, version, started_ns, seen_ns)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO UPDATE SET address = excluded.address,
			policy_version = excluded.policy_version, version = excluded.version, seen_ns = excluded.seen_ns`,
			r.ID, r.Address, r.PolicyVersion, r.Version, r.Started.UnixNano(), time.Now().UnixNano())
		return err
	})
}

// Replicas implements store.Shared.
func (db *DB) Replicas(ctx context.Context, maxAge time.Duration) ([]store.Replica, error) {
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT id, address, policy_version, version, started_ns, seen_ns FROM replicas
		WHERE seen_ns >= $1 ORDER BY started_ns, id LIMIT 1000`, time.Now().Add(-maxAge).UnixNano())
	if err != nil {
		return nil, db.readErr("list replicas", err)
	}
	defer rows.Close()
	var out []store.Replica
	for rows.Next() {
		var r store.Replica
		var started, seen int64
		if err := rows.Scan(&r.ID, &r.Address, &r.PolicyVersion, &r.Version, &started, &seen); err != nil {
			return nil, db.readErr("list replicas", err)
		}
		r.Started, r.Seen = time.Unix(0, started).UTC(), time.Unix(0, seen).UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, db.readErr("list replicas", err)
	}
	return out, nil
}

// Forget implements store.Shared.
func (db *DB) Forget(ctx context.Context, id string) error {
	return db.write(ctx, "forget replica", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM replicas WHERE id = $1`, id)
		return err
	})
}
