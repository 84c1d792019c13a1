package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
)

// HandshakeRequest is the params of ahp/handshake.
//
// The Rust 2.4 client sends every field; the 2.4 README's curl, wscat and
// Python snippets send only protocol_version and agent_info (framework and
// version). Decoding accepts both: session_id and agent_id may be absent
// (they decode as ""), and a server fills them in (see Defaulted).
type HandshakeRequest struct {
	ProtocolVersion string    `json:"protocol_version"`
	AgentInfo       AgentInfo `json:"agent_info"`
	SessionID       string    `json:"session_id"`
	AgentID         string    `json:"agent_id"`
	// Defaulted names the fields the server filled in because the agent
	// left them out ("session_id", "agent_id"); it is not on the wire.
	Defaulted []string `json:"-"`
}

// UnmarshalJSON checks the required fields: protocol_version and
// agent_info. session_id and agent_id are optional, but must be strings
// when present.
func (r *HandshakeRequest) UnmarshalJSON(b []byte) error {
	type plain HandshakeRequest
	return strictDecode(b, "handshake", []string{"protocol_version", "agent_info"}, (*plain)(r))
}

// AgentInfo describes the agent framework. Capabilities may be absent on
// the wire (some 2.4 examples omit it); it encodes as an empty list.
type AgentInfo struct {
	Framework    string   `json:"framework"`
	Version      string   `json:"version"`
	Capabilities []string `json:"capabilities"`
}

// UnmarshalJSON checks the required fields; capabilities may be absent.
func (a *AgentInfo) UnmarshalJSON(b []byte) error {
	type plain AgentInfo
	return strictDecode(b, "agent_info", []string{"framework", "version"}, (*plain)(a))
}

// MarshalJSON writes capabilities as [] when empty.
func (a AgentInfo) MarshalJSON() ([]byte, error) {
	type plain AgentInfo
	a.Capabilities = emptyIfNil(a.Capabilities)
	return json.Marshal(plain(a))
}

// HandshakeResponse is the result of ahp/handshake.
type HandshakeResponse struct {
	ProtocolVersion string         `json:"protocol_version"`
	HarnessInfo     HarnessInfo    `json:"harness_info"`
	SessionToken    string         `json:"session_token,omitempty"`
	Config          *HarnessConfig `json:"config,omitempty"`
}

// UnmarshalJSON checks the required fields.
func (r *HandshakeResponse) UnmarshalJSON(b []byte) error {
	type plain HandshakeResponse
	return strictDecode(b, "handshake response", []string{"protocol_version", "harness_info"}, (*plain)(r))
}

// HarnessInfo describes the harness. Capabilities may be absent on the wire
// (as in AgentInfo); it encodes as an empty list.
type HarnessInfo struct {
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Capabilities []string `json:"capabilities"`
}

// UnmarshalJSON checks the required fields; capabilities may be absent.
func (h *HarnessInfo) UnmarshalJSON(b []byte) error {
	type plain HarnessInfo
	return strictDecode(b, "harness_info", []string{"name", "version"}, (*plain)(h))
}

// MarshalJSON writes capabilities as [] when empty.
func (h HarnessInfo) MarshalJSON() ([]byte, error) {
	type plain HarnessInfo
	h.Capabilities = emptyIfNil(h.Capabilities)
	return json.Marshal(plain(h))
}

// HarnessConfig carries the limits a harness announces in the handshake.
type HarnessConfig struct {
	TimeoutMs *uint64 `json:"timeout_ms,omitempty"`
	BatchSize *uint64 `json:"batch_size,omitempty"`
	MaxDepth  *uint32 `json:"max_depth,omitempty"`
}

// Defaults of the 2.4 server.
const (
	DefaultTimeoutMs = 10000
	DefaultBatchSize = 100
	DefaultMaxDepth  = 10
)

// DefaultCapabilities are the capabilities the 2.4 server announces.
var DefaultCapabilities = []string{
	"pre_action", "post_action", "pre_prompt", "query", "batch",
	"run_lifecycle", "task_list", "verification",
}

// ErrUnsupportedVersion is returned by CheckVersion; its message is the one
// the 2.4 server puts in the -32000 error.
type ErrUnsupportedVersion struct{ Version string }

// Error returns the message the 2.4 server sends with code -32000.
func (e *ErrUnsupportedVersion) Error() string {
	return fmt.Sprintf("Unsupported protocol version: %s", e.Version)
}

// CheckVersion reports whether v is compatible with this implementation: its
// major version (the text before the first '.') must be "2".
func CheckVersion(v string) error {
	major, _, _ := strings.Cut(v, ".")
	if major != "2" {
		return &ErrUnsupportedVersion{Version: v}
	}
	return nil
}

// QueryRequest is the params of ahp/query.
type QueryRequest struct {
	SessionID string          `json:"session_id"`
	AgentID   string          `json:"agent_id"`
	QueryType string          `json:"query_type"`
	Payload   json.RawMessage `json:"payload"`
}

// UnmarshalJSON checks the required fields; payload may be any JSON value.
func (q *QueryRequest) UnmarshalJSON(b []byte) error {
	type plain QueryRequest
	return decodeObject(b, "query", []string{"session_id", "agent_id", "query_type"}, []string{"payload"}, (*plain)(q))
}

// QueryResponse is the result of ahp/query.
type QueryResponse struct {
	Answer       json.RawMessage `json:"answer"`
	Reason       string          `json:"reason,omitempty"`
	Alternatives []string        `json:"alternatives,omitempty"`
}

// UnmarshalJSON checks that answer is there (any JSON value, null included).
func (q *QueryResponse) UnmarshalJSON(b []byte) error {
	type plain QueryResponse
	return decodeObject(b, "query response", nil, []string{"answer"}, (*plain)(q))
}
