package perception

import (
	"math"
	"strings"

	"github.com/ahp-go/ahp/protocol"
)

// request is what one event asks for.
type request struct {
	terms    termSet
	pattern  probe    // from a pattern target, or nil
	locPath  string   // from a location target, or ""
	notes    []string // suggestions found while reading the request
	limit    int      // snippets wanted
	maxChars int      // characters of all snippets; -1 for no limit
	sources  bool     // include_sources
}

// newRequest reads the terms, pattern, location and constraints of an event.
func (p *Perceiver) newRequest(pl *protocol.ContextPerceptionPayload) *request {
	r := &request{limit: p.maxSnippets, maxChars: -1, sources: true}
	if c := pl.Constraints; c != nil {
		if c.MaxResults != nil {
			r.limit = int(min(*c.MaxResults, maxResultsCap))
		}
		if c.MaxContextLength != nil {
			r.maxChars = int(min(*c.MaxContextLength, math.MaxInt32))
		}
		r.sources = c.IncludeSources
	}
	r.terms.addTarget(pl.Target)
	if pt := pl.Target.Pattern; pt != nil {
		var note string
		if r.pattern, note = patternProbe(pt); note != "" {
			r.notes = append(r.notes, note)
		}
	}
	if lt := pl.Target.Location; lt != nil {
		r.locPath = strings.TrimSpace(lt.Path)
	}
	r.terms.addWords(pl.Context.Query, weightWord)
	r.terms.addWords(pl.Context.CurrentTask, weightWord)
	return r
}

// empty reports a request that gives nothing to search for.
func (r *request) empty() bool {
	return len(r.terms.list) == 0 && r.pattern == nil && r.locPath == ""
}

// probes returns what files are searched for.
func (r *request) probes() []probe {
	out := make([]probe, 0, len(r.terms.list)+1)
	if r.pattern != nil {
		out = append(out, r.pattern)
	}
	for _, t := range r.terms.list {
		out = append(out, termProbe{t})
	}
	return out
}
