//go:build unix

package transport

import (
	"io"
	"net"
	"syscall"
)

// rawReader waits for input on a socket without holding a buffer: the
// read buffer is taken from the pool only when the socket has data, and
// given back while the socket has none.
type rawReader struct{ rc syscall.RawConn }

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
	return &rawReader{rc: rc}
}

// read fills (*buf)[off:] once. When *buf is nil it takes a buffer from
// the pool first; when the socket has no data and release is true, it
// gives the buffer back and waits with none.
func (rr *rawReader) read(buf **[]byte, off int, release bool) (int, error) {
	var n int
	var rerr error
	err := rr.rc.Read(func(fd uintptr) bool {
		if *buf == nil {
			*buf = GetBuffer()
		}
		for {
			n, rerr = syscall.Read(int(fd), (**buf)[off:])
			if rerr != syscall.EINTR {
				break
			}
		}
		if rerr == syscall.EAGAIN {
			if release {
				PutBuffer(*buf)
				*buf = nil
			}
			return false // wait until the socket is readable, then again
		}
		return true
	})
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
