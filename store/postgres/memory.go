package postgres

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"

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
	if err := (*DB)(m).checkOpen(); err != nil {
		return err
	}
	created := f.Created
	if created.IsZero() {
		created = time.Now()
	}
	kind, origin := orDefault(f.Kind, store.KindFact), orDefault(f.Origin, store.OriginHuman)
	var id int64
	err := (*DB)(m).write(ctx, "add fact", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `INSERT INTO facts (session_id, workspace, content, source, confidence, kind, origin, created_ns)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`, f.SessionID, f.Workspace, f.Content, f.Source,
			f.Confidence, kind, origin, created.UnixNano()).Scan(&id)
	})
	if err != nil {
		return err
	}
	f.ID, f.Created, f.Kind, f.Origin = id, created, kind, origin
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
	err := (*DB)(m).write(ctx, "prune facts", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM facts WHERE kind <> 'fact' AND created_ns < $1`, before.UnixNano())
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// Delete implements store.Memory.
func (m *memory) Delete(ctx context.Context, id int64) error {
	return (*DB)(m).write(ctx, "delete fact", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM facts WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("fact %d: %w", id, store.ErrNotFound)
		}
		return nil
	})
}

// recencyHalfLife is the age at which a fact's relevance counts half.
const recencyHalfLife = 7 * 24 * time.Hour

// maxMatchTerms bounds the words of one full-text query.
const maxMatchTerms = 32

// Search implements store.Memory with PostgreSQL's full-text search. Each
// word of Text is looked up both stemmed (English) and as written, and a
// fact matches when it holds any of them; facts are ranked by ts_rank
// weighed by recency (a fact recencyHalfLife old counts half). Text with no
// word matches nothing; empty Text lists facts newest first.
func (m *memory) Search(ctx context.Context, q store.FactQuery) ([]store.Fact, error) {
	db := (*DB)(m)
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	limit := q.QueryLimit()
	var c conds
	var query string
	text := strings.TrimSpace(q.Text) != ""
	if !text {
		scope := factScope(&c, q)
		query = `SELECT f.id, f.session_id, f.workspace, f.content, f.source, f.confidence, f.kind, f.origin, f.created_ns, 0::real
			FROM facts f WHERE true` + scope + ` ORDER BY f.id DESC LIMIT ` + c.next(limit)
	} else {
		words := matchWords(q.Text)
		if len(words) == 0 {
			return nil, nil
		}
		// The query: for every word, its English stem OR the word as is.
		tsq := c.next(words)
		scope := factScope(&c, q)
		query = `SELECT f.id, f.session_id, f.workspace, f.content, f.source, f.confidence, f.kind, f.origin, f.created_ns,
				ts_rank(f.tsv, q.q) AS rank
			FROM facts f, (SELECT ` + orQuery(tsq, len(words)) + ` AS q) q
			WHERE f.tsv @@ q.q` + scope + ` ORDER BY rank DESC, f.id DESC LIMIT ` + c.next(min(store.MaxQueryLimit, max(limit*4, 100)))
	}
	rows, err := db.pool.Query(ctx, query, c.args...)
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
			created int64
			rank    float32
		)
		if err := rows.Scan(&f.ID, &f.SessionID, &f.Workspace, &f.Content, &f.Source, &f.Confidence, &f.Kind, &f.Origin, &created, &rank); err != nil {
			return nil, db.readErr("search facts", err)
		}
		f.Created = time.Unix(0, created).UTC()
		out = append(out, f)
		age := max(0, now.Sub(f.Created).Hours())
		score = append(score, float64(rank)/(1+age/recencyHalfLife.Hours()))
	}
	if err := rows.Err(); err != nil {
		return nil, db.readErr("search facts", err)
	}
	if text {
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

// orQuery is the SQL of a tsquery matching any of n words held in the text
// array parameter arr: each word stemmed (English) or as written.
func orQuery(arr string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(" || ")
		}
		fmt.Fprintf(&b, "plainto_tsquery('english', (%s::text[])[%d]) || plainto_tsquery('simple', (%s::text[])[%d])", arr, i, arr, i)
	}
	return b.String()
}

// matchWords splits free text into at most maxMatchTerms distinct words
// (letters, digits and marks); punctuation and query syntax are dropped.
func matchWords(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
	seen := make(map[string]bool, len(words))
	var out []string
	for _, w := range words {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
			if len(out) == maxMatchTerms {
				break
			}
		}
	}
	return out
}

// factScope appends the SQL condition selecting the facts q may see.
func factScope(c *conds, q store.FactQuery) string {
	var b strings.Builder
	if !q.AnySession {
		switch {
		case q.Workspace != "":
			fmt.Fprintf(&b, ` AND (f.session_id = %s OR (f.session_id = '' AND f.workspace IN ('', %s))`, c.next(q.SessionID), c.next(q.Workspace))
			fmt.Fprintf(&b, ` OR (f.workspace = %s AND f.session_id <> ''`, c.next(q.Workspace))
			if q.CrossSessionOrigins != nil {
				fmt.Fprintf(&b, ` AND f.origin = ANY(%s::text[])`, c.next(q.CrossSessionOrigins))
			}
			b.WriteString(`))`)
		case q.SessionID != "":
			fmt.Fprintf(&b, ` AND (f.session_id = %s OR (f.session_id = '' AND f.workspace = ''))`, c.next(q.SessionID))
		default:
			b.WriteString(` AND f.session_id = '' AND f.workspace = ''`)
		}
	}
	if len(q.Kinds) > 0 {
		fmt.Fprintf(&b, ` AND f.kind = ANY(%s::text[])`, c.next(q.Kinds))
	}
	return b.String()
}
