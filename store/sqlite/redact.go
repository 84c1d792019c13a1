package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Redaction says how DB.Redact rewrites stored content. Each function
// returns its input redacted and the kinds of secret it replaced (nil when
// it changed nothing).
type Redaction struct {
	// Text redacts a plain string (ids, reasons, errors, memory facts).
	Text func(s string) (string, []string)
	// Event redacts the JSON of a recorded event envelope.
	Event func(raw []byte) ([]byte, []string)
	// JSON redacts any other JSON document (decisions, run records).
	JSON func(raw []byte) ([]byte, []string)
}

// RedactStats counts the rows DB.Redact rewrote, by table.
type RedactStats struct {
	Audit, Approvals, Facts, RunEvents, Runs int64
}

// Total is the number of rows rewritten.
func (s RedactStats) Total() int64 {
	return s.Audit + s.Approvals + s.Facts + s.RunEvents + s.Runs
}

// redactChunk is how many rows one rewriting transaction reads.
const redactChunk = 500

// Redact rewrites every audit record, approval, memory fact and run row
// with rd, adding to each audit record the kinds that were redacted. Then,
// so that no copy of the old content is left in the file, it rebuilds the
// full-text index of the facts, checkpoints and truncates the WAL, and
// compacts the database (VACUUM); secure_delete is on, so freed pages are
// zeroed too (secure_delete is ON while it runs). It needs the write connection (not ReadOnly) and may run
// while a harness is using the database; VACUUM then waits for its writes.
func (db *DB) Redact(ctx context.Context, rd Redaction) (RedactStats, error) {
	var st RedactStats
	if db.opts.ReadOnly || db.w == nil {
		return st, fmt.Errorf("redact: the database is open read-only")
	}
	if err := db.checkOpen(); err != nil {
		return st, err
	}
	// Overwritten content is zeroed wherever it was, freed pages included.
	// The pragma holds for the one write connection.
	if _, err := db.w.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
		return st, fmt.Errorf("redact: secure_delete: %w", err)
	}
	defer db.w.ExecContext(context.WithoutCancel(ctx), `PRAGMA secure_delete = FAST`) //nolint:errcheck // back to the default of the connection
	text := func(s *string, kinds *[]string) bool {
		ns, k := rd.Text(*s)
		if k == nil {
			return false
		}
		*s = ns
		*kinds = append(*kinds, k...)
		return true
	}
	doc := func(fn func([]byte) ([]byte, []string), b *[]byte, kinds *[]string) bool {
		if len(*b) == 0 {
			return false
		}
		nb, k := fn(*b)
		if k == nil {
			return false
		}
		*b = nb
		*kinds = append(*kinds, k...)
		return true
	}

	// The audit log.
	err := db.chunks(ctx, "audit", `SELECT id, session_id, agent_id, error, event, decision, redacted FROM audit WHERE id > ? ORDER BY id LIMIT ?`,
		func(rows *sql.Rows) (int64, func(*sql.Tx) error, error) {
			var (
				id                  int64
				sess, agent, errTxt string
				ev, dec             []byte
				redacted            string
			)
			if err := rows.Scan(&id, &sess, &agent, &errTxt, &ev, &dec, &redacted); err != nil {
				return 0, nil, err
			}
			var kinds []string
			var apply func(*sql.Tx) error
			changed := text(&sess, &kinds)
			changed = text(&agent, &kinds) || changed
			changed = text(&errTxt, &kinds) || changed
			changed = doc(rd.Event, &ev, &kinds) || changed
			changed = doc(rd.JSON, &dec, &kinds) || changed
			if changed {
				all := kinds
				if redacted != "" {
					all = append(all, strings.Split(redacted, ",")...)
				}
				slices.Sort(all)
				all = slices.Compact(all)
				apply = func(tx *sql.Tx) error {
					st.Audit++
					_, err := tx.ExecContext(ctx, `UPDATE audit SET session_id = ?, agent_id = ?, error = ?, event = ?, decision = ?, redacted = ? WHERE id = ?`,
						sess, agent, errTxt, jsonText(ev), jsonText(dec), strings.Join(all, ","), id)
					return err
				}
			}
			return id, apply, nil
		})
	if err != nil {
		return st, err
	}

	// Approvals (keyed by text ids: read them all, they are few).
	err = db.write(ctx, "redact approvals", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, session_id, agent_id, event, reason, decision_reason FROM approvals`)
		if err != nil {
			return err
		}
		type row struct {
			id, sess, agent, reason, dreason string
			ev                               []byte
		}
		var changed []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.sess, &r.agent, &r.ev, &r.reason, &r.dreason); err != nil {
				rows.Close()
				return err
			}
			var kinds []string
			c := text(&r.sess, &kinds)
			c = text(&r.agent, &kinds) || c
			c = text(&r.reason, &kinds) || c
			c = text(&r.dreason, &kinds) || c
			c = doc(rd.Event, &r.ev, &kinds) || c
			if c {
				changed = append(changed, r)
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		for _, r := range changed {
			if _, err := tx.ExecContext(ctx, `UPDATE approvals SET session_id = ?, agent_id = ?, event = ?, reason = ?, decision_reason = ? WHERE id = ?`,
				r.sess, r.agent, jsonText(r.ev), r.reason, r.dreason, r.id); err != nil {
				return err
			}
		}
		st.Approvals = int64(len(changed))
		return nil
	})
	if err != nil {
		return st, err
	}

	// Memory facts (the update trigger re-indexes each one).
	err = db.chunks(ctx, "facts", `SELECT id, content, source FROM facts WHERE id > ? ORDER BY id LIMIT ?`,
		func(rows *sql.Rows) (int64, func(*sql.Tx) error, error) {
			var (
				id              int64
				content, source string
				kinds           []string
				apply           func(*sql.Tx) error
			)
			if err := rows.Scan(&id, &content, &source); err != nil {
				return 0, nil, err
			}
			c := text(&content, &kinds)
			c = text(&source, &kinds) || c
			if c {
				apply = func(tx *sql.Tx) error {
					st.Facts++
					_, err := tx.ExecContext(ctx, `UPDATE facts SET content = ?, source = ? WHERE id = ?`, content, source, id)
					return err
				}
			}
			return id, apply, nil
		})
	if err != nil {
		return st, err
	}

	// Run events and run records.
	err = db.chunks(ctx, "run_events", `SELECT id, payload FROM run_events WHERE id > ? ORDER BY id LIMIT ?`,
		func(rows *sql.Rows) (int64, func(*sql.Tx) error, error) {
			var (
				id      int64
				payload []byte
				kinds   []string
				apply   func(*sql.Tx) error
			)
			if err := rows.Scan(&id, &payload); err != nil {
				return 0, nil, err
			}
			if doc(rd.JSON, &payload, &kinds) {
				apply = func(tx *sql.Tx) error {
					st.RunEvents++
					_, err := tx.ExecContext(ctx, `UPDATE run_events SET payload = ? WHERE id = ?`, string(payload), id)
					return err
				}
			}
			return id, apply, nil
		})
	if err != nil {
		return st, err
	}
	err = db.chunks(ctx, "runs", `SELECT rowid, record FROM runs WHERE rowid > ? ORDER BY rowid LIMIT ?`,
		func(rows *sql.Rows) (int64, func(*sql.Tx) error, error) {
			var (
				id     int64
				record []byte
				kinds  []string
				apply  func(*sql.Tx) error
			)
			if err := rows.Scan(&id, &record); err != nil {
				return 0, nil, err
			}
			if doc(rd.JSON, &record, &kinds) {
				apply = func(tx *sql.Tx) error {
					st.Runs++
					_, err := tx.ExecContext(ctx, `UPDATE runs SET record = ? WHERE rowid = ?`, jsonText(record), id)
					return err
				}
			}
			return id, apply, nil
		})
	if err != nil {
		return st, err
	}
	return st, db.Compact(ctx)
}

// Compact leaves no copy of deleted or overwritten content in the files:
// it rebuilds the full-text index of the facts (whose segments keep old
// terms until merged), copies the WAL into the database and truncates it,
// rewrites the database into a new file (VACUUM), and truncates the WAL
// that VACUUM wrote.
func (db *DB) Compact(ctx context.Context) error {
	if db.opts.ReadOnly || db.w == nil {
		return fmt.Errorf("compact: the database is open read-only")
	}
	err := db.write(ctx, "compact: rebuild the facts index", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO facts_fts (facts_fts) VALUES ('rebuild')`)
		return err
	})
	if err != nil {
		return err
	}
	for _, q := range []string{`PRAGMA wal_checkpoint(TRUNCATE)`, `VACUUM`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
		if _, err := db.w.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("compact: %s: %w", q, err)
		}
	}
	return nil
}

// chunks runs scan on the rows of q (which takes the last id seen and a
// limit) in transactions of redactChunk rows. scan returns the row's id
// and, when the row must change, the update to apply; updates run once the
// rows are read.
func (db *DB) chunks(ctx context.Context, table, q string, scan func(*sql.Rows) (int64, func(*sql.Tx) error, error)) error {
	var after int64
	for {
		n := 0
		err := db.write(ctx, "redact "+table, func(tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, q, after, redactChunk)
			if err != nil {
				return err
			}
			var applies []func(*sql.Tx) error
			n = 0
			for rows.Next() {
				id, apply, err := scan(rows)
				if err != nil {
					rows.Close()
					return err
				}
				n++
				after = id
				if apply != nil {
					applies = append(applies, apply)
				}
			}
			if err := errors.Join(rows.Err(), rows.Close()); err != nil {
				return err
			}
			for _, apply := range applies {
				if err := apply(tx); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if n < redactChunk {
			return nil
		}
	}
}
