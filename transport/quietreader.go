package transport

import (
	"io"
	"sync"
)

// QuietReader reads from r through a buffer from the pool (see
// BufferSize) that it gives back whenever everything read has been
// handed out: an idle connection read through it holds no buffer. On a
// socket it also waits for input without one. It is safe for concurrent
// use (a WebSocket's close handshake may read while its reader waits):
// readers take turns.
type QuietReader struct {
	mu   sync.Mutex
	src  io.Reader
	raw  *rawReader
	buf  *[]byte
	pos  int
	end  int
	werr error // a sticky read error
}

// NewQuietReader returns a QuietReader over r.
func NewQuietReader(r io.Reader) *QuietReader {
	return &QuietReader{src: r, raw: newRawReader(r)}
}

// Read copies buffered input into p, reading more first when none is
// buffered.
func (q *QuietReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pos == q.end {
		if q.werr != nil {
			return 0, q.werr
		}
		q.pos, q.end = 0, 0
		var n int
		var err error
		if q.raw != nil {
			n, err = q.raw.read(&q.buf, 0, true)
		} else {
			if q.buf == nil {
				q.buf = GetBuffer()
			}
			n, err = q.src.Read(*q.buf)
		}
		q.end = n
		if n == 0 {
			q.release()
			if err == nil {
				return 0, nil
			}
			q.werr = err
			return 0, err
		}
		if err != nil {
			q.werr = err
		}
	}
	n := copy(p, (*q.buf)[q.pos:q.end])
	q.pos += n
	if q.pos == q.end {
		q.release()
	}
	return n, nil
}

// Wait returns once input is buffered: it reads what the socket has,
// holding no buffer while there is nothing. An error (the end of input,
// a deadline) is returned and not kept: the next Read meets it again.
// On readers that are not sockets it returns at once.
func (q *QuietReader) Wait() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pos < q.end || q.raw == nil || q.werr != nil {
		return nil
	}
	n, err := q.raw.read(&q.buf, 0, true)
	q.pos, q.end = 0, n
	if n == 0 {
		q.release()
		return err
	}
	return nil
}

// Buffered returns how many bytes are read but not yet handed out.
func (q *QuietReader) Buffered() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.end - q.pos
}

func (q *QuietReader) release() {
	if q.buf != nil {
		PutBuffer(q.buf)
		q.buf = nil
	}
	q.pos, q.end = 0, 0
}
