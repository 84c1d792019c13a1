package effects

import "sync"

// arena hands out the many small slices and records one analysis of a
// long script makes (a command's words, its argv, its options) from chunks
// shared by the whole analysis, instead of one allocation each, and keeps
// the shell calls whose handlers have returned for reuse. Chunks double up
// to a bound.
//
// What may end up in the result (string lists: strs) lives as long as the
// result. The rest (words, options, parsed command lines, streams, fd
// tables, calls) is the reader's own: no effect can hold one (an Effect has
// only strings, string lists and a Detail of strings), so once the
// analysis returns, those chunks are cleared and kept in arenaPool for the
// next long script (release).
//
// A state has an arena (state.mem) only once it reads a script of
// arenaMinScript bytes or more; before, and on a nil arena, every request
// is its own exact allocation: a one-line command would waste the ends of
// its chunks.
type arena struct {
	strs   []string
	words  chunks[sword]
	opts   chunks[shOpt]
	parsed chunks[shParsed]
	// streams and fds are what flows between commands and the file
	// descriptors of statements with redirections.
	streams chunks[shStream]
	fds     chunks[fdEntry]
	// freeCalls are shell calls whose handlers have returned (takeCall).
	freeCalls []*shCall
	// resolved are the last paths resolved (state.resolve).
	resolved     [2]resolvedPath
	resolvedNext int
}

// arenaMinScript is the length of script from which the arena hands out
// chunks.
const arenaMinScript = 512

// arenaPool keeps the reader's own chunks of finished analyses.
var arenaPool = sync.Pool{New: func() any { return &arena{} }}

// Bounds on what a pooled arena keeps: a very long script's chunks are
// left to the collector rather than held for the next one.
const arenaKeepChunks = 16

// chunks is a list of chunks of T handed out in order; reset makes them
// all available again, zeroed.
type chunks[T any] struct {
	list [][]T // list[cur] is being handed out; list[cur+1:] are unused
	cur  int
}

// take returns n zeroed elements, with capacity n (an append past it
// reallocates, never writing into a neighbour), starting the next chunk
// when the current one is short.
func (c *chunks[T]) take(n, first, limit int) []T {
	if n > limit/4 {
		return make([]T, n)
	}
	for c.cur < len(c.list) {
		ch := c.list[c.cur]
		if l := len(ch); cap(ch)-l >= n {
			c.list[c.cur] = ch[:l+n]
			return ch[l : l+n : l+n]
		}
		if c.cur+1 == len(c.list) {
			break
		}
		c.cur++
	}
	size := first
	if k := len(c.list); k > 0 {
		size = min(max(2*cap(c.list[k-1]), first), limit)
	}
	ch := make([]T, n, max(size, n))
	c.list = append(c.list, ch)
	c.cur = len(c.list) - 1
	return ch[:n:n]
}

// reset zeroes what was handed out and makes every chunk available again,
// keeping at most keep chunks.
func (c *chunks[T]) reset(keep int) {
	for i, ch := range c.list {
		clear(ch)
		c.list[i] = ch[:0]
	}
	if len(c.list) > keep {
		clear(c.list[keep:])
		c.list = c.list[:keep]
	}
	c.cur = 0
}

// newArena returns an arena for a long script: one kept from an earlier
// analysis when there is one.
func newArena() *arena { return arenaPool.Get().(*arena) }

// release gives the arena's own chunks back to arenaPool, zeroed. The
// state must not use the arena afterwards.
func (a *arena) release() {
	a.strs = nil
	a.resolved, a.resolvedNext = [2]resolvedPath{}, 0
	a.words.reset(arenaKeepChunks)
	a.opts.reset(arenaKeepChunks)
	a.parsed.reset(arenaKeepChunks)
	a.streams.reset(arenaKeepChunks)
	a.fds.reset(arenaKeepChunks)
	if len(a.freeCalls) > 64 {
		clear(a.freeCalls[64:])
		a.freeCalls = a.freeCalls[:64]
	}
	for _, c := range a.freeCalls {
		*c = shCall{}
	}
	arenaPool.Put(a)
}

// arenaTake returns n zeroed elements from *chunk, with capacity n (an
// append past it reallocates, never writing into a neighbour), starting a
// new chunk when the current one is short. (For what goes into the result:
// a chunk is never reused.)
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
	return a.words.take(n, 8, 256)[:0]
}

// shOpts returns an empty []shOpt with room for n.
func (a *arena) shOpts(n int) []shOpt {
	if a == nil {
		return make([]shOpt, 0, n)
	}
	return a.opts.take(n, 4, 128)[:0]
}

// newParsed returns a zero shParsed.
func (a *arena) newParsed() *shParsed {
	if a == nil {
		return &shParsed{}
	}
	return &a.parsed.take(1, 4, 64)[0]
}

// stream returns a pointer to a copy of st.
func (a *arena) stream(st shStream) *shStream {
	var p *shStream
	if a == nil {
		p = new(shStream) // (not &st: st would escape on every path)
	} else {
		p = &a.streams.take(1, 16, 256)[0]
	}
	*p = st
	return p
}

// fdTable returns a table of n entries with room for more.
func (a *arena) fdTable(n, room int) fdTable {
	if a == nil {
		return make(fdTable, n, room)
	}
	return fdTable(a.fds.take(room, 8, 256)[:n])
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

// releaseCall gives back a call whose handler has returned. (It is
// zeroed when the arena is released, not here: the next takeCall
// overwrites it whole.)
func (s *state) releaseCall(c *shCall) {
	if a := s.mem; a != nil {
		a.freeCalls = append(a.freeCalls, c)
	}
}
