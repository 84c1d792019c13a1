package server

import (
	"context"
	"sync"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/transport"
)

// job is one request to answer on a connection.
type job struct {
	s   *Server
	c   transport.Conn
	ctx context.Context
	m   jsonrpc.Message
}

func (j *job) run() {
	buf := j.s.handleRequest(j.ctx, &j.m, getBuf())
	if err := j.c.WriteMessage(j.ctx, buf); err != nil {
		j.s.log.Debug("write failed", "error", err)
	}
	putBuf(buf)
}

// workers runs the requests of one connection concurrently on at most max
// goroutines. Goroutines are started only when every existing one is busy
// and are kept until the connection ends, so their stacks, once grown, are
// reused instead of being grown again for every request.
type workers struct {
	jobs    chan job
	max     int
	mu      sync.Mutex
	started int
	wg      sync.WaitGroup
}

func newWorkers(max int) *workers {
	return &workers{jobs: make(chan job), max: max}
}

// submit hands j to an idle worker, starts a new one, or waits for one to
// become free (backpressure on the reader). It returns false if ctx ended
// first.
func (w *workers) submit(ctx context.Context, j job) bool {
	select {
	case w.jobs <- j:
		return true
	default:
	}
	w.mu.Lock()
	if w.started < w.max {
		w.started++
		w.mu.Unlock()
		w.wg.Add(1)
		go w.loop(j)
		return true
	}
	w.mu.Unlock()
	select {
	case w.jobs <- j:
		return true
	case <-ctx.Done():
		return false
	}
}

func (w *workers) loop(first job) {
	defer w.wg.Done()
	first.run()
	for j := range w.jobs {
		j.run()
	}
}

// stop waits for the requests in flight to finish and ends the workers.
func (w *workers) stop() {
	close(w.jobs)
	w.wg.Wait()
}
