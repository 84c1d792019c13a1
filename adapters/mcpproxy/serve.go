package mcpproxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// MaxHTTPConnections bounds the connections ListenAndServe holds open at
// once; past it, new connections wait in the listen backlog until one
// closes.
const MaxHTTPConnections = 512

// ListenAndServe serves h over HTTP on addr (HOST:PORT) until ctx ends,
// then closes the server and its connections. ready, when not nil, is
// called with the bound address once it accepts connections. It returns
// nil when ctx ended.
//
// The server bounds what one client can hold: headers within 10 s and at
// most 64 KiB, a whole request (body included) within 1 min, an idle
// keep-alive connection for 2 min, and MaxHTTPConnections connections.
// The checks of Host, Origin and body size are HTTPHandler's, so that
// they hold for any server it is mounted on.
func ListenAndServe(ctx context.Context, addr string, h http.Handler, ready func(net.Addr)) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		// ReadTimeout covers reading the request; net/http lifts the
		// deadline once the body is read, so long responses are not cut.
		ReadTimeout:    time.Minute,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		// No WriteTimeout: it would cut the responses that legitimately
		// last minutes, an SSE stream (GET) or a tools/call waiting for a
		// human's approval. Idle sessions are closed by HTTPHandler, and
		// a client that went away is noticed on the next write.
	}
	stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
	defer stop()
	if ready != nil {
		ready(l.Addr())
	}
	if err := srv.Serve(limitListener(l, MaxHTTPConnections)); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// limitListener returns a listener that holds at most n accepted
// connections open: Accept waits for a closed one past that.
func limitListener(l net.Listener, n int) net.Listener {
	return &limitedListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, free: func() { <-l.slots }}, nil
}

func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its slot back on its first Close.
type limitedConn struct {
	net.Conn
	once sync.Once
	free func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}
