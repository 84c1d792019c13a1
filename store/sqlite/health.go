package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/ahp-go/ahp/store"
)

// health remembers the last failed write until a write succeeds again.
type health struct {
	lastErr atomic.Pointer[error]
}

func (h *health) failed() error {
	if p := h.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// note records the outcome of a write. Only storage failures change the
// state: a rejected record or a decided-twice approval says nothing about
// the disk.
func (db *DB) note(err error) {
	switch {
	case err == nil:
		if p := db.health.lastErr.Load(); p != nil && db.health.lastErr.CompareAndSwap(p, nil) {
			db.opts.Logger.Info("store writes succeed again", "path", db.path)
		}
	case storageFailure(err):
		if db.health.lastErr.Swap(&err) == nil {
			db.opts.Logger.Error("store write failed; not ready until a write succeeds", "path", db.path, "err", err)
		}
		db.met.writeErrors.Inc()
	}
}

// storageFailure reports whether err means the database cannot take writes:
// disk full, I/O error, read-only or vanished file, corruption, a lock held
// too long.
func storageFailure(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN,
		sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_PERM, sqlite3.SQLITE_NOMEM,
		sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_PROTOCOL:
		return true
	}
	return false
}

// isConstraint reports whether err is a constraint violation.
func isConstraint(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}

// isBusy reports whether err is SQLITE_BUSY (a lock held elsewhere).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// write runs fn in one immediate transaction on the write connection,
// commits, and records the outcome for Ping. Errors from fn are returned
// as they are.
func (db *DB) write(ctx context.Context, op string, fn func(*sql.Tx) error) error {
	if db.opts.ReadOnly {
		return fmt.Errorf("%s: %w", op, store.ErrReadOnly)
	}
	if err := db.checkOpen(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, db.opts.WriteTimeout)
	defer cancel()
	err := db.inTx(ctx, fn)
	db.note(err)
	if err != nil {
		if db.closed.Load() {
			return store.ErrClosed
		}
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrAlreadyDecided) ||
			errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrInvalid) {
			return err
		}
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

func (db *DB) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback() // the error that matters is fn's
		return err
	}
	return tx.Commit()
}

// Ping reports readiness. It fails after Close, when the read pool cannot
// reach the file, and after a failed write until a write succeeds: it then
// tries one small write transaction itself (committed and synced like an
// audit batch) so that readiness comes back once the disk does.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.checkOpen(); err != nil {
		return err
	}
	if last := db.health.failed(); last != nil && !db.opts.ReadOnly {
		err := db.write(ctx, "probe write", func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO store_probe (data) VALUES (zeroblob(8192))`); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM store_probe`)
			return err
		})
		if err != nil {
			return fmt.Errorf("store not ready: writes fail: %w", err)
		}
	}
	if err := db.r.PingContext(ctx); err != nil {
		return db.readErr("store not ready", err)
	}
	return nil
}
