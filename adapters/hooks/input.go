package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// MaxInputBytes bounds the hook input read from a tool (a file write's
// whole content can be in tool_input).
const MaxInputBytes = 16 << 20

// Input is a hook input as the three tools write it: the union of their
// documented fields. Unknown fields are ignored.
type Input struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path,omitempty"`
	Cwd            string          `json:"cwd,omitempty"`
	PermissionMode string          `json:"permission_mode,omitempty"` // Claude Code, Codex
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name,omitempty"`
	ToolInput      json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID      string          `json:"tool_use_id,omitempty"`
	ToolResponse   json.RawMessage `json:"tool_response,omitempty"`
	MCPContext     json.RawMessage `json:"mcp_context,omitempty"` // Gemini CLI
	Prompt         string          `json:"prompt,omitempty"`
	PromptResponse string          `json:"prompt_response,omitempty"` // Gemini CLI AfterAgent
	LastMessage    string          `json:"last_assistant_message,omitempty"`
	Source         string          `json:"source,omitempty"` // SessionStart
	Reason         string          `json:"reason,omitempty"` // SessionEnd
	AgentID        string          `json:"agent_id,omitempty"`
	AgentType      string          `json:"agent_type,omitempty"`
	TurnID         string          `json:"turn_id,omitempty"` // Codex
	Model          string          `json:"model,omitempty"`
	Error          string          `json:"error,omitempty"` // PostToolUseFailure
	// Home and User are not read from the tool: Handle sets them from
	// Options, and Event puts them in pre_action payloads.
	Home string `json:"-"`
	User string `json:"-"`
}

// ErrInput is wrapped by the errors of ReadInput.
var ErrInput = errors.New("hook input")

// ReadInput reads and decodes one hook input, at most MaxInputBytes.
func ReadInput(r io.Reader) (*Input, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read: %v", ErrInput, err)
	}
	return ParseInput(b)
}

// ParseInput decodes one hook input.
func ParseInput(b []byte) (*Input, error) {
	if len(b) > MaxInputBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrInput, MaxInputBytes)
	}
	var in Input
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %v", ErrInput, err)
	}
	if in.HookEventName == "" {
		return nil, fmt.Errorf("%w: hook_event_name is missing", ErrInput)
	}
	if t := bytes.TrimSpace(in.ToolInput); len(t) > 0 && t[0] != '{' && !bytes.Equal(t, []byte("null")) {
		return nil, fmt.Errorf("%w: tool_input is not an object", ErrInput)
	}
	return &in, nil
}

// Event builds the AHP event for in, or returns nil when the event is not
// one the adapter handles. The tool's session id is the AHP session_id;
// the agent id is the tool's name, with the sub-agent's id after a colon
// (depth 1) for events a Claude Code sub-agent raised.
func Event(t Tool, in *Input, now time.Time) (*protocol.Event, error) {
	kind := KindOf(t, in.HookEventName)
	var (
		typ     protocol.EventType
		payload map[string]any
	)
	args := json.RawMessage(`{}`)
	if t := bytes.TrimSpace(in.ToolInput); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		args = in.ToolInput
	}
	switch kind {
	case KindPreTool:
		typ = protocol.EventPreAction
		payload = map[string]any{"action_type": "tool_call", "tool_name": in.ToolName, "arguments": args}
		if in.ToolUseID != "" {
			payload["tool_use_id"] = in.ToolUseID
		}
		if in.PermissionMode != "" {
			payload["permission_mode"] = in.PermissionMode
		}
		if len(in.MCPContext) > 0 {
			payload["mcp_context"] = in.MCPContext
		}
		if in.Home != "" {
			payload["home"] = in.Home
		}
		if in.User != "" {
			payload["user"] = in.User
		}
	case KindPostTool:
		typ = protocol.EventPostAction
		payload = map[string]any{"action_type": "tool_call", "tool_name": in.ToolName, "arguments": args,
			"success": in.HookEventName != "PostToolUseFailure" && in.Error == ""}
		if len(in.ToolResponse) > 0 {
			payload["result"] = in.ToolResponse
		}
		if in.Error != "" {
			payload["error"] = in.Error
		}
		if in.ToolUseID != "" {
			payload["tool_use_id"] = in.ToolUseID
		}
	case KindPrompt:
		typ = protocol.EventPrePrompt
		payload = map[string]any{"prompt": in.Prompt}
	case KindSessionStart, KindSubagentStart:
		typ = protocol.EventSessionStart
		payload = map[string]any{}
		if in.Source != "" {
			payload["source"] = in.Source
		}
		if in.Model != "" {
			payload["model"] = in.Model
		}
		if in.AgentType != "" {
			payload["agent_type"] = in.AgentType
		}
	case KindSessionEnd:
		typ = protocol.EventSessionEnd
		payload = map[string]any{}
		if in.Reason != "" {
			payload["reason"] = in.Reason
		}
	case KindStop:
		typ = protocol.EventPostResponse
		payload = map[string]any{"hook_event": in.HookEventName}
		if r := firstNonEmpty(in.PromptResponse, in.LastMessage); r != "" {
			payload["response"] = r
		}
	default:
		return nil, nil
	}
	if in.Cwd != "" {
		payload["cwd"] = in.Cwd
	}
	payload["agent"] = string(t)
	raw, err := marshalPlain(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	meta, _ := json.Marshal(map[string]any{"hook": map[string]string{"tool": string(t), "event": in.HookEventName}})
	ev := &protocol.Event{
		EventType: typ,
		SessionID: SessionID(t, in),
		AgentID:   string(t),
		Timestamp: now.UTC().Format(time.RFC3339Nano),
		Payload:   raw,
		Metadata:  meta,
	}
	if in.AgentID != "" {
		ev.AgentID = string(t) + ":" + in.AgentID
		ev.Depth = 1
	}
	return ev, nil
}

// SessionID returns the AHP session id of a hook input: the tool's own
// session id, or "TOOL-unknown" when the tool sent none.
func SessionID(t Tool, in *Input) string {
	if in.SessionID != "" {
		return in.SessionID
	}
	return string(t) + "-unknown"
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// marshalPlain is json.Marshal without the escaping of <, > and & (kept
// by encoding/json for HTML): a command's "&&" stays "&&" in the event,
// its audit record and the approval prompt.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
