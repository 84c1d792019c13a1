package perception

import (
	"slices"
	"strings"

	"github.com/ahp-go/ahp/protocol"
)

// maxFacts is the number of facts injected when more are configured.
const maxFacts = 10

// selectFacts returns every configured fact when there are at most
// maxFacts; otherwise the maxFacts that share most terms with the request,
// ties broken by confidence, then by configuration order.
func (p *Perceiver) selectFacts(terms []string) []protocol.Fact {
	if len(p.facts) <= maxFacts {
		return slices.Clone(p.facts)
	}
	type ranked struct {
		f      protocol.Fact
		shared int
	}
	rs := make([]ranked, len(p.facts))
	for i, f := range p.facts {
		content := asciiLower(f.Content)
		n := 0
		for _, t := range terms {
			if strings.Contains(content, t) {
				n++
			}
		}
		rs[i] = ranked{f, n}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		if a.shared != b.shared {
			return b.shared - a.shared
		}
		switch {
		case a.f.Confidence > b.f.Confidence:
			return -1
		case a.f.Confidence < b.f.Confidence:
			return 1
		}
		return 0
	})
	out := make([]protocol.Fact, maxFacts)
	for i := range out {
		out[i] = rs[i].f
	}
	return out
}
