package effects

// arena hands out the many small slices and records one analysis of a
// long script makes (a command's words, its argv, its options) from chunks
// shared by the whole analysis, instead of one allocation each, and keeps
// the shell calls whose handlers have returned for reuse. Chunks double up
// to a bound. Everything handed out lives as long as the longest-lived
// piece of its chunk, which is at most the analysis and its result.
//
// A state has an arena (state.mem) only once it reads a script of
// arenaMinScript bytes or more; before, and on a nil arena, every request
// is its own exact allocation: a one-line command would waste the ends of
// its chunks.
type arena struct {
	strs   []string
	words  []sword
	opts   []shOpt
	parsed []shParsed
	// freeCalls are shell calls whose handlers have returned (takeCall).
	freeCalls []*shCall
}

// arenaMinScript is the length of script from which the arena hands out
// chunks.
const arenaMinScript = 512

// arenaTake returns n zeroed elements from *chunk, with capacity n (an
// append past it reallocates, never writing into a neighbour), starting a
// new chunk when the current one is short.
func arenaTake[T any](chunk *[]T, n, first, limit int) []T {
	if n > limit/4 {
		return make([]T, n)
	}
	c := *chunk
	if cap(c)-len(c) < n {
		size := min(max(2*cap(c), first), limit)
		c = make([]T, 0, max(size, n))
	}
	l := len(c)
	*chunk = c[:l+n]
	return c[l : l+n : l+n]
}

// strings returns a []string of length n.
func (a *arena) strings(n int) []string {
	if a == nil {
		return make([]string, n)
	}
	return arenaTake(&a.strs, n, 16, 512)
}

// swords returns an empty []sword with room for n.
func (a *arena) swords(n int) []sword {
	if a == nil {
		return make([]sword, 0, n)
	}
	return arenaTake(&a.words, n, 8, 256)[:0]
}

// shOpts returns an empty []shOpt with room for n.
func (a *arena) shOpts(n int) []shOpt {
	if a == nil {
		return make([]shOpt, 0, n)
	}
	return arenaTake(&a.opts, n, 4, 128)[:0]
}

// newParsed returns a zero shParsed.
func (a *arena) newParsed() *shParsed {
	if a == nil {
		return &shParsed{}
	}
	return &arenaTake(&a.parsed, 1, 4, 64)[0]
}

// takeCall returns a shCall to fill, one released earlier when there is
// one.
func (s *state) takeCall() *shCall {
	if a := s.mem; a != nil {
		if n := len(a.freeCalls); n > 0 {
			c := a.freeCalls[n-1]
			a.freeCalls = a.freeCalls[:n-1]
			return c
		}
	}
	return &shCall{}
}

// releaseCall gives back a call whose handler has returned.
func (s *state) releaseCall(c *shCall) {
	if a := s.mem; a != nil {
		*c = shCall{}
		a.freeCalls = append(a.freeCalls, c)
	}
}
