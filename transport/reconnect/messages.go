package reconnect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/ahp-go/ahp/internal/jsonscan"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/transport"
)

const methodHandshake = jsonrpc.MethodHandshake

var errStop = errors.New("stop")

// peek reads the id and method of an outgoing message without decoding it,
// stopping at the first two members it needs (which the client writes
// first). Malformed input at worst yields an id that matches nothing.
// isReq is true for a request (a message with both).
func peek(msg []byte) (id, method string, isReq bool) {
	if id, method, ok := peekFast(msg); ok {
		return id, method, true
	}
	var hasID, hasMethod bool
	_ = jsonscan.ObjectValid(msg, func(key, val []byte) error {
		switch string(key) {
		case "id":
			id, hasID = string(val), true
		case "method":
			method, _ = jsonscan.String(val)
			hasMethod = true
		}
		if hasID && hasMethod {
			return errStop
		}
		return nil
	})
	return id, method, hasID && hasMethod && id != "null"
}

// received forgets the pending request a response answers. Like peek, it
// scans only up to the id.
func (c *Conn) received(msg []byte) {
	c.mu.Lock()
	n := len(c.pending)
	c.mu.Unlock()
	if n == 0 {
		return
	}
	id, ok := numericID(msg)
	if ok && bytes.HasPrefix(msg[len(msgPrefix)+len(id):], methodKey[:len(`,"method"`)]) {
		return // a request, not a response
	}
	if !ok {
		_ = jsonscan.ObjectValid(msg, func(key, val []byte) error {
			switch string(key) {
			case "method":
				return errStop // a request or notification, not a response
			case "id":
				id = val
				return errStop
			}
			return nil
		})
	}
	if id == nil {
		return
	}
	c.mu.Lock()
	delete(c.pending, string(id))
	c.mu.Unlock()
}

// The form jsonrpc.AppendRequest and the server write: version first,
// then the id.
var msgPrefix = []byte(`{"jsonrpc":"2.0","id":`)

// numericID reads a number id right after msgPrefix.
func numericID(msg []byte) ([]byte, bool) {
	if !bytes.HasPrefix(msg, msgPrefix) {
		return nil, false
	}
	rest := msg[len(msgPrefix):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n == len(rest) || rest[n] != ',' {
		return nil, false
	}
	return rest[:n], true
}

var methodKey = []byte(`,"method":"`)

// peekFast reads the id and method of a request in the form the client
// writes ({"jsonrpc":"2.0","id":N,"method":"M",...}).
func peekFast(msg []byte) (id, method string, ok bool) {
	raw, ok := numericID(msg)
	if !ok {
		return "", "", false
	}
	rest := msg[len(msgPrefix)+len(raw):]
	if !bytes.HasPrefix(rest, methodKey) {
		return "", "", false
	}
	rest = rest[len(methodKey):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", "", false
	}
	return string(raw), string(rest[:end]), true
}

// lostMessage is the text of the error that answers a request whose
// connection was lost. It names no cause: transport errors may quote
// addresses that carry credentials.
const lostMessage = "connection to the harness lost before the response arrived; the request may or may not have been handled"

// CodeTransportError is the JSON-RPC error code of the responses made up
// locally for requests whose connection was lost. It is the code
// httptransport uses for its local errors, in the range JSON-RPC reserves
// for implementation-defined server errors, apart from AHP's -32000.
const CodeTransportError = jsonrpc.CodeTransportError

// lostResponse is the JSON-RPC error answering request id after a loss.
func lostResponse(id string) []byte {
	return jsonrpc.AppendError(nil, []byte(id), &jsonrpc.Error{Code: CodeTransportError, Message: lostMessage})
}

// maxReplayReads bounds the messages read while waiting for the answer to
// a replayed handshake.
const maxReplayReads = 64

// replayHandshake sends hs again on conn under a fresh id and waits for
// its answer, so that the new connection starts as the old one did. A
// JSON-RPC error answer is permanent: the harness refuses this agent now.
func replayHandshake(ctx context.Context, conn transport.Conn, hs []byte, n int64) error {
	m, err := jsonrpc.Decode(hs)
	if err != nil {
		return nil // not ours to judge: the original was sent as is
	}
	id := strconv.AppendQuote(nil, "ahp-reconnect-"+strconv.FormatInt(n, 10))
	req := jsonrpc.AppendRequest(nil, id, m.Method, m.Params)
	if err := conn.WriteMessage(ctx, req); err != nil {
		return fmt.Errorf("reconnect: replay handshake: %w", err)
	}
	for range maxReplayReads {
		msg, err := conn.ReadMessage(ctx)
		if err != nil {
			return fmt.Errorf("reconnect: replay handshake: %w", err)
		}
		r, err := jsonrpc.Decode(msg)
		if err != nil || r.Kind != jsonrpc.KindResponse || string(r.ID) != string(id) {
			continue
		}
		if r.Error != nil {
			return Permanent(fmt.Errorf("reconnect: the harness refused the replayed handshake: %w", r.Error))
		}
		return nil
	}
	return errors.New("reconnect: replay handshake: no answer")
}
