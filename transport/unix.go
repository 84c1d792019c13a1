package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"github.com/ahp-go/ahp/transport/connlimit"
)

// DialUnix connects to a harness listening on the Unix socket at path.
func DialUnix(ctx context.Context, path string, maxMessage int) (Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("unix: %w", err)
	}
	return NewNetConn(nc, maxMessage, Info{Transport: "unix", Remote: path}), nil
}

// NewNetConn wraps a stream-oriented net.Conn as a newline-delimited Conn.
func NewNetConn(nc net.Conn, maxMessage int, info Info) Conn {
	return NewStreamConn(nc, nc, nc.Close, maxMessage, info)
}

// unixListener accepts newline-delimited connections on a Unix socket.
type unixListener struct {
	l    net.Listener // the socket, wrapped by a connlimit listener
	path string
	max  int
	once sync.Once
}

// ListenUnix listens on the Unix socket at path. A stale socket file left
// by a process that is gone is removed first; a live one is an error. The
// socket is created with mode 0600 (only the owner may connect). Accept
// failing for want of file descriptors is retried with a back-off.
func ListenUnix(path string, maxMessage int) (Listener, error) {
	return ListenUnixLimited(path, maxMessage, nil)
}

// CodeConnectionLimit is the JSON-RPC error code of the one line a Unix
// socket listener writes to an agent it refuses at the connection limit,
// before closing the connection (an implementation-defined server error).
const CodeConnectionLimit = -32002

// ListenUnixLimited is ListenUnix with the connections counted by lim
// (nil: no limit). An agent past the limit is accepted, sent one JSON-RPC
// error (id null, code CodeConnectionLimit, the limit in its message and
// data) and disconnected.
func ListenUnixLimited(path string, maxMessage int, lim *connlimit.Limiter) (Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("unix: %s exists and is not a socket", path)
		}
		if c, err := net.Dial("unix", path); err == nil {
			_ = c.Close()
			return nil, fmt.Errorf("unix: %s is in use by another harness", path)
		}
		_ = os.Remove(path)
	}
	addr := &net.UnixAddr{Name: path, Net: "unix"}
	l, err := net.ListenUnix("unix", addr)
	if err != nil {
		return nil, fmt.Errorf("unix: %w", err)
	}
	l.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("unix: %w", err)
	}
	wrapped := lim.Listener(l, connlimit.ListenerOptions{Transport: "unix", Name: "unix:" + path, Refuse: refuseLine})
	return &unixListener{l: wrapped, path: path, max: maxMessage}, nil
}

// refuseLine writes the connection-limit error to an agent being refused.
func refuseLine(c net.Conn, max int) {
	_, _ = c.Write(connectionLimitLine(max))
}

func connectionLimitLine(max int) []byte {
	return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":` + itoa(CodeConnectionLimit) +
		`,"message":"` + connlimit.Message(max) + `","data":{"reason":"connection_limit","max_connections":` + itoa(max) + `}}}` + "\n")
}

func (u *unixListener) Accept(ctx context.Context) (Conn, error) {
	nc, err := u.l.Accept()
	if err != nil {
		if errors.Is(err, net.ErrClosed) {
			return nil, ErrClosed
		}
		return nil, err
	}
	return NewNetConn(nc, u.max, Info{Transport: "unix", Remote: u.path}), nil
}

func (u *unixListener) Close() error {
	var err error
	u.once.Do(func() { err = u.l.Close() })
	return err
}

func (u *unixListener) Addr() string { return "unix:" + u.path }
