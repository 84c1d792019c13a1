package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
)

// HandshakeRequest is the params of ahp/handshake.
type HandshakeRequest struct {
	ProtocolVersion string    `json:"protocol_version"`
	AgentInfo       AgentInfo `json:"agent_info"`
	SessionID       string    `json:"session_id"`
	AgentID         string    `json:"agent_id"`
}

// AgentInfo describes the agent framework. Capabilities may be absent on
// the wire (some 2.4 examples omit it); it encodes as an empty list.
type AgentInfo struct {
	Framework    string   `json:"framework"`
	Version      string   `json:"version"`
	Capabilities []string `json:"capabilities"`
}

// HandshakeResponse is the result of ahp/handshake.
type HandshakeResponse struct {
	ProtocolVersion string         `json:"protocol_version"`
	HarnessInfo     HarnessInfo    `json:"harness_info"`
	SessionToken    string         `json:"session_token,omitempty"`
	Config          *HarnessConfig `json:"config,omitempty"`
}

// HarnessInfo describes the harness.
type HarnessInfo struct {
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Capabilities []string `json:"capabilities"`
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

// QueryResponse is the result of ahp/query.
type QueryResponse struct {
	Answer       json.RawMessage `json:"answer"`
	Reason       string          `json:"reason,omitempty"`
	Alternatives []string        `json:"alternatives,omitempty"`
}
