package sqlite

import "context"

// ExecWriter runs q on the write connection; tests use it to set
// per-connection limits such as max_page_count.
func (db *DB) ExecWriter(ctx context.Context, q string) error {
	_, err := db.w.ExecContext(ctx, q)
	return err
}
