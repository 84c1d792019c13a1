package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ahp-go/ahp/store/internal/migrate"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations returns the embedded scripts (NNNN_name.sql) in order.
func migrations() ([]migrate.Migration, error) {
	return migrate.Load(migrationFS, "migrations/*.sql")
}

// SchemaVersion is the schema version this package writes and reads.
var SchemaVersion = func() int {
	ms, err := migrations()
	if err != nil {
		panic(err) // the embedded files are part of the build
	}
	return len(ms)
}()

// migrateLockKey is the advisory lock every replica takes while it
// migrates ("ahp-migrate" as a number).
const migrateLockKey int64 = 0x6168702d6d6967

var dialect = migrate.Dialect{
	CreateTable: `CREATE TABLE IF NOT EXISTS schema_version (
		version integer PRIMARY KEY, name text NOT NULL, applied_ns bigint NOT NULL)`,
	Insert: `INSERT INTO schema_version (version, name, applied_ns) VALUES ($1, $2, $3)`,
}

// migrateDB brings the database to SchemaVersion. It holds an advisory lock
// for the whole run, so replicas starting together migrate one after the
// other and the later ones find nothing to do. Each script runs in its own
// transaction with its schema_version row. A database newer than this
// binary is refused.
func migrateDB(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLockKey); err != nil {
		return fmt.Errorf("advisory lock: %w", err)
	}
	defer func() {
		// A fresh context: the lock must be released even when ctx ended.
		uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := conn.Exec(uctx, `SELECT pg_advisory_unlock($1)`, migrateLockKey); err != nil {
			conn.Conn().Close(uctx) //nolint:errcheck // closing the session releases the lock
		}
	}()
	if schema != "" {
		if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+schema); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	return migrate.Run(ctx, migrateConn{conn}, dialect, ms)
}

// migrateConn and migrateTx adapt pgx to migrate.Conn and Tx. The advisory
// lock orders the replicas, so a transaction need not read the version
// again.
type migrateConn struct{ c *pgxpool.Conn }

func (m migrateConn) Exec(ctx context.Context, q string, args ...any) error {
	_, err := m.c.Exec(ctx, q, args...)
	return err
}

func (m migrateConn) Version(ctx context.Context) (int, error) {
	var v int
	err := m.c.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v)
	return v, err
}

func (m migrateConn) Begin(ctx context.Context) (migrate.Tx, error) {
	tx, err := m.c.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return migrateTx{tx}, nil
}

type migrateTx struct{ tx pgx.Tx }

func (t migrateTx) Exec(ctx context.Context, q string, args ...any) error {
	_, err := t.tx.Exec(ctx, q, args...)
	return err
}

func (t migrateTx) Commit(ctx context.Context) error   { return t.tx.Commit(ctx) }
func (t migrateTx) Rollback(ctx context.Context) error { return t.tx.Rollback(ctx) }

// checkSchema reports whether the database holds this binary's schema
// version, for a read-only open (which migrates nothing).
func checkSchema(ctx context.Context, pool *pgxpool.Pool) error {
	var v int
	err := pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "42P01": // undefined_table
		return errors.New("no ahp store in this database (ahp serve creates it when it first starts on it)")
	case err != nil:
		return fmt.Errorf("read schema version: %w", redactErr(err))
	case v != SchemaVersion:
		return fmt.Errorf("database schema version %d, this binary reads version %d (start this version of ahp serve on it once to migrate)", v, SchemaVersion)
	}
	return nil
}
