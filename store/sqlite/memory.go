package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
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
		res, err := tx.ExecContext(ctx, `INSERT INTO facts (session_id, workspace, content, source, confidence, kind, origin, created_ns)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, f.SessionID, f.Workspace, f.Content, f.Source, float64(f.Confidence),
			orDefault(f.Kind, store.KindFact), orDefault(f.Origin, store.OriginHuman), created.UnixNano())
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
	f.Kind, f.Origin = orDefault(f.Kind, store.KindFact), orDefault(f.Origin, store.OriginHuman)
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Prune implements store.Memory.
func (m *memory) Prune(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := (*DB)(m).write(ctx, "prune facts", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM facts WHERE kind != 'fact' AND created_ns < ?`, before.UnixNano())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
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
// matches when it contains any of them (after stemming). Facts are ranked
// by relevance (BM25: more and rarer matching words first) weighed by
// recency (a fact recencyHalfLife old counts half). Text with no word
// matches nothing; empty Text lists facts newest first.
func (m *memory) Search(ctx context.Context, q store.FactQuery) ([]store.Fact, error) {
	db := (*DB)(m)
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	scope, args := factScope(q)
	limit := q.QueryLimit()
	var query string
	if strings.TrimSpace(q.Text) == "" {
		query = `SELECT f.id, f.session_id, f.workspace, f.content, f.source, f.confidence, f.kind, f.origin, f.created_ns, 0
			FROM facts f WHERE 1` + scope + ` ORDER BY f.id DESC LIMIT ?`
		args = append(args, limit)
	} else {
		match := ftsMatch(q.Text)
		if match == "" {
			return nil, nil
		}
		// Candidates by relevance alone, then re-ranked with recency.
		query = `SELECT f.id, f.session_id, f.workspace, f.content, f.source, f.confidence, f.kind, f.origin, f.created_ns, facts_fts.rank
			FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid
			WHERE facts_fts MATCH ?` + scope + ` ORDER BY facts_fts.rank, f.id DESC LIMIT ?`
		args = append([]any{match}, args...)
		args = append(args, min(store.MaxQueryLimit, max(limit*4, 100)))
	}
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, db.readErr("search facts", err)
	}
	defer rows.Close()
	var (
		out   []store.Fact
		score []float64
	)
	now := q.Now
	if now.IsZero() {
		now = time.Now()
	}
	for rows.Next() {
		var (
			f       store.Fact
			conf    float64
			created int64
			rank    float64
		)
		if err := rows.Scan(&f.ID, &f.SessionID, &f.Workspace, &f.Content, &f.Source, &conf, &f.Kind, &f.Origin, &created, &rank); err != nil {
			return nil, db.readErr("search facts", err)
		}
		f.Confidence = float32(conf)
		f.Created = time.Unix(0, created).UTC()
		out = append(out, f)
		age := max(0, now.Sub(f.Created).Hours())
		score = append(score, -rank/(1+age/recencyHalfLife.Hours()))
	}
	if err := rows.Err(); err != nil {
		return nil, db.readErr("search facts", err)
	}
	if strings.TrimSpace(q.Text) != "" {
		idx := make([]int, len(out))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return score[idx[a]] > score[idx[b]] })
		ranked := make([]store.Fact, 0, min(limit, len(out)))
		for _, i := range idx[:min(limit, len(idx))] {
			ranked = append(ranked, out[i])
		}
		out = ranked
	}
	return out, nil
}

// recencyHalfLife is the age at which a fact's relevance counts half.
const recencyHalfLife = 7 * 24 * time.Hour

// factScope is the SQL condition (and its arguments) selecting the facts
// a query may see; see store.FactQuery.
func factScope(q store.FactQuery) (string, []any) {
	var b strings.Builder
	var args []any
	if !q.AnySession {
		switch {
		case q.Workspace != "":
			b.WriteString(` AND (f.session_id = ? OR (f.session_id = '' AND f.workspace IN ('', ?))`)
			args = append(args, q.SessionID, q.Workspace)
			b.WriteString(` OR (f.workspace = ? AND f.session_id != ''`)
			args = append(args, q.Workspace)
			if q.CrossSessionOrigins != nil {
				b.WriteString(` AND f.origin IN (''`)
				for _, o := range q.CrossSessionOrigins {
					b.WriteString(`, ?`)
					args = append(args, o)
				}
				b.WriteString(`)`)
			}
			b.WriteString(`))`)
		case q.SessionID != "":
			b.WriteString(` AND (f.session_id = ? OR (f.session_id = '' AND f.workspace = ''))`)
			args = append(args, q.SessionID)
		default:
			b.WriteString(` AND f.session_id = '' AND f.workspace = ''`)
		}
	}
	if len(q.Kinds) > 0 {
		b.WriteString(` AND f.kind IN (''`)
		for _, k := range q.Kinds {
			b.WriteString(`, ?`)
			args = append(args, k)
		}
		b.WriteString(`)`)
	}
	return b.String(), args
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
