package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// fakeHarness answers with a scripted decision and records what it got.
type fakeHarness struct {
	mu         sync.Mutex
	decision   protocol.Decision
	decideErr  error
	confirm    protocol.ConfirmationDecision
	confirmErr error
	hold       bool // Confirm waits until its context ends
	notifyErr  error
	events     []*protocol.Event
}

func (f *fakeHarness) record(ev *protocol.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := *ev
	f.events = append(f.events, &c)
}

func (f *fakeHarness) Decide(_ context.Context, ev *protocol.Event) (protocol.Decision, error) {
	f.record(ev)
	return f.decision, f.decideErr
}

func (f *fakeHarness) Confirm(ctx context.Context, ev *protocol.Event) (protocol.ConfirmationDecision, error) {
	f.record(ev)
	if f.hold {
		<-ctx.Done()
		return protocol.ConfirmationDecision{}, ctx.Err()
	}
	return f.confirm, f.confirmErr
}

func (f *fakeHarness) Notify(_ context.Context, ev *protocol.Event) error {
	f.record(ev)
	return f.notifyErr
}

func fixture(t *testing.T, tool Tool, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", string(tool), name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var fixedNow = func() time.Time { return time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC) }

const (
	claudeDeny  = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"ahp: blocked by the harness: no recursive deletes"}}`
	geminiDeny  = `{"decision":"deny","reason":"ahp: blocked by the harness: no recursive deletes"}`
	modifiedCmd = `{"command":"rm -rf ./build","description":"Remove the build directory"}`
)

func modifyDecision(args string) protocol.Decision {
	return protocol.Modify(json.RawMessage(`{"action_type":"tool_call","tool_name":"TOOL","arguments":` + args + `}`))
}

// TestPreToolAnswers checks the exact answer of each tool's pre-tool hook
// for every decision the harness can give.
func TestPreToolAnswers(t *testing.T) {
	type tc struct {
		name      string
		tool      Tool
		fixture   string
		toolName  string
		h         *fakeHarness
		want      string
		exit      int
		confirmed bool // a confirmation went to the approval queue
	}
	block := protocol.Block("no recursive deletes")
	esc := protocol.Decision{Kind: protocol.DecisionEscalate, Reason: "deletes need a human"}
	cases := []tc{
		// allow: no opinion, the tool's own permission rules still apply.
		{"claude allow", ClaudeCode, "PreToolUse", "Bash", &fakeHarness{decision: protocol.Allow()}, `{}`, 0, false},
		{"codex allow", Codex, "PreToolUse", "Bash", &fakeHarness{decision: protocol.Allow()}, `{}`, 0, false},
		{"gemini allow", Gemini, "BeforeTool", "run_shell_command", &fakeHarness{decision: protocol.Allow()}, `{}`, 0, false},
		// block
		{"claude block", ClaudeCode, "PreToolUse", "Bash", &fakeHarness{decision: block}, claudeDeny, 0, false},
		{"codex block", Codex, "PreToolUse", "Bash", &fakeHarness{decision: block}, claudeDeny, 0, false},
		{"gemini block", Gemini, "BeforeTool", "run_shell_command", &fakeHarness{decision: block}, geminiDeny, 0, false},
		// modify
		{"claude modify", ClaudeCode, "PreToolUse", "Bash", &fakeHarness{decision: modifyDecision(modifiedCmd)},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ahp: arguments modified by the harness","updatedInput":` + modifiedCmd + `}}`, 0, false},
		{"codex modify", Codex, "PreToolUse", "Bash", &fakeHarness{decision: modifyDecision(`{"command":"rm -rf ./build"}`)},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ahp: arguments modified by the harness","updatedInput":{"command":"rm -rf ./build"}}}`, 0, false},
		{"gemini modify", Gemini, "BeforeTool", "run_shell_command", &fakeHarness{decision: modifyDecision(modifiedCmd)},
			`{"decision":"allow","hookSpecificOutput":{"tool_input":` + modifiedCmd + `}}`, 0, false},
		{"gemini modify removing an argument fails closed", Gemini, "BeforeTool", "run_shell_command", &fakeHarness{decision: modifyDecision(`{"command":"ls"}`)},
			`{"decision":"deny","reason":"ahp: the harness modified the arguments by removing description, which Gemini CLI would keep (it merges arguments); failing closed"}`, 2, false},
		{"modify of the tool name fails closed", ClaudeCode, "PreToolUse", "Write", &fakeHarness{decision: modifyDecision(`{"command":"ls"}`)},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"ahp: the harness modified the tool name (Bash to Write), which hooks cannot do; failing closed"}}`, 2, false},
		// defer
		{"codex defer", Codex, "PreToolUse", "Bash", &fakeHarness{decision: protocol.Decision{Kind: protocol.DecisionDefer, Reason: "rate limited", RetryAfterMs: 5000}},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"ahp: deferred by the harness: rate limited; retry in 5000 ms"}}`, 0, false},
		// escalate, Claude Code in a mode that prompts: its own ask.
		{"claude escalate (default mode) asks", ClaudeCode, "PreToolUse", "Bash", &fakeHarness{decision: esc},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"ahp: needs your approval: deletes need a human"}}`, 0, false},
		// escalate where ask is not safe: the approval queue decides.
		{"claude escalate (bypassPermissions) approved", ClaudeCode, "PreToolUse-bypass", "Bash", &fakeHarness{decision: esc, confirm: protocol.ConfirmationDecision{Decision: "approve"}},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ahp: approved by a human: deletes need a human"}}`, 0, true},
		{"claude escalate (bypassPermissions) rejected", ClaudeCode, "PreToolUse-bypass", "Bash", &fakeHarness{decision: esc, confirm: protocol.ConfirmationDecision{Decision: "reject", Reason: "not today"}},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"ahp: rejected by an approver: not today"}}`, 0, true},
		{"claude escalate (bypassPermissions) unanswered", ClaudeCode, "PreToolUse-bypass", "Bash", &fakeHarness{decision: esc, confirm: protocol.ConfirmationDecision{Decision: "escalate"}},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"ahp: approval needed (deletes need a human): no approver answered in time; ask one to answer it with ` + "`ahp approvals`" + ` and retry"}}`, 0, true},
		{"codex escalate approved", Codex, "PreToolUse", "Bash", &fakeHarness{decision: esc, confirm: protocol.ConfirmationDecision{Decision: "approve"}}, `{}`, 0, true},
		{"codex escalate unanswered", Codex, "PreToolUse", "Bash", &fakeHarness{decision: esc, hold: true},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"ahp: approval needed (deletes need a human): no approver answered in time; ask one to answer it with ` + "`ahp approvals`" + ` and retry"}}`, 0, true},
		{"gemini escalate approved", Gemini, "BeforeTool", "run_shell_command", &fakeHarness{decision: esc, confirm: protocol.ConfirmationDecision{Decision: "approve"}}, `{"decision":"allow"}`, 0, true},
		{"gemini escalate unanswered", Gemini, "BeforeTool", "run_shell_command", &fakeHarness{decision: esc, confirm: protocol.ConfirmationDecision{Decision: "escalate"}},
			`{"decision":"deny","reason":"ahp: approval needed (deletes need a human): no approver answered in time; ask one to answer it with ` + "`ahp approvals`" + ` and retry"}`, 0, true},
		{"gemini escalate, queue unreachable", Gemini, "BeforeTool", "run_shell_command", &fakeHarness{decision: esc, confirmErr: errors.New("connection reset")},
			`{"decision":"deny","reason":"ahp: approval needed (deletes need a human) but the approval queue could not be reached: connection reset"}`, 0, true},
		// what cannot be mapped fails closed
		{"unknown decision", Codex, "PreToolUse", "Bash", &fakeHarness{decision: protocol.Decision{Kind: "maybe"}},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"ahp: the harness answered \"maybe\", which cannot be mapped; failing closed"}}`, 2, false},
		{"harness error", Gemini, "BeforeTool", "run_shell_command", &fakeHarness{decideErr: errors.New("client: timed out waiting for the harness")},
			`{"decision":"deny","reason":"ahp: no decision from the harness, failing closed: client: timed out waiting for the harness"}`, 2, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.h.decision.Kind == protocol.DecisionModify {
				c.h.decision.ModifiedPayload = json.RawMessage(replaceTool(string(c.h.decision.ModifiedPayload), c.toolName))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			r := Handle(ctx, c.tool, fixture(t, c.tool, c.fixture), c.h, Options{Now: fixedNow, Margin: time.Second})
			if string(r.Stdout) != c.want || r.Exit != c.exit {
				t.Fatalf("got exit %d\n%s\nwant exit %d\n%s", r.Exit, r.Stdout, c.exit, c.want)
			}
			if !json.Valid(r.Stdout) {
				t.Fatalf("stdout is not JSON: %s", r.Stdout)
			}
			ev := c.h.events[0]
			if ev.EventType != protocol.EventPreAction {
				t.Fatalf("first event %s, want pre_action", ev.EventType)
			}
			var p struct {
				ActionType string          `json:"action_type"`
				ToolName   string          `json:"tool_name"`
				Arguments  json.RawMessage `json:"arguments"`
			}
			if err := json.Unmarshal(ev.Payload, &p); err != nil || p.ActionType != "tool_call" || p.ToolName == "" || len(p.Arguments) == 0 {
				t.Fatalf("pre_action payload %s", ev.Payload)
			}
			confirmed := len(c.h.events) == 2 && c.h.events[1].EventType == protocol.EventConfirmation
			if confirmed != c.confirmed {
				t.Fatalf("confirmation sent: %v, want %v (events %d)", confirmed, c.confirmed, len(c.h.events))
			}
		})
	}
}

func replaceTool(s, tool string) string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal([]byte(s), &m)
	m["tool_name"], _ = json.Marshal(tool)
	b, _ := json.Marshal(m)
	return string(b)
}

// TestPromptAnswers checks each tool's prompt hook.
func TestPromptAnswers(t *testing.T) {
	cases := []struct {
		tool    Tool
		fixture string
		d       protocol.Decision
		want    string
		exit    int
	}{
		{ClaudeCode, "UserPromptSubmit", protocol.Allow(), `{}`, 0},
		{ClaudeCode, "UserPromptSubmit", protocol.Block("secrets in the prompt"), `{"decision":"block","reason":"ahp: blocked by the harness: secrets in the prompt"}`, 0},
		{Codex, "UserPromptSubmit", protocol.Block("secrets in the prompt"), `{"decision":"block","reason":"ahp: blocked by the harness: secrets in the prompt"}`, 0},
		{Gemini, "BeforeAgent", protocol.Block("secrets in the prompt"), `{"decision":"deny","reason":"ahp: blocked by the harness: secrets in the prompt"}`, 0},
		{Gemini, "BeforeAgent", protocol.Allow(), `{}`, 0},
		{ClaudeCode, "UserPromptSubmit", protocol.Modify(json.RawMessage(`{"prompt":"x"}`)), `{"decision":"block","reason":"ahp: the harness modified the prompt, which claude-code hooks cannot do; failing closed"}`, 2},
	}
	for _, c := range cases {
		h := &fakeHarness{decision: c.d}
		r := Handle(context.Background(), c.tool, fixture(t, c.tool, c.fixture), h, Options{Now: fixedNow})
		if string(r.Stdout) != c.want || r.Exit != c.exit {
			t.Errorf("%s %s %s: got exit %d %s, want exit %d %s", c.tool, c.fixture, c.d.Kind, r.Exit, r.Stdout, c.exit, c.want)
		}
		if ev := h.events[0]; ev.EventType != protocol.EventPrePrompt || string(ev.Payload) != `{"agent":"`+string(c.tool)+`","cwd":"/work/app","prompt":"delete the build directory"}` {
			t.Errorf("%s: event %s %s", c.tool, ev.EventType, ev.Payload)
		}
	}
}

// TestNotifications checks the fire-and-forget events of every tool: the
// answer is no opinion, and the event has the mapped type, session and depth.
func TestNotifications(t *testing.T) {
	cases := []struct {
		tool    Tool
		fixture string
		typ     protocol.EventType
		agent   string
		depth   uint32
	}{
		{ClaudeCode, "PostToolUse", protocol.EventPostAction, "claude-code", 0},
		{ClaudeCode, "SessionStart", protocol.EventSessionStart, "claude-code", 0},
		{ClaudeCode, "SessionEnd", protocol.EventSessionEnd, "claude-code", 0},
		{ClaudeCode, "Stop", protocol.EventPostResponse, "claude-code", 0},
		{ClaudeCode, "SubagentStart", protocol.EventSessionStart, "claude-code:agent-7", 1},
		{ClaudeCode, "SubagentStop", protocol.EventPostResponse, "claude-code:agent-7", 1},
		{Codex, "PostToolUse", protocol.EventPostAction, "codex", 0},
		{Codex, "SessionStart", protocol.EventSessionStart, "codex", 0},
		{Codex, "Stop", protocol.EventPostResponse, "codex", 0},
		{Gemini, "AfterTool", protocol.EventPostAction, "gemini", 0},
		{Gemini, "SessionStart", protocol.EventSessionStart, "gemini", 0},
		{Gemini, "SessionEnd", protocol.EventSessionEnd, "gemini", 0},
		{Gemini, "AfterAgent", protocol.EventPostResponse, "gemini", 0},
	}
	for _, c := range cases {
		h := &fakeHarness{}
		raw := fixture(t, c.tool, c.fixture)
		var in Input
		_ = json.Unmarshal(raw, &in)
		r := Handle(context.Background(), c.tool, raw, h, Options{Now: fixedNow})
		if string(r.Stdout) != `{}` || r.Exit != 0 {
			t.Errorf("%s %s: got exit %d %s", c.tool, c.fixture, r.Exit, r.Stdout)
			continue
		}
		ev := h.events[0]
		if ev.EventType != c.typ || ev.SessionID != in.SessionID || ev.AgentID != c.agent || ev.Depth != c.depth {
			t.Errorf("%s %s: event %s session %q agent %q depth %d", c.tool, c.fixture, ev.EventType, ev.SessionID, ev.AgentID, ev.Depth)
		}
	}
	// A lost notification is not a reason to block, but it is reported.
	h := &fakeHarness{notifyErr: errors.New("connection refused")}
	r := Handle(context.Background(), Gemini, fixture(t, Gemini, "AfterTool"), h, Options{})
	if r.Exit != 0 || r.Reason == "" {
		t.Fatalf("lost notification: %+v", r)
	}
}

// TestSubagentDepth checks that a Claude Code sub-agent's tool call is
// sent at depth 1 with the sub-agent's id.
func TestSubagentDepth(t *testing.T) {
	h := &fakeHarness{decision: protocol.Allow()}
	Handle(context.Background(), ClaudeCode, fixture(t, ClaudeCode, "PreToolUse-subagent"), h, Options{})
	if ev := h.events[0]; ev.Depth != 1 || ev.AgentID != "claude-code:agent-7" || ev.SessionID != "3f1c2a9e-claude" {
		t.Fatalf("event %+v", ev)
	}
}

// TestBadInputFailsClosed checks inputs that cannot be read.
func TestBadInputFailsClosed(t *testing.T) {
	for _, raw := range []string{``, `not json`, `[]`, `{"tool_name":"Bash"}`, `{"hook_event_name":"PreToolUse","tool_input":"rm -rf /"}`} {
		for _, tool := range Tools {
			h := &fakeHarness{decision: protocol.Allow()}
			r := Handle(context.Background(), tool, []byte(raw), h, Options{})
			if r.Exit != 2 || r.Reason == "" || len(h.events) != 0 {
				t.Errorf("%s %q: %+v", tool, raw, r)
			}
		}
	}
	// Unknown events are not ours: no opinion, nothing sent.
	h := &fakeHarness{}
	if r := Handle(context.Background(), ClaudeCode, []byte(`{"hook_event_name":"PreCompact","session_id":"s"}`), h, Options{}); string(r.Stdout) != `{}` || r.Exit != 0 || len(h.events) != 0 {
		t.Fatalf("unknown event: %+v", r)
	}
}
