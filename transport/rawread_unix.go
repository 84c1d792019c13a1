//go:build unix

package transport

import (
	"io"
	"net"
	"syscall"
)

// rawReader waits for input on a socket without holding a buffer: the
// read buffer is taken from the pool only when the socket has data, and
// given back while the socket has none. It is for one reader at a time.
type rawReader struct {
	rc syscall.RawConn

	// The state of the read in progress, kept here so that the function
	// given to rc.Read is made once, not per read.
	buf     **[]byte
	off     int
	release bool
	n       int
	err     error
	readFn  func(fd uintptr) bool
}

// newRawReader returns a rawReader for r, or nil when r is not a socket
// the runtime can wait on.
func newRawReader(r io.Reader) *rawReader {
	sc, ok := r.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return nil
	}
	if _, isNet := r.(net.Conn); !isNet {
		return nil // files (stdio) may not be pollable: read them plainly
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	rr := &rawReader{rc: rc}
	rr.readFn = rr.readOnce
	return rr
}

// read fills (*buf)[off:] once. When *buf is nil it takes a buffer from
// the pool first; when the socket has no data and release is true, it
// gives the buffer back and waits with none.
func (rr *rawReader) read(buf **[]byte, off int, release bool) (int, error) {
	rr.buf, rr.off, rr.release, rr.n, rr.err = buf, off, release, 0, nil
	err := rr.rc.Read(rr.readFn)
	rr.buf = nil
	n, rerr := rr.n, rr.err
	if err != nil {
		return 0, err
	}
	if rerr != nil {
		return 0, rerr
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (rr *rawReader) readOnce(fd uintptr) bool {
	buf := rr.buf
	if *buf == nil {
		*buf = GetBuffer()
	}
	for {
		rr.n, rr.err = syscall.Read(int(fd), (**buf)[rr.off:])
		if rr.err != syscall.EINTR {
			break
		}
	}
	if rr.err == syscall.EAGAIN {
		if rr.release {
			PutBuffer(*buf)
			*buf = nil
		}
		return false // wait until the socket is readable, then again
	}
	if rr.n < 0 {
		rr.n = 0
	}
	return true
}
