package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ahp-go/ahp/store"
)

// runs is the DB seen as store.Runs.
type runs DB

var _ store.Runs = (*runs)(nil)

// AppendEvent implements store.Runs.
func (s *runs) AppendEvent(ctx context.Context, e *store.RunEvent) error {
	if err := e.Validate(); err != nil {
		return err
	}
	received := e.Received
	if received.IsZero() {
		received = time.Now()
	}
	var id int64
	err := (*DB)(s).write(ctx, "append run event", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO run_events (run_id, session_id, kind, updated_ns, received_ns, payload)
			VALUES (?, ?, ?, ?, ?, ?)`, e.RunID, e.SessionID, e.Kind, unixNanoOrZero(e.UpdatedAt),
			received.UnixNano(), string(e.Payload))
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return err
	}
	e.ID, e.Received = id, received
	return nil
}

// Events implements store.Runs.
func (s *runs) Events(ctx context.Context, runID string, afterID int64, limit int) ([]store.RunEvent, error) {
	db := (*DB)(s)
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, run_id, session_id, kind, updated_ns, received_ns, payload
		FROM run_events WHERE run_id = ? AND id > ? ORDER BY id LIMIT ?`,
		runID, afterID, store.RunFilter{Limit: limit}.QueryLimit())
	if err != nil {
		return nil, db.readErr("run events", err)
	}
	defer rows.Close()
	var out []store.RunEvent
	for rows.Next() {
		var (
			e                 store.RunEvent
			updated, received int64
			payload           []byte
		)
		if err := rows.Scan(&e.ID, &e.RunID, &e.SessionID, &e.Kind, &updated, &received, &payload); err != nil {
			return nil, db.readErr("run events", err)
		}
		e.UpdatedAt, e.Received, e.Payload = timeOrZero(updated), time.Unix(0, received).UTC(), payload
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, db.readErr("run events", err)
	}
	return out, nil
}

// Put implements store.Runs.
func (s *runs) Put(ctx context.Context, r *store.RunRecord) error {
	if err := r.Validate(); err != nil {
		return err
	}
	flags := r.Flags
	if flags == nil {
		flags = []string{}
	}
	flagsJSON, err := json.Marshal(flags)
	if err != nil {
		return fmt.Errorf("run record %s: flags: %w", r.RunID, err)
	}
	var created int64
	err = (*DB)(s).write(ctx, "put run record", func(tx *sql.Tx) error {
		var row *sql.Row
		if r.Version == 0 {
			row = tx.QueryRowContext(ctx, `INSERT INTO runs (run_id, session_id, status, created_ns, updated_ns,
				record, flags, flagged, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)
				ON CONFLICT (run_id) DO NOTHING RETURNING created_ns`,
				r.RunID, r.SessionID, r.Status, time.Now().UnixNano(), unixNanoOrZero(r.UpdatedAt),
				jsonText(r.Record), string(flagsJSON), len(flags) > 0)
		} else {
			row = tx.QueryRowContext(ctx, `UPDATE runs SET session_id = ?, status = ?, updated_ns = ?,
				record = ?, flags = ?, flagged = ?, version = version + 1
				WHERE run_id = ? AND version = ? RETURNING created_ns`,
				r.SessionID, r.Status, unixNanoOrZero(r.UpdatedAt), jsonText(r.Record), string(flagsJSON),
				len(flags) > 0, r.RunID, r.Version)
		}
		err := row.Scan(&created)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %s at version %d: %w", r.RunID, r.Version, store.ErrConflict)
		}
		return err
	})
	if err != nil {
		return err
	}
	r.Version++
	r.Created = time.Unix(0, created).UTC()
	return nil
}

const runColumns = `run_id, session_id, status, created_ns, updated_ns, record, flags, version`

// Get implements store.Runs.
func (s *runs) Get(ctx context.Context, runID string) (store.RunRecord, error) {
	db := (*DB)(s)
	if err := db.checkOpen(); err != nil {
		return store.RunRecord{}, err
	}
	r, err := scanRun(db.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE run_id = ?`, runID))
	if errors.Is(err, sql.ErrNoRows) {
		return store.RunRecord{}, fmt.Errorf("run %s: %w", runID, store.ErrNotFound)
	}
	if err != nil {
		return store.RunRecord{}, db.readErr("get run", err)
	}
	return r, nil
}

// List implements store.Runs.
func (s *runs) List(ctx context.Context, f store.RunFilter) ([]store.RunRecord, error) {
	db := (*DB)(s)
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	var (
		conds []string
		args  []any
	)
	if f.SessionID != "" {
		conds, args = append(conds, "session_id = ?"), append(args, f.SessionID)
	}
	if f.Status != "" {
		conds, args = append(conds, "status = ?"), append(args, f.Status)
	}
	if f.FlaggedOnly {
		conds = append(conds, "flagged = 1")
	}
	q := `SELECT ` + runColumns + ` FROM runs`
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	q += " ORDER BY updated_ns DESC, run_id LIMIT ?"
	args = append(args, f.QueryLimit())
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, db.readErr("list runs", err)
	}
	defer rows.Close()
	var out []store.RunRecord
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, db.readErr("list runs", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, db.readErr("list runs", err)
	}
	return out, nil
}

func scanRun(row rowScanner) (store.RunRecord, error) {
	var (
		r                store.RunRecord
		created, updated int64
		record, flags    []byte
	)
	if err := row.Scan(&r.RunID, &r.SessionID, &r.Status, &created, &updated, &record, &flags, &r.Version); err != nil {
		return store.RunRecord{}, err
	}
	r.Created, r.UpdatedAt, r.Record = time.Unix(0, created).UTC(), timeOrZero(updated), record
	if err := json.Unmarshal(flags, &r.Flags); err != nil {
		return store.RunRecord{}, fmt.Errorf("run %s: flags column: %w", r.RunID, err)
	}
	if len(r.Flags) == 0 {
		r.Flags = nil
	}
	return r, nil
}

// unixNanoOrZero stores the zero time as 0 (time.Time{}.UnixNano is out of
// the int64 range).
func unixNanoOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func timeOrZero(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}
