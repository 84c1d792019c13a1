package observe

import (
	"net"
	"sync"
	"time"
)

// maxCork bounds the bytes a corked connection holds back before it
// writes them anyway.
const maxCork = 256 << 10

// corkConn is an observer's network connection that can hold back the
// writes of several WebSocket messages and send them with one write to
// the socket: the WebSocket library flushes after every message, which
// costs one system call (and, on a busy machine, one wake-up of the
// peer) per action when an observer is behind. Between hold and flush,
// writes are appended to a buffer (up to maxCork bytes, beyond which they
// go out at once); outside, they pass straight through. Its methods are
// safe for concurrent use (the library answers pings from its reader).
// A nil *corkConn holds nothing.
type corkConn struct {
	net.Conn

	mu      sync.Mutex
	holding bool
	buf     []byte
}

func newCorkConn(c net.Conn) *corkConn { return &corkConn{Conn: c} }

// Write implements net.Conn.
func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holding && len(c.buf)+len(p) <= maxCork {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	if err := c.writeHeldLocked(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

// hold starts holding writes back until flush.
func (c *corkConn) hold() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.holding = true
	c.mu.Unlock()
}

// flush stops holding writes back and writes what was held, within
// timeout (after which the write fails, and the connection is to be
// closed).
func (c *corkConn) flush(timeout time.Duration) error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holding = false
	if len(c.buf) == 0 {
		return nil
	}
	if err := c.Conn.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	err := c.writeHeldLocked()
	if derr := c.Conn.SetWriteDeadline(time.Time{}); err == nil {
		err = derr
	}
	return err
}

// writeHeldLocked writes the held bytes; c.mu must be held.
func (c *corkConn) writeHeldLocked() error {
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	if cap(c.buf) > 64<<10 {
		c.buf = nil // do not keep a large buffer for an idle observer
	} else {
		c.buf = c.buf[:0]
	}
	return err
}
