package wstransport

import (
	"net"
	"runtime"
	"sync"
	"time"
)

// maxPendingBytes bounds what a batchConn holds for its flusher; a writer
// beyond it waits. A single larger frame is taken when nothing is pending.
const maxPendingBytes = 256 << 10

// batchConn is the network connection under a WebSocket. coder/websocket
// flushes every frame with a write of its own; batchConn takes the bytes
// at once and a flusher goroutine writes whatever has piled up meanwhile,
// so pipelined responses leave in a few system calls instead of one each.
// Each system call is bounded by the write timeout: a peer that does not
// read fails the flush, which fails every later Write and closes the
// connection, so at most maxPendingBytes wait for a stuck peer.
type batchConn struct {
	net.Conn
	timeout time.Duration

	mu      sync.Mutex
	cond    sync.Cond // writers waiting for room, broadcast on progress or failure
	pending []byte    // bytes for the flusher
	err     error     // the first failure; sticky
	closing bool      // Close was called: flush, then stop
	kick    chan struct{}
	stopped chan struct{} // closed when the flusher has returned
	once    sync.Once
}

func newBatchConn(c net.Conn, timeout time.Duration) *batchConn {
	b := &batchConn{Conn: c, timeout: timeout, kick: make(chan struct{}, 1), stopped: make(chan struct{})}
	b.cond.L = &b.mu
	go b.flusher()
	return b
}

// Write queues p for the flusher, waiting while too much is queued.
func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	for b.err == nil && len(b.pending) > 0 && len(b.pending)+len(p) > maxPendingBytes {
		b.cond.Wait()
	}
	if b.err != nil {
		err := b.err
		b.mu.Unlock()
		return 0, err
	}
	b.pending = append(b.pending, p...)
	b.mu.Unlock()
	b.wake()
	return len(p), nil
}

// flusher writes what is pending until the connection closes or fails.
func (b *batchConn) flusher() {
	defer close(b.stopped)
	var out []byte
	for range b.kick {
		// Let writers that are about to write join this flush: in a burst
		// of pipelined responses this turns one system call per frame into
		// one per dozen frames.
		runtime.Gosched()
		for {
			b.mu.Lock()
			if b.err != nil {
				b.mu.Unlock()
				return
			}
			if len(b.pending) == 0 {
				closing := b.closing
				b.mu.Unlock()
				if closing {
					return
				}
				break
			}
			out, b.pending = b.pending, out[:0]
			timeout := b.timeout
			if b.closing {
				timeout = min(timeout, closeGrace)
			}
			b.cond.Broadcast()
			b.mu.Unlock()
			_ = b.Conn.SetWriteDeadline(time.Now().Add(timeout))
			if _, err := b.Conn.Write(out); err != nil {
				b.mu.Lock()
				if b.err == nil {
					b.err = err
				}
				b.cond.Broadcast()
				b.mu.Unlock()
				_ = b.Conn.Close()
				return
			}
			if cap(out) > maxPendingBytes {
				out = nil // do not keep a buffer grown by one large frame
			}
		}
	}
}

// Close writes what is pending (waiting at most closeGrace) and closes
// the connection. Later writes fail.
func (b *batchConn) Close() error {
	var err error
	b.once.Do(func() {
		b.mu.Lock()
		b.closing = true
		b.mu.Unlock()
		b.wake()
		t := time.NewTimer(closeGrace)
		select {
		case <-b.stopped:
		case <-t.C:
		}
		t.Stop()
		b.mu.Lock()
		if b.err == nil {
			b.err = net.ErrClosed
		}
		b.cond.Broadcast()
		b.mu.Unlock()
		err = b.Conn.Close()
		b.wake()
		<-b.stopped
	})
	return err
}

func (b *batchConn) wake() {
	select {
	case b.kick <- struct{}{}:
	default: // the flusher is already due to run
	}
}

// timedOut reports whether a write failed because the peer did not read
// in time.
func (b *batchConn) timedOut() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	ne, ok := b.err.(net.Error)
	return ok && ne.Timeout()
}
