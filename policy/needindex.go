package policy

import (
	"math/bits"
	"regexp"
	"slices"
)

// The needs of a set's rules (kindfilter.go) name programs, argument words
// and program patterns. needIndex numbers them, and numbers every distinct
// effectNeed too: one evaluation then reads, once per effect, the set of
// effectNeeds the effect meets (its program's name, its argument words and
// the patterns its program matches, each looked up once), and a rule's
// need is a few word operations per term on that set (is every effectNeed
// of the term in it?), not a walk through the need's own structures.

// bitset is a set of small integers.
type bitset []uint64

func (b bitset) has(i int) bool {
	return i >= 0 && i/64 < len(b) && b[i/64]&(1<<(uint(i)%64)) != 0
}

// with returns b with i added (b may be reallocated).
func (b bitset) with(i int) bitset {
	for len(b) <= i/64 {
		b = append(b, 0)
	}
	b[i/64] |= 1 << (uint(i) % 64)
	return b
}

// within reports whether every element of b is in o.
func (b bitset) within(o bitset) bool {
	for i, w := range b {
		if i >= len(o) {
			if w != 0 {
				return false
			}
			continue
		}
		if w&^o[i] != 0 {
			return false
		}
	}
	return true
}

// needIndex numbers the names, words and patterns of a set's needs, and
// the needs themselves.
type needIndex struct {
	ids   map[string]int   // program names and argument words
	res   []*regexp.Regexp // program patterns
	reIDs map[string]int   // pattern text -> index in res
	done  map[*effectNeed]bool
	// needs are the distinct effectNeeds, numbered (effectNeed.idx);
	// byName[id] lists those a program named id meets, byWord[id] those
	// an argument word id meets, byRe[r] those a program matching res[r]
	// meets; width is the words of a set of needs.
	needs          []*effectNeed
	byName, byWord [][]int32
	byRe           [][]int32
	width          int
	// paths are the distinct pathNeeds, numbered (pathNeed.idx).
	paths int
}

// buildNeeds numbers the needs of every rule of the set and gives each
// term of a rule's need the set of its effectNeeds.
func (s *Set) buildNeeds() {
	ix := &needIndex{ids: map[string]int{}, reIDs: map[string]int{}, done: map[*effectNeed]bool{}}
	// Field tests are numbered by what they test, so that rules testing
	// the same field the same way (credential_paths is read by several)
	// share one test per effect.
	paths := map[string]int{}
	addTerms := func(need condNeed) {
		for _, t := range need {
			for _, p := range t.progs {
				ix.add(p)
			}
			for _, p := range t.paths {
				k := p.key()
				idx, ok := paths[k]
				if !ok {
					idx = ix.paths
					paths[k] = idx
					ix.paths++
				}
				p.idx = idx
			}
		}
	}
	for _, r := range s.rules {
		addTerms(r.need)
		for _, nd := range r.narrow.needs() {
			addTerms(*nd)
		}
	}
	ix.done = nil
	ix.width = (len(ix.needs) + 63) / 64
	ix.byName = make([][]int32, len(ix.ids))
	ix.byWord = make([][]int32, len(ix.ids))
	ix.byRe = make([][]int32, len(ix.res))
	for n, p := range ix.needs {
		for id := range len(ix.ids) {
			if p.nameBits.has(id) {
				ix.byName[id] = append(ix.byName[id], int32(n))
			}
			if p.wordBits.has(id) {
				ix.byWord[id] = append(ix.byWord[id], int32(n))
			}
		}
		for _, r := range p.reIDs {
			ix.byRe[r] = append(ix.byRe[r], int32(n))
		}
	}
	setMasks := func(need condNeed) {
		for k := range need {
			t := &need[k]
			t.mask = nil
			for _, p := range t.progs {
				t.mask = t.mask.with(p.idx)
			}
		}
	}
	for _, r := range s.rules {
		setMasks(r.need)
		for _, nd := range r.narrow.needs() {
			setMasks(*nd)
		}
	}
	s.needs = ix
}

func (ix *needIndex) id(s string) int {
	id, ok := ix.ids[s]
	if !ok {
		id = len(ix.ids)
		ix.ids[s] = id
	}
	return id
}

func (ix *needIndex) add(p *effectNeed) {
	if ix.done[p] {
		return
	}
	ix.done[p] = true
	p.idx = len(ix.needs)
	ix.needs = append(ix.needs, p)
	p.nameBits, p.wordBits, p.reIDs = nil, nil, nil
	for n := range p.names {
		p.nameBits = p.nameBits.with(ix.id(n))
	}
	for w := range p.words {
		p.wordBits = p.wordBits.with(ix.id(w))
	}
	for _, re := range p.res {
		id, ok := ix.reIDs[re.String()]
		if !ok {
			id = len(ix.res)
			ix.res = append(ix.res, re)
			ix.reIDs[re.String()] = id
		}
		p.reIDs = append(p.reIDs, id)
	}
}

// effectFacts is what the needs read of one effect, found once per
// evaluation: the effectNeeds it meets, numbered by the set's needIndex.
type effectFacts struct {
	met bitset
}

// readFacts fills c.facts for the action's effects, once.
func (c *evalCtx) readFacts() {
	if c.factsRead {
		return
	}
	c.factsRead = true
	c.kindMask()
	es, ix := c.effects(), c.set.needs
	width := ix.width
	if cap(c.facts) < len(es) {
		c.facts = make([]effectFacts, len(es))
	}
	c.facts = c.facts[:len(es)]
	if need := len(es) * width; cap(c.wordBuf) < need {
		c.wordBuf = make([]uint64, need)
	} else {
		c.wordBuf = c.wordBuf[:need]
		clear(c.wordBuf)
	}
	for i := range es {
		met := bitset(c.wordBuf[i*width : (i+1)*width : (i+1)*width])
		mark := func(ns []int32) {
			for _, n := range ns {
				met[n/64] |= 1 << (uint(n) % 64)
			}
		}
		if id, ok := ix.ids[es[i].Program]; ok {
			mark(ix.byName[id])
		}
		for _, a := range es[i].Argv {
			if id, ok := ix.ids[a]; ok {
				mark(ix.byWord[id])
			}
		}
		for r, re := range ix.res {
			if len(ix.byRe[r]) > 0 && re.MatchString(es[i].Program) {
				mark(ix.byRe[r])
			}
		}
		c.facts[i] = effectFacts{met: met}
	}
	c.indexNeeds(len(ix.needs))
}

// indexNeeds lists, for each effectNeed, the effects that meet it (in
// order), so that a need naming programs looks at their effects only:
// those of effectNeed n are byNeed[needStart[n]:needStart[n+1]].
func (c *evalCtx) indexNeeds(n int) {
	if cap(c.needStart) < n+1 {
		c.needStart = make([]int32, n+1)
	}
	start := c.needStart[:n+1]
	clear(start)
	total := 0
	for i := range c.facts {
		for w, word := range c.facts[i].met {
			for ; word != 0; word &= word - 1 {
				start[w*64+bits.TrailingZeros64(word)+1]++
				total++
			}
		}
	}
	for k := 1; k <= n; k++ {
		start[k] += start[k-1]
	}
	if cap(c.byNeed) < total {
		c.byNeed = make([]int32, total)
	}
	c.byNeed = c.byNeed[:total]
	next := append(c.needNext[:0], start[:n]...)
	for i := range c.facts {
		for w, word := range c.facts[i].met {
			for ; word != 0; word &= word - 1 {
				k := w*64 + bits.TrailingZeros64(word)
				c.byNeed[next[k]] = int32(i)
				next[k]++
			}
		}
	}
	c.needStart, c.needNext = start, next
}

// fewEffects is the number of effects up to which candidates leaves the
// index alone: walking them all costs less than finding them.
var fewEffects = 16

// candidates returns the numbers of the effects that may meet need, in
// order: for each term, the effects that meet the rarest of its
// effectNeeds, else those of its kinds; all is true when a term takes any
// effect. The slice is only good until the next call.
func (c *evalCtx) candidates(need condNeed) (idx []int32, all bool) {
	if len(c.facts) <= fewEffects {
		return nil, true // fewer than the index would save
	}
	var out []int32
	parts := 0
	for k := range need {
		t := &need[k]
		var part []int32
		switch {
		case len(t.progs) > 0:
			for j, p := range t.progs {
				l := c.byNeed[c.needStart[p.idx]:c.needStart[p.idx+1]]
				if j == 0 || len(l) < len(part) {
					part = l
				}
			}
		case t.kinds != 0:
			part = c.ofKinds(t.kinds)
		default:
			return nil, true
		}
		if len(part) == 0 {
			continue
		}
		parts++
		if parts == 1 && k == len(need)-1 {
			return part, false // one term: its list as it is
		}
		out = append(c.candScratch[:len(out)], part...)
		c.candScratch = out
	}
	if parts > 1 {
		slices.Sort(out)
		out = slices.Compact(out)
	}
	return out, false
}

// meetsAny reports whether an effect of the action meets need: an effect
// of one of a term's kinds that meets every effectNeed of the term.
func (c *evalCtx) meetsAny(need condNeed) bool {
	c.readFacts()
	if idx, all := c.candidates(need); !all {
		for _, i := range idx {
			if c.meets(int(i), need) {
				return true
			}
		}
		return false
	}
	for i := range c.facts {
		if c.meets(i, need) {
			return true
		}
	}
	return false
}

// meets reports whether effect i meets need (readFacts has run): it is of
// one of a term's kinds and meets every effectNeed of that term.
func (c *evalCtx) meets(i int, need condNeed) bool {
	met, bit := c.facts[i].met, c.bits[i]
next:
	for k := range need {
		t := &need[k]
		if t.kinds != 0 && t.kinds&bit == 0 {
			continue
		}
		if !t.mask.within(met) {
			continue
		}
		for _, p := range t.paths {
			if !c.pathMet(p, i) {
				continue next
			}
		}
		return true
	}
	return false
}

// homeForNeeds is the evaluation's home for a need that reads it (looked
// up once per evaluation), "" for any other.
func (c *evalCtx) homeForNeeds(p *pathNeed) string {
	if !p.home {
		return ""
	}
	h, _ := c.field(slotHome).Value().(string)
	return h
}

// pathMet reports whether effect i meets p, testing it once per
// evaluation (pathMemo: 0 not yet tested, 1 no, 2 yes).
func (c *evalCtx) pathMet(p *pathNeed, i int) bool {
	n := len(c.facts)
	if len(c.pathMemo) == 0 {
		size := c.set.needs.paths * n
		if cap(c.pathMemo) < size {
			c.pathMemo = make([]uint8, size)
		}
		c.pathMemo = c.pathMemo[:size]
		clear(c.pathMemo)
	}
	slot := &c.pathMemo[p.idx*n+i]
	if *slot == 0 {
		*slot = 1
		if p.met(&c.effects()[i], c.homeForNeeds(p)) {
			*slot = 2
		}
	}
	return *slot == 2
}
