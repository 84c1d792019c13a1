package transport

import (
	"bufio"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// streamConn carries newline-delimited JSON over a byte stream (stdio and
// Unix sockets). Concurrent writers share a buffered writer; the last writer
// of a burst flushes, so pipelined responses leave in few system calls.
type streamConn struct {
	r       *bufio.Reader
	max     int
	info    Info
	closeFn func() error

	wmu     sync.Mutex
	w       *bufio.Writer
	writers atomic.Int32
	werr    error

	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool
}

// NewStreamConn returns a Conn that reads newline-delimited messages from r
// and writes them to w. closeFn (which may be nil) is called once by Close.
// maxMessage bounds one message (DefaultMaxMessageBytes when <= 0).
func NewStreamConn(r io.Reader, w io.Writer, closeFn func() error, maxMessage int, info Info) Conn {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessageBytes
	}
	return &streamConn{
		r:       bufio.NewReaderSize(r, 64<<10),
		w:       bufio.NewWriterSize(w, 64<<10),
		max:     maxMessage,
		info:    info,
		closeFn: closeFn,
	}
}

func (c *streamConn) Info() Info { return c.info }

func (c *streamConn) ReadMessage(ctx context.Context) ([]byte, error) {
	for {
		if c.closed.Load() {
			return nil, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := c.readLine()
		if err != nil {
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

// readLine returns one line without its newline, copied into a new slice.
// A line over the limit is skipped up to its newline.
func (c *streamConn) readLine() ([]byte, error) {
	frag, err := c.r.ReadSlice('\n')
	if err == nil {
		out := make([]byte, len(frag))
		copy(out, frag)
		return out, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		if err == io.EOF && len(frag) > 0 {
			out := make([]byte, len(frag))
			copy(out, frag)
			return out, nil
		}
		return nil, err
	}
	buf := append([]byte(nil), frag...)
	for {
		frag, err = c.r.ReadSlice('\n')
		if len(buf)+len(frag) > c.max {
			// Discard the rest of this message, then report it.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = c.r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, &TooLargeError{Limit: c.max, Skipped: err == nil}
		}
		buf = append(buf, frag...)
		if err == nil {
			return buf, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if err == io.EOF && len(buf) > 0 {
				return buf, nil
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
	if c.werr != nil {
		return c.werr
	}
	if _, err := c.w.Write(msg); err != nil {
		c.werr = err
		return err
	}
	if err := c.w.WriteByte('\n'); err != nil {
		c.werr = err
		return err
	}
	return nil
}

// Flush sends what WriteBuffered held back.
func (c *streamConn) Flush() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr != nil {
		return c.werr
	}
	if err := c.w.Flush(); err != nil {
		c.werr = err
		return err
	}
	return nil
}

func (c *streamConn) WriteMessage(ctx context.Context, msg []byte) error {
	if c.closed.Load() {
		return ErrClosed
	}
	c.writers.Add(1)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	last := c.writers.Add(-1) == 0
	if c.werr != nil {
		return c.werr
	}
	if _, err := c.w.Write(msg); err != nil {
		c.werr = err
		return err
	}
	if err := c.w.WriteByte('\n'); err != nil {
		c.werr = err
		return err
	}
	if last {
		// No other writer is waiting: flush now. Otherwise the writer that
		// comes last flushes for everyone.
		if err := c.w.Flush(); err != nil {
			c.werr = err
			return err
		}
	}
	return nil
}

func (c *streamConn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		// Flush what is buffered unless a writer is stuck on a peer that does
		// not read; closing the stream below unblocks that writer.
		if c.wmu.TryLock() {
			_ = c.w.Flush()
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
func (c *streamConn) Buffered() int { return c.r.Buffered() }
