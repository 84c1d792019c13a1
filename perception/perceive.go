package perception

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/ahp-go/ahp/protocol"
)

// Suggestions of an allowed answer.
const (
	noteNoMatch    = "no matching files; try a pattern target or a more specific name"
	noteStopped    = "the search stopped at its file or byte limit; narrow it with a location directory or a pattern"
	noteShortened  = "snippets were shortened to fit max_context_length"
	noteUnreadable = "the file is empty, binary or unreadable; no snippet"
)

// refineHints are the scope hints of a refine answer.
var refineHints = []string{
	"name a file, symbol or pattern to look for",
	"use a location target with a path relative to the workspace",
	"describe what you need in context.query",
}

// answerMeta is the metadata of an allowed answer.
type answerMeta struct {
	FilesRead    int      `json:"files_read"`
	StoppedEarly bool     `json:"stopped_early,omitempty"`
	SnippetLines [][2]int `json:"snippet_lines,omitempty"`
}

// Perceive answers one context_perception event. It answers refine when
// the event names nothing to search for and no facts are configured, and
// allow otherwise; it never blocks. Constraints are honoured: max_results
// (at most 50) caps the snippets, max_context_length caps their total
// characters, and include_sources false leaves out file contents entirely
// (no file is read; facts and the summary remain). An error (nil payload,
// ctx ended) is for the caller to turn into a block.
func (p *Perceiver) Perceive(ctx context.Context, pl *protocol.ContextPerceptionPayload) (protocol.ContextPerceptionDecision, error) {
	if pl == nil {
		return protocol.ContextPerceptionDecision{}, errors.New("perception: nil payload")
	}
	if err := ctx.Err(); err != nil {
		return protocol.ContextPerceptionDecision{}, fmt.Errorf("perception: %w", err)
	}
	r := p.newRequest(pl)
	if r.empty() && len(p.facts) == 0 {
		return protocol.ContextPerceptionDecision{
			Decision:   "refine",
			ScopeHints: append(append([]string(nil), r.notes...), refineHints...),
		}, nil
	}
	ic := protocol.InjectedContext{}
	notes := r.notes
	var loc *place
	ws := p.workspace(pl.Context.Workspace)
	if len(p.roots) == 0 {
		notes = append(notes, noteNoRoots)
	} else if r.locPath != "" {
		var note string
		if loc, note = p.location(r.locPath, ws); note != "" {
			notes = append(notes, note)
		}
		if note == noteNotFound {
			if base := path.Base(toSlash(r.locPath)); base != "." && base != "/" && base != ".." {
				r.terms.addName(base)
			}
		}
	}
	ic.Facts = p.selectFacts(r.terms.lowers())
	if len(p.roots) > 0 {
		ps, err := p.summary(ctx, ws, loc)
		if ctxErr(err) {
			return protocol.ContextPerceptionDecision{}, fmt.Errorf("perception: %w", err)
		}
		ic.ProjectSummary = ps
	}
	var meta answerMeta
	if r.sources && r.limit > 0 && r.maxChars != 0 && len(p.roots) > 0 {
		more, err := p.addSnippets(ctx, r, loc, &ic, &meta)
		if err != nil {
			return protocol.ContextPerceptionDecision{}, fmt.Errorf("perception: %w", err)
		}
		notes = append(notes, more...)
	}
	ic.Suggestions = notes
	md, err := json.Marshal(meta)
	if err != nil {
		return protocol.ContextPerceptionDecision{}, fmt.Errorf("perception: metadata: %w", err)
	}
	return protocol.ContextPerceptionDecision{Decision: "allow", InjectedContext: ic, Metadata: md}, nil
}

// addSnippets fills the answer's file contents and metadata within the
// request's limits and returns the suggestions they call for.
func (p *Perceiver) addSnippets(ctx context.Context, r *request, loc *place, ic *protocol.InjectedContext, meta *answerMeta) ([]string, error) {
	hits, s, searched, err := p.snippets(ctx, r, loc)
	if err != nil {
		return nil, err
	}
	var notes []string
	if loc != nil && !loc.isDir && (len(hits) == 0 || hits[0].path != loc.rel) {
		notes = append(notes, noteUnreadable)
	}
	hits, shortened := fitChars(hits, r.maxChars)
	for _, h := range hits {
		ic.FileContents = append(ic.FileContents, protocol.FileSnippet{Path: h.path, Snippet: h.ex.text, RelevanceScore: h.score})
		meta.SnippetLines = append(meta.SnippetLines, [2]int{h.ex.start, h.ex.end})
	}
	meta.FilesRead, meta.StoppedEarly = s.files, s.stopped
	if searched && len(hits) == 0 {
		notes = append(notes, noteNoMatch)
	}
	if s.stopped {
		notes = append(notes, noteStopped)
	}
	if shortened {
		notes = append(notes, noteShortened)
	}
	return notes, nil
}

// snippets gathers the head of a location file, then the best search hits.
// searched reports that a search ran.
func (p *Perceiver) snippets(ctx context.Context, r *request, loc *place) (hits []hit, s *searcher, searched bool, err error) {
	probes := r.probes()
	s = p.newSearcher(probes, r.limit)
	if len(p.protected) > 0 {
		g, ok := p.snapshot()
		if !ok {
			// The harness's files could not all be told apart: read nothing.
			return nil, s, false, nil
		}
		s.guard = g
	}
	if loc != nil && !loc.isDir {
		s.seen[loc.abs] = true
		if osr, err := os.OpenRoot(loc.r.dir); err == nil {
			data, ok := s.readHead(osr, loc.rel)
			osr.Close()
			if ok {
				if ex := head(data, headLines); ex.text != "" {
					hits = append(hits, hit{path: loc.rel, score: 1, ex: ex})
				}
			}
		}
	}
	s.limit -= len(hits)
	if len(probes) == 0 || s.limit <= 0 {
		return hits, s, false, nil
	}
	if loc != nil && loc.isDir {
		err = s.walk(ctx, loc.r, loc.abs)
	} else {
		for _, rt := range p.roots {
			if err = s.walk(ctx, rt, rt.dir); err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, s, true, err
	}
	s.trim()
	return append(hits, s.hits...), s, true, nil
}

// fitChars keeps the snippets within maxChars characters in all, cutting
// the last one kept; -1 is no limit. It reports whether anything was cut.
func fitChars(hits []hit, maxChars int) ([]hit, bool) {
	if maxChars < 0 {
		return hits, false
	}
	left := maxChars
	for i := range hits {
		n := utf8.RuneCountInString(hits[i].ex.text)
		if n <= left {
			left -= n
			continue
		}
		if left == 0 {
			return hits[:i], true
		}
		hits[i].ex.text = truncateChars(hits[i].ex.text, left)
		hits[i].ex.end = hits[i].ex.start + strings.Count(hits[i].ex.text, "\n")
		return hits[:i+1], true
	}
	return hits, false
}

// ctxErr reports an error caused by a context ending.
func ctxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// toSlash turns backslashes into slashes so that path.Base finds the
// base name of a path written for either convention.
func toSlash(p string) string {
	return strings.ReplaceAll(p, "\\", "/")
}
