package replay

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"time"

	"github.com/ahp-go/ahp/store"
)

// fileSource reads an export file (JSON Lines, docs/audit-format.md).
type fileSource struct{ path string }

// NewFileSource returns a source reading the JSON Lines file at path, in
// the format `ahp audit export` writes. The records must be in ascending ID
// order, as an export writes them.
func NewFileSource(path string) Source { return &fileSource{path: path} }

func (s *fileSource) Name() string { return s.path }

func (s *fileSource) Records(ctx context.Context, _ store.AuditFilter) iter.Seq2[*store.AuditRecord, error] {
	return func(yield func(*store.AuditRecord, error) bool) {
		f, err := os.Open(s.path)
		if err != nil {
			yield(nil, fmt.Errorf("replay: %w", err))
			return
		}
		defer f.Close()
		decodeAll(ctx, f, s.path, yield)
	}
}

func (s *fileSource) LastTime(context.Context) (time.Time, bool, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	line, err := lastLine(f)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("replay: %s: %w", s.path, err)
	}
	if len(line) == 0 {
		return time.Time{}, false, nil
	}
	var r store.AuditRecord
	if err := r.UnmarshalJSON(line); err != nil {
		return time.Time{}, false, fmt.Errorf("replay: %s: last line: %w", s.path, err)
	}
	return r.Time, true, nil
}

// readerSource reads an export stream once.
type readerSource struct {
	r    io.Reader
	name string
	used bool
}

// NewReaderSource returns a source reading export lines from r (standard
// input, say). It can be read once, and its LastTime fails with
// ErrNoLastTime.
func NewReaderSource(r io.Reader, name string) Source { return &readerSource{r: r, name: name} }

func (s *readerSource) Name() string { return s.name }

func (s *readerSource) Records(ctx context.Context, _ store.AuditFilter) iter.Seq2[*store.AuditRecord, error] {
	return func(yield func(*store.AuditRecord, error) bool) {
		if s.used {
			yield(nil, fmt.Errorf("replay: %s can be read only once", s.name))
			return
		}
		s.used = true
		decodeAll(ctx, s.r, s.name, yield)
	}
}

func (s *readerSource) LastTime(context.Context) (time.Time, bool, error) {
	return time.Time{}, false, ErrNoLastTime
}

// decodeAll yields every record of an export stream, checking that IDs
// ascend. Lines are split and bounded as store.AuditDecoder does; each is
// decoded by decodeLine or, when that declines, by the store's decoder.
func decodeAll(ctx context.Context, r io.Reader, name string, yield func(*store.AuditRecord, error) bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), store.MaxAuditLineBytes)
	var rec store.AuditRecord
	var last int64
	line := 0
	for sc.Scan() {
		line++
		if line&1023 == 0 && ctx.Err() != nil {
			yield(nil, ctx.Err())
			return
		}
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if !decodeLine(b, &rec) {
			if err := rec.UnmarshalJSON(b); err != nil {
				yield(nil, fmt.Errorf("replay: %s: line %d: %w", name, line, err))
				return
			}
		}
		if rec.ID <= last {
			yield(nil, fmt.Errorf("replay: %s: line %d: record id %d follows id %d: records must be in ascending id order, as an export writes them", name, line, rec.ID, last))
			return
		}
		last = rec.ID
		if !yield(&rec, nil) {
			return
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("longer than %d bytes: %w", store.MaxAuditLineBytes, err)
		}
		yield(nil, fmt.Errorf("replay: %s: line %d: %w", name, line+1, err))
	}
}

// lastLine returns the last non-blank line of f (nil when there is none),
// reading backwards from the end.
func lastLine(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pos := fi.Size()
	var buf []byte // the bytes of f from pos to its end
	block := int64(64 << 10)
	for {
		tail := bytes.TrimRight(buf, " \t\r\n")
		if i := bytes.LastIndexByte(tail, '\n'); i >= 0 {
			return bytes.TrimSpace(tail[i+1:]), nil
		}
		if pos == 0 {
			return bytes.TrimSpace(tail), nil
		}
		if int64(len(tail)) > store.MaxAuditLineBytes {
			return nil, fmt.Errorf("last line longer than %d bytes", store.MaxAuditLineBytes)
		}
		n := min(block, pos)
		pos -= n
		chunk := make([]byte, int(n), int(n)+len(buf))
		if _, err := f.ReadAt(chunk, pos); err != nil {
			return nil, err
		}
		buf = append(chunk, buf...)
		block = min(block*2, 4<<20)
	}
}
