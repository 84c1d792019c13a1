package server

import (
	"runtime/debug"
	"sync"
	"time"
)

// quietAfter is how long a connection must have waited for input before
// its reader is moved to a fresh goroutine. Between one and two of these
// pass before the move.
const quietAfter = 2 * time.Second

// quietWatcher finds connections that have waited for input for a while
// and moves their reader to a fresh goroutine. A goroutine's stack grows
// with the deepest call it made (a decision, say) and is only shrunk by
// garbage collections, which an idle harness does not run; a fresh one
// waits for input with the smallest stack. This is what keeps an idle
// agent connection cheap. One goroutine watches every connection of a
// Server, and runs only while there are connections to watch.
type quietWatcher struct {
	mu      sync.Mutex
	conns   map[*connServer]uint64 // the wait each was in at the last look
	running bool

	// Used by the goroutine that runs only.
	moved    int       // readers moved since memory was last given back
	returned time.Time // when it was
}

func (q *quietWatcher) add(cs *connServer) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.conns == nil {
		q.conns = map[*connServer]uint64{}
	}
	q.conns[cs] = 0
	if !q.running {
		q.running = true
		go q.run()
	}
}

func (q *quietWatcher) remove(cs *connServer) {
	q.mu.Lock()
	delete(q.conns, cs)
	q.mu.Unlock()
}

// run looks every quietAfter: a connection whose reader waits in the
// same wait as at the last look has been quiet that long, and its reader
// is interrupted (see readRequest and worker).
func (q *quietWatcher) run() {
	t := time.NewTicker(quietAfter)
	defer t.Stop()
	var quiet []*connServer
	for range t.C {
		q.mu.Lock()
		if len(q.conns) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		quiet = quiet[:0]
		for cs, seen := range q.conns {
			w := cs.waits.Load()
			switch {
			case !cs.waiting.Load() || cs.fresh.Load():
				q.conns[cs] = 0
			case w == seen:
				quiet = append(quiet, cs)
				q.conns[cs] = 0 // interrupted once per wait
			default:
				q.conns[cs] = w
			}
		}
		q.mu.Unlock()
		for _, cs := range quiet {
			cs.ri.InterruptRead()
		}
		q.moved += len(quiet)
		if q.moved >= returnAfterMoves && time.Since(q.returned) >= returnEvery {
			// A wave of connections went quiet: the stacks their readers
			// grew are free now, but an idle process collects no garbage
			// and keeps freed memory for a while. Give it back now.
			q.moved, q.returned = 0, time.Now()
			debug.FreeOSMemory()
		}
	}
}

// After returnAfterMoves readers were moved, the memory they freed is
// given back to the system, at most once every returnEvery.
const (
	returnAfterMoves = 1024
	returnEvery      = time.Minute
)
