package hooks

import (
	"fmt"
	"strings"
)

// Tool names a supported coding agent.
type Tool string

// The supported tools.
const (
	ClaudeCode Tool = "claude-code"
	Codex      Tool = "codex"
	Gemini     Tool = "gemini"
)

// Tools lists the supported tools.
var Tools = []Tool{ClaudeCode, Codex, Gemini}

// ParseTool reads a tool name as given on the command line.
func ParseTool(s string) (Tool, error) {
	switch strings.ToLower(s) {
	case "claude-code", "claude", "claudecode":
		return ClaudeCode, nil
	case "codex", "codex-cli":
		return Codex, nil
	case "gemini", "gemini-cli":
		return Gemini, nil
	}
	return "", fmt.Errorf("unknown tool %q (want claude-code, codex or gemini)", s)
}

// Kind is what a hook event means, whatever the tool calls it.
type Kind int

// The kinds of hook event.
const (
	KindUnknown       Kind = iota // not handled: answered with no opinion
	KindPreTool                   // before a tool call: pre_action
	KindPostTool                  // after a tool call: post_action
	KindPrompt                    // a user prompt: pre_prompt
	KindSessionStart              // session_start
	KindSessionEnd                // session_end
	KindStop                      // the agent finished a turn: post_response
	KindSubagentStart             // a sub-agent started: session_start at depth 1
)

// eventKinds maps each tool's hook event names to their kind.
var eventKinds = map[Tool]map[string]Kind{
	ClaudeCode: {
		"PreToolUse": KindPreTool, "PostToolUse": KindPostTool, "PostToolUseFailure": KindPostTool,
		"UserPromptSubmit": KindPrompt, "SessionStart": KindSessionStart, "SessionEnd": KindSessionEnd,
		"Stop": KindStop, "SubagentStop": KindStop, "SubagentStart": KindSubagentStart,
	},
	Codex: {
		"PreToolUse": KindPreTool, "PostToolUse": KindPostTool, "UserPromptSubmit": KindPrompt,
		"SessionStart": KindSessionStart, "Stop": KindStop,
	},
	Gemini: {
		"BeforeTool": KindPreTool, "AfterTool": KindPostTool, "BeforeAgent": KindPrompt,
		"SessionStart": KindSessionStart, "SessionEnd": KindSessionEnd, "AfterAgent": KindStop,
	},
}

// KindOf returns the kind of the tool's hook event name.
func KindOf(t Tool, event string) Kind { return eventKinds[t][event] }

// Events returns the hook event names of t that the adapter handles, in a
// stable order (the order the installer writes them).
func Events(t Tool) []string {
	switch t {
	case ClaudeCode:
		return []string{"PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "SessionEnd", "Stop", "SubagentStart", "SubagentStop"}
	case Codex:
		return []string{"PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "Stop"}
	case Gemini:
		return []string{"BeforeTool", "AfterTool", "BeforeAgent", "SessionStart", "SessionEnd", "AfterAgent"}
	}
	return nil
}
