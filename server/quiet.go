package server

import (
	"runtime/debug"
	"sync"
	"time"
)

// quietAfter is how long a connection must have waited for input before
// its reader is moved to a fresh goroutine. Between one and two of these
// pass before the move. (A variable for tests.)
var quietAfter = 2 * time.Second

// quietWatcher finds connections that have waited for input for a while
// and moves their reader to a fresh goroutine (on transports that can
// interrupt a read: Unix sockets, WebSocket). A goroutine's stack grows
// with the deepest call it made (a decision, say) and is only shrunk by
// garbage collections, which an idle harness does not run; a fresh one
// waits for input with the smallest stack. This is what keeps an idle
// agent connection cheap. One goroutine watches every connection of a
// Server, and runs only while there are connections to watch.
type quietWatcher struct {
	every   time.Duration // quietAfter when the Server was made
	mu      sync.Mutex
	conns   map[*connServer]quietState
	running bool

	// Used by the goroutine that runs only.
	moved    int       // connections gone quiet since memory was last given back
	returned time.Time // when it was
}

// quietState is what the watcher saw of a connection at its last look.
type quietState struct {
	wait    uint64 // the wait its reader was in
	counted bool   // that wait was found quiet already
}

func (q *quietWatcher) add(cs *connServer) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.conns == nil {
		q.conns = map[*connServer]quietState{}
	}
	q.conns[cs] = quietState{}
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
// same wait as at the last look has been quiet that long. Its reader is
// interrupted when the transport allows it (see readRequest and worker),
// once per wait.
func (q *quietWatcher) run() {
	t := time.NewTicker(q.every)
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
			case !cs.waiting.Load() || w != seen.wait:
				q.conns[cs] = quietState{wait: w}
			case !seen.counted:
				quiet = append(quiet, cs)
				q.conns[cs] = quietState{wait: w, counted: true}
			}
		}
		q.mu.Unlock()
		for _, cs := range quiet {
			if cs.ri != nil {
				cs.ri.InterruptRead()
			}
		}
		q.moved += len(quiet)
		if len(quiet) == 0 && q.moved >= returnAfterQuiet && time.Since(q.returned) >= returnEvery {
			// A wave of connections went quiet and is over: the stacks
			// their readers grew and the garbage their handshakes left are
			// free now, but an idle process collects no garbage and keeps
			// freed memory for a while. Give it back now.
			q.moved, q.returned = 0, time.Now()
			debug.FreeOSMemory()
		}
	}
}

// Once returnAfterQuiet connections went quiet and a look finds no more
// going quiet, the memory they freed is given back to the system, at
// most once every returnEvery.
const (
	returnAfterQuiet = 256
	returnEvery      = time.Minute
)
