package server

import (
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
	}
}
