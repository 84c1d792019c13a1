package server

import (
	"context"
	"sync"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/transport"
)

// connServer serves one connection with a leader/follower pool: one worker
// at a time holds the reading turn. When it reads a request it hands the
// turn to an idle worker (starting one if all are busy and fewer than max
// exist) and answers the request itself, on the goroutine that read it, so
// no handoff sits between reading a request and deciding it. When max
// workers are busy the reader answers first and reads on afterwards: the
// connection is not read while MaxInFlight requests are in progress
// (backpressure instead of unbounded buffering). Workers, once started, live
// until the connection ends, so their stacks are reused.
type connServer struct {
	s         *Server
	c         transport.Conn
	ctx       context.Context
	cancel    context.CancelFunc
	max       int
	halfClose bool

	turn chan struct{} // an idle worker receives here to become the reader
	done chan struct{} // closed when reading has ended

	mu      sync.Mutex
	started int
	wg      sync.WaitGroup
	endOnce sync.Once
	err     error // written by the reader before done is closed
}

// worker runs until the connection ends. haveTurn says it starts as the
// reader.
func (cs *connServer) worker(haveTurn bool) {
	defer cs.wg.Done()
	for {
		if !haveTurn {
			select {
			case <-cs.turn:
			case <-cs.done:
				return
			}
		}
		m, ok := cs.readRequest()
		if !ok {
			return
		}
		haveTurn = !cs.passTurn()
		cs.answer(&m)
	}
}

// passTurn gives the reading turn to an idle or new worker. It returns
// false when every worker is busy and no more may start.
func (cs *connServer) passTurn() bool {
	select {
	case cs.turn <- struct{}{}:
		return true
	default:
	}
	cs.mu.Lock()
	if cs.started >= cs.max {
		cs.mu.Unlock()
		// Every worker is busy; one may just be becoming idle.
		select {
		case cs.turn <- struct{}{}:
			return true
		default:
			return false
		}
	}
	cs.started++
	cs.mu.Unlock()
	cs.wg.Add(1)
	go cs.worker(true)
	return true
}

// answer handles one request and writes its response.
func (cs *connServer) answer(m *jsonrpc.Message) {
	buf := cs.s.handleRequest(cs.ctx, m, getBuf())
	if err := cs.c.WriteMessage(cs.ctx, buf); err != nil {
		cs.s.log.Debug("write failed", "error", err)
	}
	putBuf(buf)
}

// end marks the end of reading: idle workers leave, and unless the
// transport allows half-close, requests still running are cancelled.
func (cs *connServer) end() {
	cs.endOnce.Do(func() {
		if !cs.halfClose {
			cs.cancel()
		}
		close(cs.done)
	})
}
