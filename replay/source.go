package replay

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/ahp-go/ahp/store"
)

// Source is a recorded audit stream to replay.
type Source interface {
	// Name describes the input in reports (a path, never a time).
	Name() string
	// Records yields the records in ascending ID order, each valid until
	// the next one is yielded. Of f only SessionID and Until are used: a
	// Source may leave out records of other sessions and records at or
	// after Until (Run drops them either way). A non-nil error ends the
	// sequence.
	Records(ctx context.Context, f store.AuditFilter) iter.Seq2[*store.AuditRecord, error]
	// LastTime returns the time of the record with the highest ID; ok is
	// false when the input holds no record.
	LastTime(ctx context.Context) (t time.Time, ok bool, err error)
}

// ErrNoLastTime is returned by LastTime of a source that can be read only
// once (standard input), so that a look-back relative to the last record
// cannot be resolved.
var ErrNoLastTime = errors.New("replay: the last record of a stream cannot be found before reading it; use a file or the store")

// storePage is how many records a store source reads per query.
const storePage = 2000

// storeSource reads an AuditLog page by page.
type storeSource struct {
	log  store.AuditLog
	name string
}

// NewStoreSource returns a source reading log with paged queries (a store
// opened read-only is enough). name describes it in reports.
func NewStoreSource(log store.AuditLog, name string) Source {
	return &storeSource{log: log, name: name}
}

func (s *storeSource) Name() string { return s.name }

func (s *storeSource) Records(ctx context.Context, f store.AuditFilter) iter.Seq2[*store.AuditRecord, error] {
	return func(yield func(*store.AuditRecord, error) bool) {
		q := store.AuditFilter{SessionID: f.SessionID, Until: f.Until, Limit: storePage}
		for {
			recs, err := s.log.Query(ctx, q)
			if err != nil {
				yield(nil, fmt.Errorf("replay: reading the audit log: %w", err))
				return
			}
			for i := range recs {
				if recs[i].ID <= q.AfterID {
					yield(nil, fmt.Errorf("replay: audit log returned id %d after %d", recs[i].ID, q.AfterID))
					return
				}
				q.AfterID = recs[i].ID
				if !yield(&recs[i], nil) {
					return
				}
			}
			if len(recs) < q.QueryLimit() {
				return
			}
		}
	}
}

func (s *storeSource) LastTime(ctx context.Context) (time.Time, bool, error) {
	recs, err := s.log.Query(ctx, store.AuditFilter{Limit: 1, Newest: true})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("replay: reading the audit log: %w", err)
	}
	if len(recs) == 0 {
		return time.Time{}, false, nil
	}
	return recs[0].Time, true, nil
}
