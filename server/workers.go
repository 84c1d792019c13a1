package server

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

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

	// Write coalescing on stream transports (see answer and readRequest).
	bw         bufferedWriter
	moreInput  atomic.Bool // the last read left more input buffered
	readerIdle atomic.Bool // the reader is (about to be) waiting for input
	unflushed  atomic.Bool // answers sit in the write buffer

	// Quiet connections (see quiet.go).
	ri      transport.ReadInterrupter // nil when the transport has none
	waits   atomic.Uint64             // waits for input so far
	waiting atomic.Bool               // the reader is waiting for input
	moved   bool                      // set by the reader: its wait was interrupted

	mu      sync.Mutex
	started int
	live    atomic.Int32 // workers running; the last to leave calls finish
	finish  func()
	endOnce sync.Once
	err     error // written by the reader before done is closed
}

// worker runs until the connection ends. haveTurn says it starts as the
// reader.
func (cs *connServer) worker(haveTurn bool) {
	defer cs.leave()
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
			if cs.moved {
				// Hand the reading turn to a new goroutine in place of
				// this one.
				cs.moved = false
				cs.s.moves.Add(1)
				cs.live.Add(1)
				if w, ok := cs.c.(transport.InputWatcher); ok {
					// The connection has a reading goroutine of its own:
					// no goroutine of ours waits, one starts when input
					// comes.
					w.WatchInput(cs.wake)
				} else {
					go cs.awaitInput()
				}
			}
			return
		}
		if cs.buffered() {
			// More input is waiting: let another worker read it now.
			haveTurn = !cs.passTurn()
			if haveTurn {
				// Nobody else reads while this answer is made: send
				// what others left in the buffer first.
				cs.flushPending()
			}
			cs.answer(&m)
			continue
		}
		haveTurn = cs.answerHoldingTurn(&m)
	}
}

// leave ends a worker; the last one ends the connection.
func (cs *connServer) leave() {
	if cs.live.Add(-1) == 0 {
		cs.finish()
	}
}

// awaitInput is the reader of a quiet connection: it waits for input on
// a fresh goroutine, whose stack holds only this wait, then reads as a
// worker (see quiet.go).
func (cs *connServer) awaitInput() {
	_ = cs.ri.WaitInput() // an error is seen again by the read
	cs.worker(true)
}

// wake starts a reader for a quiet connection whose input came (see
// transport.InputWatcher).
func (cs *connServer) wake() { go cs.worker(true) }

// handoffDelay is how long a worker answering a request keeps the reading
// turn when no more input is waiting, before handing it on. Most decisions
// take less: the worker then reads the next request itself, and no other
// goroutine has to be woken. A slow decision (a human approval, say) holds
// other requests up for at most this long.
const handoffDelay = 50 * time.Microsecond

// Turn states of answerHoldingTurn.
const (
	turnHeld     = iota // the answering worker holds the turn
	turnKept            // it finished first and keeps the turn
	turnPassing         // the timer is handing the turn on
	turnPassed          // the timer handed it on
	turnReturned        // the timer found nobody free: the worker keeps it
)

// answerHoldingTurn answers m while holding the reading turn, handing the
// turn on if the answer takes longer than handoffDelay. It reports whether
// the worker still holds the turn afterwards.
func (cs *connServer) answerHoldingTurn(m *jsonrpc.Message) bool {
	var state atomic.Int32
	t := time.AfterFunc(handoffDelay, func() {
		if !state.CompareAndSwap(turnHeld, turnPassing) {
			return
		}
		if cs.passTurn() {
			state.Store(turnPassed)
		} else {
			state.Store(turnReturned)
		}
	})
	cs.answer(m)
	if state.CompareAndSwap(turnHeld, turnKept) {
		t.Stop()
		return true
	}
	for {
		switch state.Load() {
		case turnPassed:
			return false
		case turnReturned:
			return true
		}
		runtime.Gosched() // the timer is deciding; it takes a moment
	}
}

// buffered reports whether the connection already holds unread input.
func (cs *connServer) buffered() bool {
	b, ok := cs.c.(interface{ Buffered() int })
	return ok && b.Buffered() > 0
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
	cs.live.Add(1)
	go cs.worker(true)
	return true
}

// answer handles one request and writes its response.
func (cs *connServer) answer(m *jsonrpc.Message) {
	buf := cs.s.handleRequest(cs.ctx, m, getBuf())
	var err error
	if cs.bw != nil && cs.moreInput.Load() {
		// More requests are already waiting to be read: leave this answer
		// in the buffer for a later write to take along. Whoever is about
		// to wait for input flushes first; and if the reader is waiting
		// already, this writer flushes (each side checks the other's flag
		// after setting its own, so one of them always flushes).
		err = cs.bw.WriteBuffered(cs.ctx, buf)
		cs.unflushed.Store(true)
		if cs.readerIdle.Load() {
			cs.flushPending()
		}
	} else {
		err = cs.c.WriteMessage(cs.ctx, buf)
	}
	if err != nil {
		cs.s.log.Debug("write failed", "error", err)
	}
	putBuf(buf)
}

// bufferedWriter is implemented by the stream transports, which can hold
// messages back and send several in one system call.
type bufferedWriter interface {
	WriteBuffered(ctx context.Context, msg []byte) error
	Flush() error
}

// flushPending sends answers left in the write buffer, if any.
func (cs *connServer) flushPending() {
	if cs.bw != nil && cs.unflushed.Swap(false) {
		if err := cs.bw.Flush(); err != nil {
			cs.s.log.Debug("flush failed", "error", err)
		}
	}
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
