package sqlite

import (
	"context"
	"database/sql"
	"embed"

	"github.com/ahp-go/ahp/store/internal/migrate"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations returns the embedded scripts in version order. A file is
// named NNNN_description.sql; versions start at 1 and have no gaps.
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

// schemaVersion reads the version recorded in the database: 0 for a new one.
func schemaVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var n int
	err := q.QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_version'`).Scan(&n)
	if err != nil || n == 0 {
		return 0, err
	}
	var v int
	err = q.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v)
	return v, err
}

var dialect = migrate.Dialect{
	CreateTable: `CREATE TABLE IF NOT EXISTS schema_version (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ns INTEGER NOT NULL)`,
	Insert: `INSERT INTO schema_version (version, name, applied_ns) VALUES (?, ?, ?)`,
}

// migrateDB brings the database to SchemaVersion, one transaction per script,
// recording each in schema_version. A database newer than this binary is
// refused rather than written to. Each transaction reads the version again
// once it holds the write lock (BeginTx takes it: _txlock=immediate), since
// another process may have migrated meanwhile.
func migrateDB(ctx context.Context, db *sql.DB) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return migrate.Run(ctx, migrateConn{db}, dialect, ms)
}

// migrateConn and migrateTx adapt database/sql to migrate.Conn and Tx.
type migrateConn struct{ db *sql.DB }

func (c migrateConn) Exec(ctx context.Context, q string, args ...any) error {
	_, err := c.db.ExecContext(ctx, q, args...)
	return err
}

func (c migrateConn) Version(ctx context.Context) (int, error) { return schemaVersion(ctx, c.db) }

func (c migrateConn) Begin(ctx context.Context) (migrate.Tx, error) {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return migrateTx{tx}, nil
}

type migrateTx struct{ tx *sql.Tx }

func (t migrateTx) Exec(ctx context.Context, q string, args ...any) error {
	_, err := t.tx.ExecContext(ctx, q, args...)
	return err
}

func (t migrateTx) Version(ctx context.Context) (int, error) { return schemaVersion(ctx, t.tx) }
func (t migrateTx) Commit(context.Context) error             { return t.tx.Commit() }
func (t migrateTx) Rollback(context.Context) error           { return t.tx.Rollback() }
