// Package jsonrpc reads and writes JSON-RPC 2.0 messages as AHP uses them:
// requests, notifications and responses whose ids may be any JSON string or
// number and are echoed back unchanged. Decoding keeps params, results and
// ids as raw JSON that alias the input, so nothing is decoded twice.
package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ahp-go/ahp/internal/jsonscan"
)

// Version is the value of the "jsonrpc" member of every message.
const Version = "2.0"

// Standard and AHP error codes (spec section 7.7).
const (
	CodeParseError          = -32700
	CodeInvalidRequest      = -32600
	CodeMethodNotFound      = -32601
	CodeInvalidParams       = -32602
	CodeInternalError       = -32603
	CodeUnsupportedProtocol = -32000
	// CodeTransportError is not sent by harnesses: network transports give
	// it to a request they could not deliver or get an answer for
	// (connection lost, HTTP refusal), so that callers can tell it from the
	// harness's own answers.
	CodeTransportError = -32001
)

// Error is a JSON-RPC error object. It implements error.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Kind says what a Message is.
type Kind uint8

// The kinds of message.
const (
	KindRequest Kind = iota + 1
	KindNotification
	KindResponse
)

// Message is one decoded JSON-RPC message. ID, Params and Result are raw
// JSON; when the message came from Decode they alias its input.
type Message struct {
	Kind   Kind
	ID     json.RawMessage // nil for notifications; "null" is kept as is
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Kind == KindNotification }

// Null is the raw JSON null, used as the id of errors about messages whose
// id could not be read.
var Null = json.RawMessage("null")

// DecodeError is returned by Decode. Code is CodeParseError for input that
// is not JSON and CodeInvalidRequest for JSON that is not a JSON-RPC
// message; ID is the message's id when it could be read (else nil).
type DecodeError struct {
	Code int
	ID   json.RawMessage
	Msg  string
	// Notification is true when the refused message reads as a
	// notification (a method and no id): it must get no answer.
	Notification bool
}

func (e *DecodeError) Error() string { return e.Msg }

// Decode parses one message. The returned Message aliases b.
func Decode(b []byte) (Message, error) {
	var m Message
	var version, errRaw []byte
	var hasMethod, hasResult bool
	var variant, variantOf string // a member named as variantOf in other letter case
	err := jsonscan.Object(b, func(key, val []byte) error {
		switch string(key) {
		case "jsonrpc":
			version = val
		case "id":
			m.ID = val
		case "method":
			s, ok := jsonscan.String(val)
			if !ok {
				return errors.New("method must be a string")
			}
			m.Method = internMethod(s)
			hasMethod = true
		case "params":
			m.Params = val
		case "result":
			m.Result = val
			hasResult = true
		case "error":
			errRaw = val
		default:
			if variantOf == "" {
				if name, ok := jsonscan.CaseVariant(key, members...); ok {
					variant, variantOf = jsonscan.ReportedKey(key), name
				}
			}
		}
		return nil
	})
	// A type assertion, not errors.As: Object returns the *ProfileError
	// itself, and errors.As would move the pointer to the heap.
	if prob, ok := err.(*jsonscan.ProfileError); ok {
		return m, profileError(&m, prob, hasMethod)
	}
	if err != nil {
		if errors.Is(err, jsonscan.ErrSyntax) {
			return m, &DecodeError{Code: CodeParseError, Msg: "Parse error"}
		}
		if errors.Is(err, jsonscan.ErrNotObject) {
			return m, &DecodeError{Code: CodeInvalidRequest, Msg: "Invalid Request: not a JSON object"}
		}
		return m, &DecodeError{Code: CodeInvalidRequest, Msg: "Invalid Request: " + err.Error()}
	}
	if m.ID != nil {
		switch jsonscan.Kind(m.ID) {
		case '"', '0', 'n':
		default:
			m.ID = nil
			return m, &DecodeError{Code: CodeInvalidRequest, Msg: "Invalid Request: id must be a string, a number or null"}
		}
	}
	if variantOf != "" {
		// The id stays when it was read: a variant of "id" itself has no
		// exact "id" beside it (that pair is refused above as case twins).
		return m, &DecodeError{Code: CodeInvalidRequest, ID: m.ID,
			Msg: fmt.Sprintf("Invalid Request: member %q differs from %q only in letter case, which readers treat differently", variant, variantOf)}
	}
	if !jsonscan.Equal(version, Version) {
		return m, &DecodeError{Code: CodeInvalidRequest, ID: m.ID, Msg: `Invalid Request: "jsonrpc" must be "2.0"`}
	}
	switch {
	case hasMethod && (hasResult || errRaw != nil):
		return m, &DecodeError{Code: CodeInvalidRequest, ID: m.ID, Msg: "Invalid Request: a message cannot have both method and result/error"}
	case hasMethod && m.ID == nil:
		m.Kind = KindNotification
	case hasMethod:
		m.Kind = KindRequest
	case hasResult || errRaw != nil:
		m.Kind = KindResponse
		if m.ID == nil {
			return m, &DecodeError{Code: CodeInvalidRequest, Msg: "Invalid Request: response without id"}
		}
		if errRaw != nil && string(errRaw) != "null" {
			m.Error = new(Error)
			if err := json.Unmarshal(errRaw, m.Error); err != nil {
				return m, &DecodeError{Code: CodeInvalidRequest, ID: m.ID, Msg: "Invalid Request: bad error object: " + err.Error()}
			}
		}
	default:
		return m, &DecodeError{Code: CodeInvalidRequest, ID: m.ID, Msg: "Invalid Request: no method, result or error"}
	}
	if m.Params != nil && string(m.Params) == "null" {
		m.Params = nil
	}
	return m, nil
}

// members are the member names of a JSON-RPC message.
var members = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// profileError is the answer to a well-formed message that the I-JSON
// profile refuses (a duplicated member name, invalid UTF-8, an unpaired
// surrogate, a number beyond a double): such a message could be read in
// more than one way, so it is refused as a whole. A problem inside params
// is Invalid params (-32602) and keeps the id; one in the envelope itself
// is a Parse error (-32700), with the id only when the id itself is not
// in doubt.
func profileError(m *Message, prob *jsonscan.ProfileError, hasMethod bool) *DecodeError {
	// The scan reports the first problem only: the id itself must pass the
	// profile too before it is echoed (say a number beyond a double).
	idOK := m.ID != nil && len(prob.Path) > 0 && prob.Path[0] != "id" && jsonscan.Check(m.ID) == nil
	switch jsonscan.Kind(m.ID) {
	case '"', '0', 'n':
	default:
		idOK = false
	}
	de := &DecodeError{Code: CodeParseError, Msg: "Parse error: " + prob.Error() + " (a message must read one way: I-JSON, RFC 7493)"}
	if len(prob.Path) > 1 && prob.Path[0] == "params" {
		de.Code = CodeInvalidParams
		de.Msg = "Invalid params: " + prob.Error() + " (a message must read one way: I-JSON, RFC 7493)"
	}
	if idOK {
		de.ID = m.ID
	}
	de.Notification = hasMethod && m.ID == nil && (len(prob.Path) == 0 || prob.Path[0] != "id")
	m.ID = nil
	return de
}

// internMethod returns a shared copy of the method names AHP uses, so that
// decoding them does not allocate.
func internMethod(s string) string {
	switch s {
	case MethodEvent:
		return MethodEvent
	case MethodHandshake:
		return MethodHandshake
	case MethodBatch:
		return MethodBatch
	case MethodQuery:
		return MethodQuery
	case MethodPing:
		return MethodPing
	}
	return s
}

// The methods of AHP 2.4.
const (
	MethodHandshake = "ahp/handshake"
	MethodEvent     = "ahp/event"
	MethodQuery     = "ahp/query"
	MethodBatch     = "ahp/batch"
	MethodPing      = "ping"
)
