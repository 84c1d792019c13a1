package hooks

import (
	"encoding/json"
)

// The answers are built with encoding/json from these shapes, so that the
// bytes are exactly the documented fields and nothing else.

type hookSpecific struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}

type claudeAnswer struct {
	Decision           string        `json:"decision,omitempty"`
	Reason             string        `json:"reason,omitempty"`
	HookSpecificOutput *hookSpecific `json:"hookSpecificOutput,omitempty"`
}

type geminiSpecific struct {
	ToolInput json.RawMessage `json:"tool_input,omitempty"`
}

type geminiAnswer struct {
	Decision           string          `json:"decision,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	HookSpecificOutput *geminiSpecific `json:"hookSpecificOutput,omitempty"`
}

var noOpinion = []byte("{}")

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// The shapes above always encode; a failure is a bug, and the
		// safe answer is still a deny.
		return []byte(`{"decision":"block","reason":"ahp: internal error encoding the answer"}`)
	}
	return b
}

// denyAnswer blocks the action of a hook event of kind k.
func denyAnswer(t Tool, k Kind, event, reason string) []byte {
	if reason == "" {
		reason = "ahp: blocked"
	}
	if t == Gemini {
		return mustJSON(geminiAnswer{Decision: "deny", Reason: reason})
	}
	if k == KindPreTool {
		return mustJSON(claudeAnswer{HookSpecificOutput: &hookSpecific{HookEventName: event, PermissionDecision: "deny", PermissionDecisionReason: reason}})
	}
	return mustJSON(claudeAnswer{Decision: "block", Reason: reason})
}

// askAnswer hands a Claude Code tool call to its own permission prompt.
func askAnswer(event, reason string) []byte {
	return mustJSON(claudeAnswer{HookSpecificOutput: &hookSpecific{HookEventName: event, PermissionDecision: "ask", PermissionDecisionReason: reason}})
}

// approvedAnswer lets a tool call that a human approved run.
func approvedAnswer(t Tool, k Kind, event, reason string) []byte {
	if k != KindPreTool {
		return noOpinion
	}
	switch t {
	case ClaudeCode:
		return mustJSON(claudeAnswer{HookSpecificOutput: &hookSpecific{HookEventName: event, PermissionDecision: "allow", PermissionDecisionReason: reason}})
	case Gemini:
		return mustJSON(geminiAnswer{Decision: "allow"})
	}
	// Codex accepts allow only with updatedInput: no opinion lets the
	// call go on.
	return noOpinion
}

// modifyAnswer runs the tool call with args instead of the model's.
func modifyAnswer(t Tool, event string, args json.RawMessage) []byte {
	if t == Gemini {
		return mustJSON(geminiAnswer{Decision: "allow", HookSpecificOutput: &geminiSpecific{ToolInput: args}})
	}
	return mustJSON(claudeAnswer{HookSpecificOutput: &hookSpecific{HookEventName: event, PermissionDecision: "allow",
		PermissionDecisionReason: "ahp: arguments modified by the harness", UpdatedInput: args}})
}
