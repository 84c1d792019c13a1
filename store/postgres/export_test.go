package postgres

import "context"

// QueryRowForTest scans one row of q into dst (tests only).
func (db *DB) QueryRowForTest(ctx context.Context, q string, dst ...any) error {
	return db.pool.QueryRow(ctx, q).Scan(dst...)
}
