package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/ahp-go/ahp/store"
)

// memory is the DB seen as store.Memory.
type memory DB

var _ store.Memory = (*memory)(nil)

// Add implements store.Memory.
func (m *memory) Add(ctx context.Context, f *store.Fact) error {
	if err := f.Validate(); err != nil {
		return err
	}
	created := f.Created
	if created.IsZero() {
		created = time.Now()
	}
	var id int64
	err := (*DB)(m).write(ctx, "add fact", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO facts (session_id, content, source, confidence, created_ns)
			VALUES (?, ?, ?, ?, ?)`, f.SessionID, f.Content, f.Source, float64(f.Confidence), created.UnixNano())
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return err
	}
	f.ID, f.Created = id, created
	return nil
}

// Delete implements store.Memory.
func (m *memory) Delete(ctx context.Context, id int64) error {
	return (*DB)(m).write(ctx, "delete fact", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM facts WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			return fmt.Errorf("fact %d: %w", id, store.ErrNotFound)
		}
		return nil
	})
}

// Search implements store.Memory. Text is split into words, and a fact
// matches when it contains any of them (after stemming); facts with more and
// rarer matching words rank first (BM25). Text with no word matches nothing.
func (m *memory) Search(ctx context.Context, q store.FactQuery) ([]store.Fact, error) {
	db := (*DB)(m)
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	var (
		query string
		args  []any
	)
	scope := ""
	if !q.AnySession {
		if q.SessionID != "" {
			scope = " AND f.session_id IN ('', ?)"
			args = append(args, q.SessionID)
		} else {
			scope = " AND f.session_id = ''"
		}
	}
	if strings.TrimSpace(q.Text) == "" {
		query = `SELECT f.id, f.session_id, f.content, f.source, f.confidence, f.created_ns
			FROM facts f WHERE 1` + scope + ` ORDER BY f.id DESC LIMIT ?`
	} else {
		match := ftsMatch(q.Text)
		if match == "" {
			return nil, nil
		}
		query = `SELECT f.id, f.session_id, f.content, f.source, f.confidence, f.created_ns
			FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid
			WHERE facts_fts MATCH ?` + scope + ` ORDER BY facts_fts.rank, f.id DESC LIMIT ?`
		args = append([]any{match}, args...)
	}
	args = append(args, q.QueryLimit())
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, db.readErr("search facts", err)
	}
	defer rows.Close()
	var out []store.Fact
	for rows.Next() {
		var (
			f       store.Fact
			conf    float64
			created int64
		)
		if err := rows.Scan(&f.ID, &f.SessionID, &f.Content, &f.Source, &conf, &created); err != nil {
			return nil, db.readErr("search facts", err)
		}
		f.Confidence = float32(conf)
		f.Created = time.Unix(0, created).UTC()
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, db.readErr("search facts", err)
	}
	return out, nil
}

// maxMatchTerms bounds the words of one full-text query.
const maxMatchTerms = 32

// ftsMatch turns free text into an FTS5 query: each distinct word (letters
// and digits, as the unicode61 tokenizer splits them) quoted as a string,
// joined with OR. Quoting keeps FTS5 operators and punctuation in the text
// from being read as query syntax.
func ftsMatch(text string) string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
	seen := make(map[string]bool, len(words))
	var terms []string
	for _, w := range words {
		if seen[w] {
			continue
		}
		seen[w] = true
		terms = append(terms, `"`+w+`"`)
		if len(terms) == maxMatchTerms {
			break
		}
	}
	return strings.Join(terms, " OR ")
}
