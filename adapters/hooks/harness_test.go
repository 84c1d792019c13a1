package hooks

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
)

// ruleHandler blocks shell commands that delete recursively, escalates
// "deploy", and approves confirmations whose message names "ok-to-run".
type ruleHandler struct {
	server.BaseHandler
	delay time.Duration
}

func (r ruleHandler) HandleEvent(ctx context.Context, ev *protocol.Event) (protocol.Decision, error) {
	if r.delay > 0 {
		select {
		case <-time.After(r.delay):
		case <-ctx.Done():
		}
	}
	var p struct {
		Arguments struct {
			Command string `json:"command"`
		} `json:"arguments"`
	}
	_ = json.Unmarshal(ev.Payload, &p)
	switch {
	case strings.Contains(p.Arguments.Command, "rm -rf"):
		return protocol.Block("no recursive deletes"), nil
	case strings.Contains(p.Arguments.Command, "deploy"):
		return protocol.Decision{Kind: protocol.DecisionEscalate, Reason: "deploys need a human"}, nil
	}
	return protocol.Allow(), nil
}

func (ruleHandler) HandleConfirmation(_ context.Context, _ *protocol.Event, p *protocol.ConfirmationPayload) (protocol.ConfirmationDecision, error) {
	if strings.Contains(p.Message, "ok-to-run") {
		return protocol.ConfirmationDecision{Decision: "approve"}, nil
	}
	return protocol.ConfirmationDecision{Decision: "escalate"}, nil
}

// serveUnix serves h on a Unix socket and returns its address.
func serveUnix(t *testing.T, h server.Handler) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.sock")
	l, err := transport.ListenUnix(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := server.New(h, server.Options{})
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx, l) }()
	t.Cleanup(func() { cancel(); l.Close(); <-done })
	return "unix:" + path
}

func withCommand(t *testing.T, tool Tool, name, cmd string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(fixture(t, tool, name), &m); err != nil {
		t.Fatal(err)
	}
	m["tool_input"].(map[string]any)["command"] = cmd
	b, _ := json.Marshal(m)
	return b
}

// TestDialHarness runs the adapter against a real server over a socket.
func TestDialHarness(t *testing.T) {
	addr := serveUnix(t, ruleHandler{})
	for _, c := range []struct {
		tool      Tool
		fixture   string
		cmd, want string
	}{
		{ClaudeCode, "PreToolUse", "rm -rf build", claudeDeny},
		{ClaudeCode, "PreToolUse", "ls", `{}`},
		{Gemini, "BeforeTool", "rm -rf build", geminiDeny},
		{Codex, "PreToolUse", "ls", `{}`},
		{Codex, "PreToolUse", "deploy prod", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"ahp: approval needed (deploys need a human): no approver answered in time; ask one to answer it with ` + "`ahp approvals`" + ` and retry"}}`},
		{Codex, "PreToolUse", "deploy ok-to-run", `{}`},
		{Gemini, "BeforeTool", "deploy ok-to-run", `{"decision":"allow"}`},
	} {
		h := &DialHarness{Addr: addr, Timeout: 5 * time.Second}
		r := Handle(context.Background(), c.tool, withCommand(t, c.tool, c.fixture, c.cmd), h, Options{})
		h.Close()
		if string(r.Stdout) != c.want || r.Exit != 0 {
			t.Errorf("%s %q: exit %d %s, want %s", c.tool, c.cmd, r.Exit, r.Stdout, c.want)
		}
	}
	// Notifications reach the harness and answer no opinion.
	h := &DialHarness{Addr: addr, Timeout: 5 * time.Second}
	defer h.Close()
	if r := Handle(context.Background(), ClaudeCode, fixture(t, ClaudeCode, "PostToolUse"), h, Options{}); string(r.Stdout) != `{}` || r.Reason != "" {
		t.Fatalf("post-tool: %+v", r)
	}
}

// TestServerHarness runs the adapter against a server in the same process.
func TestServerHarness(t *testing.T) {
	h := ServerHarness{H: server.New(ruleHandler{}, server.Options{})}
	r := Handle(context.Background(), ClaudeCode, withCommand(t, ClaudeCode, "PreToolUse", "rm -rf build"), h, Options{})
	if string(r.Stdout) != claudeDeny {
		t.Fatalf("got %s", r.Stdout)
	}
	r = Handle(context.Background(), Gemini, withCommand(t, Gemini, "BeforeTool", "deploy ok-to-run"), h, Options{})
	if string(r.Stdout) != `{"decision":"allow"}` {
		t.Fatalf("got %s", r.Stdout)
	}
	if r := Handle(context.Background(), Gemini, fixture(t, Gemini, "SessionStart"), h, Options{}); string(r.Stdout) != `{}` || r.Reason != "" {
		t.Fatalf("session start: %+v", r)
	}
}

// TestFailClosed: a harness that is down or too slow is a deny with exit
// code 2, for every tool, never an allow.
func TestFailClosed(t *testing.T) {
	down := "unix:" + filepath.Join(t.TempDir(), "nobody-listens.sock")
	slow := serveUnix(t, ruleHandler{delay: 3 * time.Second})
	for _, c := range []struct{ name, addr string }{{"down", down}, {"slow", slow}} {
		for _, tool := range Tools {
			name := "PreToolUse"
			if tool == Gemini {
				name = "BeforeTool"
			}
			h := &DialHarness{Addr: c.addr, Timeout: 300 * time.Millisecond}
			start := time.Now()
			r := Handle(context.Background(), tool, withCommand(t, tool, name, "ls"), h, Options{})
			h.Close()
			if r.Exit != 2 || !strings.Contains(r.Reason, "failing closed") || time.Since(start) > 2*time.Second {
				t.Errorf("%s %s: exit %d reason %q after %v", c.name, tool, r.Exit, r.Reason, time.Since(start))
			}
			var ans map[string]any
			if err := json.Unmarshal(r.Stdout, &ans); err != nil || !strings.Contains(string(r.Stdout), "deny") {
				t.Errorf("%s %s: JSON form of the deny: %s", c.name, tool, r.Stdout)
			}
		}
	}
}
