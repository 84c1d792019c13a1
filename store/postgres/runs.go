package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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
	err := (*DB)(s).write(ctx, "append run event", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `INSERT INTO run_events (run_id, session_id, kind, updated_ns, received_ns, payload)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, e.RunID, e.SessionID, e.Kind, unixNanoOrZero(e.UpdatedAt),
			received.UnixNano(), string(e.Payload)).Scan(&id)
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
	rows, err := db.pool.Query(ctx, `SELECT id, run_id, session_id, kind, updated_ns, received_ns, payload
		FROM run_events WHERE run_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
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
			payload           string
		)
		if err := rows.Scan(&e.ID, &e.RunID, &e.SessionID, &e.Kind, &updated, &received, &payload); err != nil {
			return nil, db.readErr("run events", err)
		}
		e.UpdatedAt, e.Received, e.Payload = timeOrZero(updated), time.Unix(0, received).UTC(), []byte(payload)
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
	err = (*DB)(s).write(ctx, "put run record", func(tx pgx.Tx) error {
		var row pgx.Row
		if r.Version == 0 {
			row = tx.QueryRow(ctx, `INSERT INTO runs (run_id, session_id, status, created_ns, updated_ns,
				record, flags, flagged, version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1)
				ON CONFLICT (run_id) DO NOTHING RETURNING created_ns`,
				r.RunID, r.SessionID, r.Status, time.Now().UnixNano(), unixNanoOrZero(r.UpdatedAt),
				jsonText(r.Record), string(flagsJSON), len(flags) > 0)
		} else {
			row = tx.QueryRow(ctx, `UPDATE runs SET session_id = $1, status = $2, updated_ns = $3,
				record = $4, flags = $5, flagged = $6, version = version + 1
				WHERE run_id = $7 AND version = $8 RETURNING created_ns`,
				r.SessionID, r.Status, unixNanoOrZero(r.UpdatedAt), jsonText(r.Record), string(flagsJSON),
				len(flags) > 0, r.RunID, r.Version)
		}
		err := row.Scan(&created)
		if errors.Is(err, pgx.ErrNoRows) {
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
	r, err := scanRun(db.pool.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE run_id = $1`, runID))
	if errors.Is(err, pgx.ErrNoRows) {
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
	var c conds
	if f.SessionID != "" {
		c.add("session_id = ?", f.SessionID)
	}
	if f.Status != "" {
		c.add("status = ?", f.Status)
	}
	if f.FlaggedOnly {
		c.parts = append(c.parts, "flagged")
	}
	q := `SELECT ` + runColumns + ` FROM runs` + c.where() + " ORDER BY updated_ns DESC, run_id LIMIT " + c.next(f.QueryLimit())
	rows, err := db.pool.Query(ctx, q, c.args...)
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

func scanRun(row pgx.Row) (store.RunRecord, error) {
	var (
		r                store.RunRecord
		created, updated int64
		record           *string
		flags            string
	)
	if err := row.Scan(&r.RunID, &r.SessionID, &r.Status, &created, &updated, &record, &flags, &r.Version); err != nil {
		return store.RunRecord{}, err
	}
	r.Created, r.UpdatedAt, r.Record = time.Unix(0, created).UTC(), timeOrZero(updated), rawJSON(record)
	if err := json.Unmarshal([]byte(flags), &r.Flags); err != nil {
		return store.RunRecord{}, fmt.Errorf("run %s: flags column: %w", r.RunID, err)
	}
	if len(r.Flags) == 0 {
		r.Flags = nil
	}
	return r, nil
}

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
