package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/internal/groupcommit"
)

// DB is a store.Store on one SQLite file. Open it with Open; it is safe for
// concurrent use.
type DB struct {
	path   string
	opts   Options
	w      *sql.DB             // the single write connection; nil when read-only
	r      *sql.DB             // the read pool
	wr     *groupcommit.Writer // the group commit writer; nil when read-only
	health health
	met    *metrics

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var _ store.Store = (*DB)(nil)

// Open opens (creating when needed) the database at path, which is usually
// filepath.Join(dataDir, FileName), applies the schema migrations and starts
// the writer. Close the DB when done.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	db := &DB{path: path, opts: o}
	if err := db.open(ctx); err != nil {
		db.closeDBs()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	met, err := newMetrics(o.Registerer, db)
	if err != nil {
		db.closeDBs()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	db.met = met
	if !o.ReadOnly {
		db.wr, err = startWriter(ctx, db)
		if err != nil {
			met.unregister()
			db.closeDBs()
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
	}
	return db, nil
}

func (db *DB) open(ctx context.Context) error {
	if db.opts.ReadOnly {
		if _, err := os.Stat(db.path); err != nil {
			return fmt.Errorf("no database: %w", err)
		}
	} else if err := os.MkdirAll(filepath.Dir(db.path), 0o750); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	if !db.opts.ReadOnly {
		wdsn, err := dsn(db.path, db.opts, true)
		if err != nil {
			return err
		}
		if db.w, err = sql.Open("sqlite", wdsn); err != nil {
			return err
		}
		db.w.SetMaxOpenConns(1)
		db.w.SetMaxIdleConns(1)
		db.w.SetConnMaxLifetime(0)
		db.w.SetConnMaxIdleTime(0)
		if err := connect(ctx, db.w, db.opts.BusyTimeout); err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		if err := checkWAL(ctx, db.w); err != nil {
			return err
		}
		if err := migrateDB(ctx, db.w); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	rdsn, err := dsn(db.path, db.opts, false)
	if err != nil {
		return err
	}
	if db.r, err = sql.Open("sqlite", rdsn); err != nil {
		return err
	}
	db.r.SetMaxOpenConns(db.opts.ReadConns)
	db.r.SetMaxIdleConns(db.opts.ReadConns)
	v, err := schemaVersion(ctx, db.r)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v != SchemaVersion {
		return fmt.Errorf("database schema version %d, this binary reads version %d (open it read-write once to migrate)", v, SchemaVersion)
	}
	return nil
}

// connect opens the first connection. Switching a new file to WAL takes an
// exclusive lock for which SQLite does not wait, so when two processes
// create the database at once one of them gets SQLITE_BUSY: retry that for
// up to busyTimeout.
func connect(ctx context.Context, w *sql.DB, busyTimeout time.Duration) error {
	deadline := time.Now().Add(busyTimeout)
	for {
		err := w.PingContext(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// checkWAL makes sure the journal mode really is WAL: the durability
// argument of docs/store.md depends on it.
func checkWAL(ctx context.Context, w *sql.DB) error {
	var mode string
	if err := w.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		return fmt.Errorf("read journal mode: %w", err)
	}
	if mode != "wal" {
		return fmt.Errorf("journal mode is %q, want wal (is the file on a file system without shared memory?)", mode)
	}
	return nil
}

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// Audit returns the audit log.
func (db *DB) Audit() store.AuditLog { return (*auditLog)(db) }

// Approvals returns the approvals.
func (db *DB) Approvals() store.Approvals { return (*approvals)(db) }

// Memory returns the memory facts.
func (db *DB) Memory() store.Memory { return (*memory)(db) }

// Runs returns the run events and records.
func (db *DB) Runs() store.Runs { return (*runs)(db) }

// Close commits the records already queued, acknowledges their waiters,
// stops the writer and closes the database. It is safe to call twice.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.closed.Store(true) // reads and other writes stop here
		if db.wr != nil {
			db.wr.Close() // commits what is queued, on the still open connection
		}
		db.met.unregister()
		db.closeErr = db.closeDBs()
	})
	return db.closeErr
}

func (db *DB) closeDBs() error {
	var errs []error
	if db.r != nil {
		errs = append(errs, db.r.Close())
	}
	if db.w != nil {
		errs = append(errs, db.w.Close())
	}
	return errors.Join(errs...)
}

// checkOpen returns store.ErrClosed after Close.
func (db *DB) checkOpen() error {
	if db.closed.Load() {
		return store.ErrClosed
	}
	return nil
}

// readErr maps a read error: store.ErrClosed after Close, else wrapped.
func (db *DB) readErr(op string, err error) error {
	if db.closed.Load() {
		return store.ErrClosed
	}
	return fmt.Errorf("%s: %w", op, err)
}
