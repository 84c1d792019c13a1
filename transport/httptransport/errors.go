package httptransport

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/http"
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
	// Message is the "message" of a JSON body (an AHP harness at its
	// connection limit explains itself so); empty when there was none.
	Message string
}

// Error names the status and the harness's message, or the start of its
// body when it sent no JSON message.
func (e *StatusError) Error() string {
	switch {
	case e.Message != "":
		return "http: harness answered " + e.Status + ": " + e.Message
	case e.Body == "":
		return "http: harness answered " + e.Status
	}
	return "http: harness answered " + e.Status + ": " + e.Body
}

// newStatusError describes a response of status code with the start of
// its body.
func newStatusError(resp *http.Response, snippet []byte) *StatusError {
	snippet = bytes.TrimSpace(snippet)
	e := &StatusError{Code: resp.StatusCode, Status: resp.Status, Body: string(snippet)}
	var body struct {
		Message string `json:"message"`
	}
	if len(snippet) > 0 && snippet[0] == '{' && json.Unmarshal(snippet, &body) == nil {
		e.Message = body.Message // json has made it valid UTF-8
	}
	return e
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
