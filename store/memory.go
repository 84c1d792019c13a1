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
// to one session, to one project (workspace), or global.
type Fact struct {
	ID        int64 // assigned by Add
	SessionID string
	// Workspace is the project the fact belongs to ("" for every project).
	Workspace  string
	Content    string
	Source     string
	Confidence float32 // in [0,1]
	// Kind is what the fact records (Kind*); KindFact when "".
	Kind string
	// Origin is who wrote it (Origin*); OriginHuman when "".
	Origin  string
	Created time.Time
}

// The kinds of fact (Fact.Kind): typed by a person, or kept by the harness
// from what it saw.
const (
	KindFact     = "fact"     // added by a person (ahp memory add)
	KindSuccess  = "success"  // a success event's action summary
	KindError    = "error"    // an error event
	KindApproval = "approval" // a human's approval decision and reason
	KindBlock    = "block"    // a policy block and its reason
	KindPrompt   = "prompt"   // the prompt of an intent_detection event
)

// The origins of a fact (Fact.Origin): whose words it holds. Text an agent
// wrote is a path for prompt injection when recalled in another session.
const (
	OriginHuman  = "human"  // a person: ahp memory add, an approver's reason
	OriginPolicy = "policy" // the harness's policy: a block and its reason
	OriginAgent  = "agent"  // an agent: success summaries, errors, prompts
)

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
	// Workspace, when set with SessionID, also selects the facts of that
	// project: its project-wide facts and those other sessions of it kept,
	// the latter only from CrossSessionOrigins when that is not nil. Facts
	// of another project are never selected (unless AnySession).
	Workspace           string
	CrossSessionOrigins []string
	// Kinds, when not empty, selects only facts of these kinds.
	Kinds []string
	// Now is the time recency is measured from (time.Now when zero).
	Now   time.Time
	Limit int // 0 or more than MaxQueryLimit means MaxQueryLimit
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
	// Prune deletes the facts the harness kept (every kind but KindFact)
	// created before the given time, and returns how many it deleted.
	Prune(ctx context.Context, before time.Time) (int64, error)
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
	if len(f.Content) > MaxFactBytes || len(f.Source) > MaxFactBytes || len(f.SessionID) > MaxAuditFieldBytes ||
		len(f.Workspace) > MaxAuditFieldBytes {
		return fmt.Errorf("%w: fact: content, source, session or workspace longer than its limit", ErrInvalid)
	}
	switch f.Kind {
	case "", KindFact, KindSuccess, KindError, KindApproval, KindBlock, KindPrompt:
	default:
		return fmt.Errorf("%w: fact: unknown kind %.40q", ErrInvalid, f.Kind)
	}
	switch f.Origin {
	case "", OriginHuman, OriginPolicy, OriginAgent:
	default:
		return fmt.Errorf("%w: fact: unknown origin %.40q", ErrInvalid, f.Origin)
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
	if len(q.Kinds) > 16 || len(q.CrossSessionOrigins) > 16 {
		return fmt.Errorf("%w: fact query: too many kinds or origins", ErrInvalid)
	}
	return nil
}

// QueryLimit returns the effective Limit of q.
func (q FactQuery) QueryLimit() int { return clampLimit(q.Limit) }
