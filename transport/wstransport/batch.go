package wstransport

import (
	"bufio"
	"errors"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/ahp-go/ahp/transport"
)

// maxPendingBytes bounds what a batchConn holds for its flusher; a writer
// beyond it waits. A single larger frame is taken when nothing is pending.
const maxPendingBytes = 256 << 10

// batchConn is the network connection under a WebSocket. coder/websocket
// flushes every frame with a write of its own; batchConn takes the bytes
// at once and a flusher goroutine writes whatever has piled up meanwhile,
// so pipelined responses leave in a few system calls instead of one each.
// The flusher runs only while there is something to send, and the
// buffers come from transport's pool (reads through a QuietReader), so a
// quiet connection holds neither goroutine nor buffer for this.
// Each system call is bounded by the write timeout: a peer that does not
// read fails the flush, which fails every later Write and closes the
// connection, so at most maxPendingBytes wait for a stuck peer.
type batchConn struct {
	net.Conn
	timeout time.Duration
	rd      *transport.QuietReader

	mu       sync.Mutex
	cond     sync.Cond // broadcast on progress, failure and when the flusher stops
	pending  []byte    // bytes for the flusher (a pooled buffer while small)
	pbuf     *[]byte   // the pooled buffer under pending, nil when none
	err      error     // the first failure; sticky
	closing  bool      // Close was called: flush, then stop
	flushing bool      // a flusher goroutine is running
	once     sync.Once

	// Waiting for input before coder/websocket reads (see preWait).
	br      *bufio.Reader // coder/websocket's reader over this connection
	imu     sync.Mutex
	inWait  bool // the reader is in preWait
	stopped bool // InterruptRead set the read deadline
	leaving bool // closeWaits was called
}

// past is the read deadline that interrupts a wait.
var past = time.Unix(1, 0)

// preWait waits for input before a message is read, so that the wait
// can be interrupted (InterruptRead) without harm: coder/websocket treats
// any read error as fatal, so the reader must not be interrupted inside
// it. It returns transport.ErrReadInterrupted when interrupted.
func (b *batchConn) preWait() error {
	if b.br == nil {
		return nil // not made by Accept: coder's reader is unknown
	}
	b.imu.Lock()
	// Under imu, which closeWaits takes before coder's close handshake
	// reads from br.
	if b.leaving || b.br.Buffered() > 0 || b.rd.Buffered() > 0 {
		b.imu.Unlock()
		return nil // let coder find the input, or that the connection closes
	}
	b.inWait = true
	b.imu.Unlock()
	err := b.rd.Wait()
	b.imu.Lock()
	b.inWait = false
	interrupted := b.stopped
	if interrupted {
		b.stopped = false
		_ = b.Conn.SetReadDeadline(time.Time{})
	}
	b.imu.Unlock()
	if interrupted && errors.Is(err, os.ErrDeadlineExceeded) {
		return transport.ErrReadInterrupted
	}
	return nil
}

// closeWaits keeps readers from looking at coder's reader from now on:
// the connection is closing and coder reads its close handshake.
func (b *batchConn) closeWaits() {
	b.imu.Lock()
	b.leaving = true
	b.imu.Unlock()
}

// interrupt makes a reader waiting in preWait return.
func (b *batchConn) interrupt() {
	b.imu.Lock()
	if b.inWait && !b.stopped {
		b.stopped = true
		_ = b.Conn.SetReadDeadline(past)
	}
	b.imu.Unlock()
}

func newBatchConn(c net.Conn, timeout time.Duration) *batchConn {
	b := &batchConn{Conn: c, timeout: timeout, rd: transport.NewQuietReader(c)}
	b.cond.L = &b.mu
	return b
}

// Read reads through the pooled reader.
func (b *batchConn) Read(p []byte) (int, error) { return b.rd.Read(p) }

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
	if b.pending == nil && len(p) <= transport.BufferSize {
		b.pbuf = transport.GetBuffer()
		b.pending = (*b.pbuf)[:0]
	}
	b.pending = append(b.pending, p...)
	if !b.flushing {
		b.flushing = true
		go b.flusher()
	}
	b.mu.Unlock()
	return len(p), nil
}

// flusher writes what is pending until nothing is, or the connection
// fails.
func (b *batchConn) flusher() {
	// Let writers that are about to write join this flush: in a burst
	// of pipelined responses this turns one system call per frame into
	// one per dozen frames.
	runtime.Gosched()
	for {
		b.mu.Lock()
		if b.err != nil || len(b.pending) == 0 {
			b.flushing = false
			b.cond.Broadcast()
			b.mu.Unlock()
			return
		}
		out, obuf := b.pending, b.pbuf
		b.pending, b.pbuf = nil, nil
		timeout := b.timeout
		if b.closing {
			timeout = min(timeout, closeGrace)
		}
		b.cond.Broadcast()
		b.mu.Unlock()
		_ = b.Conn.SetWriteDeadline(time.Now().Add(timeout))
		_, err := b.Conn.Write(out)
		transport.PutBuffer(obuf)
		if err != nil {
			b.mu.Lock()
			if b.err == nil {
				b.err = err
			}
			b.flushing = false
			b.cond.Broadcast()
			b.mu.Unlock()
			_ = b.Conn.Close()
			return
		}
	}
}

// Close writes what is pending (waiting at most closeGrace) and closes
// the connection. Later writes fail.
func (b *batchConn) Close() error {
	var err error
	b.once.Do(func() {
		cut := time.AfterFunc(closeGrace, func() {
			b.mu.Lock()
			if b.err == nil {
				b.err = net.ErrClosed
			}
			b.cond.Broadcast()
			b.mu.Unlock()
			_ = b.Conn.Close()
		})
		b.mu.Lock()
		b.closing = true
		for b.flushing {
			b.cond.Wait()
		}
		if b.err == nil {
			b.err = net.ErrClosed
		}
		b.pending = nil
		if b.pbuf != nil {
			transport.PutBuffer(b.pbuf)
			b.pbuf = nil
		}
		b.cond.Broadcast()
		b.mu.Unlock()
		cut.Stop()
		err = b.Conn.Close()
	})
	return err
}

// timedOut reports whether a write failed because the peer did not read
// in time.
func (b *batchConn) timedOut() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	ne, ok := b.err.(net.Error)
	return ok && ne.Timeout()
}
