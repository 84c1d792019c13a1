// Package transport moves JSON-RPC messages between an agent and a harness.
// A Conn reads and writes whole messages and knows nothing about events or
// decisions; stdio, Unix sockets, an in-memory pipe and (in their own files)
// the network transports all implement it, so the client and server work
// the same over each.
package transport

import (
	"context"
	"errors"
)

// DefaultMaxMessageBytes bounds the size of one message read from a peer.
const DefaultMaxMessageBytes = 4 << 20

// ErrClosed is returned by operations on a closed connection or listener.
var ErrClosed = errors.New("transport: connection closed")

// Conn is a bidirectional connection that carries whole JSON-RPC messages.
//
// ReadMessage may be called from one goroutine at a time; WriteMessage is
// safe for concurrent use. Close unblocks a pending ReadMessage, which then
// returns ErrClosed (or io.EOF when the peer closed first).
type Conn interface {
	// ReadMessage returns the next message. The slice belongs to the caller.
	// A message larger than the limit yields a *TooLargeError; the stream is
	// still usable afterwards when the transport can skip the message.
	ReadMessage(ctx context.Context) ([]byte, error)
	// WriteMessage sends one message. The slice is not retained.
	WriteMessage(ctx context.Context, msg []byte) error
	// Close closes the connection.
	Close() error
	// Info describes the connection and, when known, the authenticated peer.
	Info() Info
}

// ErrReadInterrupted is returned by ReadMessage after InterruptRead, when
// the connection was waiting for input with nothing buffered.
var ErrReadInterrupted = errors.New("transport: read interrupted")

// ReadInterrupter is implemented by connections whose waiting reader can
// be sent away without harm to the connection: a server uses it to move
// the wait of a quiet connection to a goroutine with a small stack.
type ReadInterrupter interface {
	// InterruptRead makes a ReadMessage that is waiting for input, with
	// nothing of a message read yet, return ErrReadInterrupted; a read
	// with part of a message in hand goes on. The interruption applies to
	// the current or next wait, once.
	InterruptRead()
	// WaitInput waits, holding no buffer, until input arrives or the
	// connection ends (then the next read tells how).
	WaitInput() error
}

// InputWatcher may be implemented by a ReadInterrupter whose input is
// read by a goroutine the connection has anyway (a gRPC stream's handler
// reads it): instead of a goroutine of the server waiting for the input of
// a quiet connection, the connection calls back when it arrives.
type InputWatcher interface {
	// WatchInput arranges for f to be called once, on the connection's own
	// reading goroutine or at once, when a message is ready to be read or
	// the input has ended. Nobody reads the connection until then. f must
	// not block.
	WatchInput(f func())
}

// Listener accepts connections for a server.
type Listener interface {
	// Accept waits for the next connection. After Close it returns ErrClosed.
	Accept(ctx context.Context) (Conn, error)
	// Close stops listening; connections already accepted stay open.
	Close() error
	// Addr describes where the listener listens, in the form Dial accepts.
	Addr() string
}

// Info describes a connection.
type Info struct {
	Transport string     // "stdio", "unix", "memory", "http", "ws", "grpc"
	Remote    string     // peer address when known
	Principal *Principal // authenticated peer, nil when none
	// HalfClose says the peer may stop sending and still read: the end of
	// its input does not mean it is gone (stdio, where an agent may close
	// stdin after its last request). On other connections the end of
	// input means the peer left.
	HalfClose bool
}

// Principal is an authenticated identity with roles.
type Principal struct {
	ID    string
	Roles []string
}

// Has reports whether p holds role (or admin, which holds every role).
func (p *Principal) Has(role string) bool {
	if p == nil {
		return false
	}
	for _, r := range p.Roles {
		if r == role || r == "admin" {
			return true
		}
	}
	return false
}

// TooLargeError reports a message over the size limit.
type TooLargeError struct {
	Limit int
	// Skipped is true when the transport discarded the message and the
	// connection can go on; false when the connection must be closed.
	Skipped bool
}

func (e *TooLargeError) Error() string {
	return "transport: message larger than the limit of " + itoa(e.Limit) + " bytes"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
