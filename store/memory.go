package store

import (
	"context"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/ahp-go/ahp/protocol"
)

// Fact is a piece of knowledge the harness keeps for memory_recall, scoped
// to one session or global.
type Fact struct {
	ID         int64 // assigned by Add
	SessionID  string
	Content    string
	Source     string
	Confidence float32 // in [0,1]
	Created    time.Time
}

// Global reports whether f applies to every session.
func (f Fact) Global() bool { return f.SessionID == "" }

// Wire returns f as the protocol's Fact, for injected_facts.
func (f Fact) Wire() protocol.Fact {
	return protocol.Fact{Content: f.Content, Source: f.Source, Confidence: f.Confidence}
}

// FactQuery selects facts.
type FactQuery struct {
	// Text is searched in the facts' content (full-text, ranked by
	// relevance). Empty Text lists facts newest first.
	Text string
	// SessionID selects that session's facts plus the global ones; empty
	// selects the global facts only, unless AnySession is set.
	SessionID  string
	AnySession bool
	Limit      int // 0 or more than MaxQueryLimit means MaxQueryLimit
}

// Memory keeps facts with full-text search.
type Memory interface {
	// Add stores f, setting f.ID and f.Created (when zero). It returns
	// when f is durable.
	Add(ctx context.Context, f *Fact) error
	// Search returns the facts matching q, the most relevant first.
	Search(ctx context.Context, q FactQuery) ([]Fact, error)
	// Delete removes one fact or returns ErrNotFound.
	Delete(ctx context.Context, id int64) error
}

// Bounds on a fact; larger ones are rejected with ErrInvalid.
const (
	MaxFactBytes      = 64 << 10
	MaxFactQueryBytes = 4 << 10
)

// Validate checks f before Add. A zero Confidence is kept as zero.
func (f *Fact) Validate() error {
	if f.Content == "" {
		return fmt.Errorf("%w: fact: empty content", ErrInvalid)
	}
	if len(f.Content) > MaxFactBytes || len(f.Source) > MaxFactBytes || len(f.SessionID) > MaxAuditFieldBytes {
		return fmt.Errorf("%w: fact: content, source or session longer than its limit", ErrInvalid)
	}
	if !utf8.ValidString(f.Content) {
		return fmt.Errorf("%w: fact: content is not UTF-8", ErrInvalid)
	}
	c := float64(f.Confidence)
	if math.IsNaN(c) || c < 0 || c > 1 {
		return fmt.Errorf("%w: fact: confidence %v outside [0,1]", ErrInvalid, f.Confidence)
	}
	return checkTime("fact: created", f.Created)
}

// Validate checks q before Search.
func (q FactQuery) Validate() error {
	if len(q.Text) > MaxFactQueryBytes {
		return fmt.Errorf("%w: fact query: %d bytes, limit %d", ErrInvalid, len(q.Text), MaxFactQueryBytes)
	}
	return nil
}

// QueryLimit returns the effective Limit of q.
func (q FactQuery) QueryLimit() int { return clampLimit(q.Limit) }
