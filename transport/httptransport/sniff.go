package httptransport

import (
	"bytes"

	"github.com/ahp-go/ahp/jsonrpc"
)

var (
	requestStart       = []byte(`{"jsonrpc":"2.0","id":`)
	notificationPrefix = []byte(`{"jsonrpc":"2.0","method":`)
)

// classify says whether msg is a request and returns its id. Messages in
// the exact form jsonrpc.AppendRequest writes with the ids package client
// sends (digits, bare or as a string: "7") are recognised by their prefix;
// anything else is decoded.
func classify(msg []byte) (id []byte, request bool) {
	if rest, ok := bytes.CutPrefix(msg, requestStart); ok {
		q := 0
		if len(rest) > 0 && rest[0] == '"' {
			q = 1
		}
		n := q
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n > q && n-q <= 20 && (q == 0 || n < len(rest) && rest[n] == '"') {
			n += q
			if bytes.HasPrefix(rest[n:], []byte(`,"method":`)) {
				return rest[:n], true
			}
		}
	}
	if bytes.HasPrefix(msg, notificationPrefix) {
		return nil, false
	}
	m, err := jsonrpc.Decode(msg)
	if err != nil || m.Kind != jsonrpc.KindRequest {
		return nil, false
	}
	return m.ID, true
}
