package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// streamConn carries newline-delimited JSON over a byte stream (stdio and
// Unix sockets). Its read and write buffers come from a pool while a
// message is being read or written and go back when the connection is
// quiet (see BufferSize), so an idle connection holds no buffer.
// Concurrent writers share the write buffer; the last writer of a burst
// flushes, so pipelined responses leave in few system calls.
type streamConn struct {
	src     io.Reader
	raw     *rawReader // waits for input without a buffer; nil for plain readers
	rbuf    *[]byte    // nil while nothing is buffered
	rpos    int        // next unread byte of rbuf
	rend    int        // end of the bytes read into rbuf
	max     int
	info    Info
	closeFn func() error

	wmu     sync.Mutex
	dst     io.Writer
	wbuf    *[]byte // nil while nothing waits to be sent
	wn      int     // bytes of wbuf waiting
	writers atomic.Int32
	werr    error

	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool

	deadliner interface{ SetReadDeadline(time.Time) error } // the socket, for InterruptRead; nil otherwise
	interrupt atomic.Bool                                   // InterruptRead was called
}

// NewStreamConn returns a Conn that reads newline-delimited messages from r
// and writes them to w. closeFn (which may be nil) is called once by Close.
// maxMessage bounds one message (DefaultMaxMessageBytes when <= 0).
func NewStreamConn(r io.Reader, w io.Writer, closeFn func() error, maxMessage int, info Info) Conn {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessageBytes
	}
	c := &streamConn{
		src:     r,
		raw:     newRawReader(r),
		dst:     w,
		max:     maxMessage,
		info:    info,
		closeFn: closeFn,
	}
	if nc, ok := r.(net.Conn); ok && c.raw != nil {
		c.deadliner = nc
	}
	return c
}

// InterruptRead implements ReadInterrupter on sockets (on other streams
// it does nothing): a past read deadline wakes the reader, which returns
// ErrReadInterrupted if it holds nothing of a message.
func (c *streamConn) InterruptRead() {
	if c.deadliner == nil {
		return
	}
	c.interrupt.Store(true)
	_ = c.deadliner.SetReadDeadline(time.Unix(1, 0))
}

// WaitInput implements ReadInterrupter: it reads what the socket has,
// holding no buffer while there is nothing (on other streams it returns
// at once). An error is left for the next read.
func (c *streamConn) WaitInput() error {
	if c.raw == nil || c.rpos < c.rend {
		return nil
	}
	return c.fill()
}

// interrupted handles a read that failed with err: when it is the
// deadline InterruptRead set, the deadline is lifted and interrupted
// reports true.
func (c *streamConn) interrupted(err error) bool {
	if !errors.Is(err, os.ErrDeadlineExceeded) || !c.interrupt.Swap(false) {
		return false
	}
	_ = c.deadliner.SetReadDeadline(time.Time{})
	return true
}

func (c *streamConn) Info() Info { return c.info }

func (c *streamConn) ReadMessage(ctx context.Context) ([]byte, error) {
	for {
		if c.closed.Load() {
			c.releaseRead()
			return nil, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := c.readLine()
		if err != nil {
			if _, ok := err.(*TooLargeError); !ok {
				c.releaseRead()
			}
			if c.closed.Load() {
				return nil, ErrClosed
			}
			return nil, err
		}
		line = trimSpace(line)
		if len(line) == 0 {
			continue // blank lines between messages are allowed
		}
		return line, nil
	}
}

// releaseRead gives the read buffer back when nothing in it is unread.
func (c *streamConn) releaseRead() {
	if c.rbuf != nil && c.rpos == c.rend {
		PutBuffer(c.rbuf)
		c.rbuf = nil
		c.rpos, c.rend = 0, 0
	}
}

// fill reads more input after the bytes already buffered, compacting
// them to the front of the buffer first. With nothing buffered, the
// buffer is given back while the connection waits for input.
func (c *streamConn) fill() error {
	if c.rpos == c.rend {
		c.rpos, c.rend = 0, 0
	} else if c.rpos > 0 {
		c.rend = copy(*c.rbuf, (*c.rbuf)[c.rpos:c.rend])
		c.rpos = 0
	}
	var n int
	var err error
	if c.raw != nil {
		n, err = c.raw.read(&c.rbuf, c.rend, c.rend == 0)
	} else {
		if c.rbuf == nil {
			c.rbuf = GetBuffer()
		}
		for n == 0 && err == nil {
			n, err = c.src.Read((*c.rbuf)[c.rend:])
		}
	}
	c.rend += n
	if n > 0 {
		return nil
	}
	return err
}

// readLine returns one line without its newline, copied into a new slice.
// A line over the limit is skipped up to its newline. A last line without
// a newline counts at the end of input.
func (c *streamConn) readLine() ([]byte, error) {
	var long []byte // a line longer than the buffer, gathered so far
	tooLong := false
	for {
		if c.rbuf != nil && c.rpos < c.rend {
			b := (*c.rbuf)[c.rpos:c.rend]
			if i := bytes.IndexByte(b, '\n'); i >= 0 {
				c.rpos += i + 1
				if tooLong || len(long)+i > c.max {
					return nil, &TooLargeError{Limit: c.max, Skipped: true}
				}
				out := make([]byte, len(long)+i)
				copy(out[copy(out, long):], b[:i])
				return out, nil
			}
			if c.rend == len(*c.rbuf) {
				// The buffer is full and holds no newline: keep the part
				// and read on, up to the limit.
				if !tooLong && len(long)+len(b) > c.max {
					tooLong, long = true, nil
				}
				if !tooLong {
					long = append(long, b...)
				}
				c.rpos, c.rend = 0, 0
			}
		}
		if err := c.fill(); err != nil {
			if c.interrupted(err) {
				if long == nil && !tooLong && c.rpos == c.rend {
					return nil, ErrReadInterrupted
				}
				continue // part of a message is in hand: read on
			}
			if errors.Is(err, io.EOF) && !tooLong {
				if c.rbuf != nil {
					long = append(long, (*c.rbuf)[c.rpos:c.rend]...)
					c.rpos = c.rend
				}
				if len(long) > 0 {
					return long, nil
				}
			}
			if tooLong && errors.Is(err, io.EOF) {
				return nil, &TooLargeError{Limit: c.max}
			}
			return nil, err
		}
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 {
		switch b[len(b)-1] {
		case '\n', '\r', ' ', '\t':
			b = b[:len(b)-1]
			continue
		}
		break
	}
	for len(b) > 0 {
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			b = b[1:]
			continue
		}
		break
	}
	return b
}

// WriteBuffered adds msg to the write buffer without sending it: Flush (or
// a later WriteMessage) sends it, and so does a full buffer.
func (c *streamConn) WriteBuffered(_ context.Context, msg []byte) error {
	if c.closed.Load() {
		return ErrClosed
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeLocked(msg)
}

// Flush sends what WriteBuffered held back.
func (c *streamConn) Flush() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.flushLocked()
}

func (c *streamConn) WriteMessage(ctx context.Context, msg []byte) error {
	if c.closed.Load() {
		return ErrClosed
	}
	c.writers.Add(1)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	last := c.writers.Add(-1) == 0
	if err := c.writeLocked(msg); err != nil {
		return err
	}
	if last {
		// No other writer is waiting: flush now. Otherwise the writer that
		// comes last flushes for everyone.
		return c.flushLocked()
	}
	return nil
}

var newline = []byte{'\n'}

// writeLocked adds msg and a newline to the write buffer, sending what
// is there first when they do not fit. A message larger than the buffer
// is sent at once, without copying.
func (c *streamConn) writeLocked(msg []byte) error {
	if c.werr != nil {
		return c.werr
	}
	need := len(msg) + 1
	if c.wbuf != nil && c.wn+need > len(*c.wbuf) {
		if err := c.flushLocked(); err != nil {
			return err
		}
	}
	if need > BufferSize {
		bufs := net.Buffers{msg, newline}
		if _, err := bufs.WriteTo(c.dst); err != nil {
			c.werr = err
			return err
		}
		return nil
	}
	if c.wbuf == nil {
		c.wbuf = GetBuffer()
	}
	c.wn += copy((*c.wbuf)[c.wn:], msg)
	(*c.wbuf)[c.wn] = '\n'
	c.wn++
	return nil
}

// flushLocked sends the write buffer and gives it back to the pool.
func (c *streamConn) flushLocked() error {
	if c.werr != nil {
		return c.werr
	}
	if c.wbuf == nil {
		return nil
	}
	var err error
	if c.wn > 0 {
		_, err = c.dst.Write((*c.wbuf)[:c.wn])
	}
	PutBuffer(c.wbuf)
	c.wbuf, c.wn = nil, 0
	if err != nil {
		c.werr = err
	}
	return err
}

func (c *streamConn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		// Flush what is buffered unless a writer is stuck on a peer that does
		// not read; closing the stream below unblocks that writer.
		if c.wmu.TryLock() {
			_ = c.flushLocked()
			c.wmu.Unlock()
		}
		if c.closeFn != nil {
			c.closeErr = c.closeFn()
		}
	})
	return c.closeErr
}

// Buffered returns how many bytes have been read from the peer but not yet
// returned as messages. The server uses it to tell pipelined input from a
// quiet connection.
func (c *streamConn) Buffered() int { return c.rend - c.rpos }
