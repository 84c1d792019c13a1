package policy

import "regexp"

// The needs of a set's rules (kindfilter.go) name programs, argument words
// and program patterns. needIndex numbers them, so that one evaluation
// looks each effect's program and words up once (effectFacts) and each
// rule's need is then a few bit tests, not a map lookup per argument word
// per rule.

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

func (b bitset) intersects(o bitset) bool {
	n := min(len(b), len(o))
	for i := 0; i < n; i++ {
		if b[i]&o[i] != 0 {
			return true
		}
	}
	return false
}

// needIndex numbers the names, words and patterns of a set's needs.
type needIndex struct {
	ids   map[string]int   // program names and argument words
	res   []*regexp.Regexp // program patterns
	reIDs map[string]int   // pattern text -> index in res
	done  map[*effectNeed]bool
}

// buildNeeds numbers the needs of every rule of the set.
func (s *Set) buildNeeds() {
	ix := &needIndex{ids: map[string]int{}, reIDs: map[string]int{}, done: map[*effectNeed]bool{}}
	for _, r := range s.rules {
		for _, t := range r.need {
			for _, p := range t.progs {
				ix.add(p)
			}
		}
	}
	ix.done = nil
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
// evaluation: its program's number (-1 when no need names it), the
// numbers of its argument words, and the patterns its program was matched
// against so far (reDone) and matched (reHit), the first 64 of them.
type effectFacts struct {
	prog          int
	words         bitset
	reDone, reHit uint64
}

// readFacts fills c.facts for the action's effects, once.
func (c *evalCtx) readFacts() {
	if c.factsRead {
		return
	}
	c.factsRead = true
	c.kindMask()
	es, ix := c.effects(), c.set.needs
	width := (len(ix.ids) + 63) / 64
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
		f := &c.facts[i]
		*f = effectFacts{prog: -1, words: bitset(c.wordBuf[i*width : (i+1)*width : (i+1)*width])}
		if id, ok := ix.ids[es[i].Program]; ok {
			f.prog = id
		}
		for _, a := range es[i].Argv {
			if id, ok := ix.ids[a]; ok {
				f.words[id/64] |= 1 << (uint(id) % 64)
			}
		}
	}
}

// meetsAny reports whether an effect of the action meets need.
func (c *evalCtx) meetsAny(need condNeed) bool {
	c.readFacts()
	for i := range c.facts {
		for _, t := range need {
			if t.kinds != 0 && t.kinds&c.bits[i] == 0 {
				continue
			}
			ok := true
			for _, p := range t.progs {
				if !c.metBy(p, i) {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
	}
	return false
}

// metBy reports whether effect i passes p.
func (c *evalCtx) metBy(p *effectNeed, i int) bool {
	f := &c.facts[i]
	if p.nameBits.has(f.prog) {
		return true
	}
	for _, id := range p.reIDs {
		if id >= 64 {
			if c.set.needs.res[id].MatchString(c.acts[i].Program) {
				return true
			}
			continue
		}
		bit := uint64(1) << uint(id)
		if f.reDone&bit == 0 {
			f.reDone |= bit
			if c.set.needs.res[id].MatchString(c.acts[i].Program) {
				f.reHit |= bit
			}
		}
		if f.reHit&bit != 0 {
			return true
		}
	}
	return p.wordBits.intersects(f.words)
}
