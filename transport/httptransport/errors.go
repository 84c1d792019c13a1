package httptransport

import (
	"encoding/json"
	"errors"
	"net"
	"strconv"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/transport"
)

// StatusError is an HTTP answer other than 200, 202 or 204: a refusal
// (401, 403), a body the harness would not take (413, 415) or a failure.
type StatusError struct {
	Code   int    // HTTP status code
	Status string // status line, as "401 Unauthorized"
	Body   string // the start of the body the harness sent, if any
}

func (e *StatusError) Error() string {
	if e.Body == "" {
		return "http: harness answered " + e.Status
	}
	return "http: harness answered " + e.Status + ": " + e.Body
}

// CodeTransportError is the JSON-RPC error code of the responses this
// package makes up locally when a request fails at the HTTP level. It is
// in the range JSON-RPC reserves for implementation-defined server errors
// and differs from AHP's -32000.
const CodeTransportError = jsonrpc.CodeTransportError

// errorResponse answers a failed request locally. Its data carries the
// HTTP status when there was one: {"http_status": 401}.
func errorResponse(id json.RawMessage, err error) []byte {
	e := &jsonrpc.Error{Code: CodeTransportError, Message: err.Error()}
	var se *StatusError
	if errors.As(err, &se) {
		e.Data = json.RawMessage(`{"http_status":` + strconv.Itoa(se.Code) + `}`)
	}
	return jsonrpc.AppendError(nil, id, e)
}

// answered reports whether err means the harness answered with something
// other than a JSON-RPC message: an error status, a body over the limit,
// or a TLS alert (with TLS 1.3 a refused client certificate is only
// reported after the request was written).
func answered(err error) bool {
	var se *StatusError
	var tl *transport.TooLargeError
	var oe *net.OpError
	return errors.As(err, &se) || errors.As(err, &tl) || errors.As(err, &oe) && oe.Op == "remote error"
}
