package store

import (
	"bufio"
	"context"
	"fmt"
	"io"
)

// QueryFunc is the signature of AuditLog.Query. Implementations build Tail
// and Export on it with FollowAudit and ExportAudit.
type QueryFunc func(ctx context.Context, f AuditFilter) ([]AuditRecord, error)

// pageSize is how many records the helpers read per query.
const pageSize = 1000

// FollowAudit implements AuditLog.Tail on top of Query. It reads matching
// records with ID > f.AfterID page by page, calls fn for each in order and,
// once caught up, calls wait (which returns when new records may exist, or
// with an error to stop) before reading again.
//
// It relies on IDs becoming visible in increasing order, which holds for a
// store with a single writer.
func FollowAudit(ctx context.Context, query QueryFunc, f AuditFilter, wait func(context.Context) error, fn func(AuditRecord) error) error {
	f.Limit, f.Newest = pageSize, false
	for {
		recs, err := query(ctx, f)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := fn(r); err != nil {
				return err
			}
			f.AfterID = r.ID
		}
		if len(recs) == pageSize {
			continue
		}
		if err := wait(ctx); err != nil {
			return err
		}
	}
}

// ExportAudit implements AuditLog.Export on top of Query: it writes every
// matching record (at most f.Limit when set) to w with an AuditEncoder,
// oldest first, and returns how many it wrote.
func ExportAudit(ctx context.Context, query QueryFunc, w io.Writer, f AuditFilter) (int64, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := NewAuditEncoder(bw)
	var n int64
	write := func(recs []AuditRecord) error {
		for i := range recs {
			if err := enc.Encode(&recs[i]); err != nil {
				return fmt.Errorf("export audit: %w", err)
			}
			n++
		}
		return nil
	}
	if f.Newest && f.Limit > 0 {
		recs, err := query(ctx, f)
		if err != nil {
			return 0, err
		}
		if err := write(recs); err != nil {
			return n, err
		}
		return n, flush(bw)
	}
	remaining := int64(f.Limit)
	for {
		f.Limit = pageSize
		if remaining > 0 && remaining < pageSize {
			f.Limit = int(remaining)
		}
		recs, err := query(ctx, f)
		if err != nil {
			return n, err
		}
		if err := write(recs); err != nil {
			return n, err
		}
		if len(recs) > 0 {
			f.AfterID = recs[len(recs)-1].ID
		}
		if remaining > 0 {
			remaining -= int64(len(recs))
			if remaining == 0 {
				break
			}
		}
		if len(recs) < f.Limit {
			break
		}
	}
	return n, flush(bw)
}

func flush(bw *bufio.Writer) error {
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export audit: %w", err)
	}
	return nil
}
