package effects

// arena hands out the many small slices and records one analysis makes
// (a command's words, its argv, its options) from
// chunks shared by the whole analysis, instead of one allocation each.
// Chunks start small (a one-line command allocates little) and double up
// to a bound. Everything handed out lives as long as the longest-lived
// piece of its chunk, which is at most the analysis and its result.
type arena struct {
	strs   []string
	words  []sword
	opts   []shOpt
	parsed []shParsed
}

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
func (a *arena) strings(n int) []string { return arenaTake(&a.strs, n, 16, 512) }

// swords returns an empty []sword with room for n.
func (a *arena) swords(n int) []sword { return arenaTake(&a.words, n, 8, 256)[:0] }

// shOpts returns an empty []shOpt with room for n.
func (a *arena) shOpts(n int) []shOpt { return arenaTake(&a.opts, n, 4, 128)[:0] }

// newParsed returns a zero shParsed.
func (a *arena) newParsed() *shParsed { return &arenaTake(&a.parsed, 1, 4, 64)[0] }

// takeCall returns a shCall to fill, one released earlier when there is
// one.
func (s *state) takeCall() *shCall {
	if n := len(s.freeCalls); n > 0 {
		c := s.freeCalls[n-1]
		s.freeCalls = s.freeCalls[:n-1]
		return c
	}
	return &shCall{}
}

// releaseCall gives back a call whose handler has returned.
func (s *state) releaseCall(c *shCall) {
	*c = shCall{}
	s.freeCalls = append(s.freeCalls, c)
}
