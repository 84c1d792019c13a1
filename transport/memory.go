package transport

import (
	"context"
	"sync"
)

// Pipe returns two connected in-memory Conns, for tests and for embedding a
// harness in the same process. Messages are copied on write.
func Pipe() (Conn, Conn) {
	ab := make(chan []byte, 1024)
	ba := make(chan []byte, 1024)
	done := make(chan struct{})
	var once sync.Once
	shut := func() { once.Do(func() { close(done) }) }
	a := &memConn{in: ba, out: ab, done: done, shut: shut}
	b := &memConn{in: ab, out: ba, done: done, shut: shut}
	return a, b
}

type memConn struct {
	in, out chan []byte
	done    chan struct{}
	shut    func()
}

func (c *memConn) Info() Info { return Info{Transport: "memory"} }

func (c *memConn) ReadMessage(ctx context.Context) ([]byte, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		// Deliver what was sent before the close.
		select {
		case m := <-c.in:
			return m, nil
		default:
		}
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *memConn) WriteMessage(ctx context.Context, msg []byte) error {
	cp := append([]byte(nil), msg...)
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	select {
	case c.out <- cp:
		return nil
	case <-c.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *memConn) Close() error { c.shut(); return nil }
