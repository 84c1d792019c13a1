package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/internal/groupcommit"
)

// Options configure a DB. The zero value is usable.
type Options struct {
	// Schema, when set, is the schema the store's tables live in (created
	// when missing); the connection's default search_path otherwise.
	Schema string
	// MaxConns bounds the connection pool (16 when 0).
	MaxConns int32
	// QueueSize bounds the audit records accepted but not yet committed
	// (4096 when 0); Append waits while it is full.
	QueueSize int
	// MaxBatch bounds the records of one group commit (256 when 0).
	MaxBatch int
	// WriteTimeout bounds one commit (10 s when 0).
	WriteTimeout time.Duration
	// TailInterval is how often Tail polls for records written by other
	// replicas (200 ms when 0).
	TailInterval time.Duration
	// Logger receives the store's log lines (discarded when nil).
	Logger *slog.Logger
	// ReadOnly opens a database ahp serve has already set up, for reading
	// only (the CLI's audit, runs and replay): no migration runs, every
	// write fails with store.ErrReadOnly, and the connections' transactions
	// are read-only (default_transaction_read_only), so the database
	// refuses a write too. A schema older or newer than this binary's is
	// refused.
	ReadOnly bool
}

func (o Options) withDefaults() Options {
	if o.MaxConns <= 0 {
		o.MaxConns = 16
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 4096
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.TailInterval <= 0 {
		o.TailInterval = 200 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// DB is a store.Store on a PostgreSQL database, shared by every replica
// that opens the same database. Open it with Open; it is safe for
// concurrent use.
type DB struct {
	opts Options
	pool *pgxpool.Pool
	cfg  *pgxpool.Config
	wr   *groupcommit.Writer

	lastWriteErr atomic.Pointer[error] // the last write's failure; nil after a success

	closed    atomic.Bool
	closeOnce sync.Once
}

var _ store.Store = (*DB)(nil)

// Open connects to the database named by url (postgres://…), applies the
// schema migrations (under an advisory lock, so replicas may start at
// once) and starts the audit writer. Close the DB when done.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	o := opts.withDefaults()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's parse errors may quote the URL, password included.
		return nil, errors.New("open postgres store: the URL does not parse as a PostgreSQL connection string")
	}
	cfg.MaxConns = o.MaxConns
	if o.Schema != "" {
		if !validSchema(o.Schema) {
			return nil, fmt.Errorf("open postgres store: schema %q: use letters, digits and _ only", o.Schema)
		}
		cfg.ConnConfig.RuntimeParams["search_path"] = o.Schema
	}
	if o.ReadOnly {
		cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	}
	db := &DB{opts: o, cfg: cfg}
	if db.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("open postgres store: %w", redactErr(err))
	}
	if err := db.pool.Ping(ctx); err != nil {
		db.pool.Close()
		return nil, fmt.Errorf("open postgres store: connect to %s: %w", db.Where(), redactErr(err))
	}
	if o.ReadOnly {
		err = checkSchema(ctx, db.pool)
	} else if err = migrateDB(ctx, db.pool, o.Schema); err != nil {
		err = fmt.Errorf("migrate: %w", err)
	}
	if err != nil {
		db.pool.Close()
		return nil, fmt.Errorf("open postgres store %s: %w", db.Where(), err)
	}
	db.wr = startWriter(db)
	return db, nil
}

// Where names the database (host, port, database; never the password).
func (db *DB) Where() string {
	c := db.cfg.ConnConfig
	return fmt.Sprintf("postgres://%s:%d/%s", c.Host, c.Port, c.Database)
}

func validSchema(s string) bool {
	if len(s) > 63 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')) {
			return false
		}
	}
	return s != ""
}

// redactErr keeps a connection error's message but drops any connection
// string it may carry.
func redactErr(err error) error {
	var pe *pgconn.ConnectError
	if errors.As(err, &pe) {
		return errors.New("cannot connect: " + errors.Unwrap(pe).Error())
	}
	return err
}

// Audit returns the audit log.
func (db *DB) Audit() store.AuditLog { return (*auditLog)(db) }

// Approvals returns the approvals.
func (db *DB) Approvals() store.Approvals { return (*approvals)(db) }

// Memory returns the memory facts.
func (db *DB) Memory() store.Memory { return (*memory)(db) }

// Runs returns the run events and records.
func (db *DB) Runs() store.Runs { return (*runs)(db) }

// Ping implements store.Store: the database answers and the last write
// did not fail.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.checkOpen(); err != nil {
		return err
	}
	if err := db.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres store: %w", redactErr(err))
	}
	if p := db.lastWriteErr.Load(); p != nil {
		return fmt.Errorf("postgres store: last write failed: %w", *p)
	}
	return nil
}

// note records the outcome of a write for Ping.
func (db *DB) note(err error) {
	if err == nil {
		if db.lastWriteErr.Load() != nil {
			db.lastWriteErr.Store(nil)
		}
		return
	}
	db.lastWriteErr.Store(&err)
}

// Close commits the audit records already queued, acknowledges their
// waiters and closes the pool. It is safe to call twice.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.closed.Store(true)
		db.wr.Close()
		db.pool.Close()
	})
	return nil
}

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

// write runs fn in a transaction and notes the outcome for Ping.
func (db *DB) write(ctx context.Context, op string, fn func(tx pgx.Tx) error) error {
	if err := db.checkOpen(); err != nil {
		return err
	}
	if db.opts.ReadOnly {
		return fmt.Errorf("%s: %w", op, store.ErrReadOnly)
	}
	err := pgx.BeginFunc(ctx, db.pool, fn)
	if err != nil {
		if db.closed.Load() {
			return store.ErrClosed
		}
		if isStoreErr(err) {
			return err
		}
		db.note(err)
		return fmt.Errorf("%s: %w", op, err)
	}
	db.note(nil)
	return nil
}

// isStoreErr reports errors that are answers, not failures.
func isStoreErr(err error) bool {
	for _, e := range []error{store.ErrNotFound, store.ErrAlreadyDecided, store.ErrConflict, store.ErrInvalid} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// isUnique reports a unique-constraint violation.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
