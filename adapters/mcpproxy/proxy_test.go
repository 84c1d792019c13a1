package mcpproxy

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ahp-go/ahp/protocol"
)

// rules is a harness for the tests: it blocks tools named "delete" or
// whose message says "forbidden", rewrites the message "rewrite-me",
// escalates "deploy" (approved when the message says "approve-me"), and
// records every event.
type rules struct {
	mu     sync.Mutex
	events []*protocol.Event
	down   bool
}

func (r *rules) record(ev *protocol.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *rules) eventsOf(t protocol.EventType) []*protocol.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*protocol.Event
	for _, e := range r.events {
		if e.EventType == t {
			out = append(out, e)
		}
	}
	return out
}

type payload struct {
	ToolName  string `json:"tool_name"`
	Server    string `json:"server"`
	Success   *bool  `json:"success"`
	Arguments struct {
		Message string `json:"message"`
	} `json:"arguments"`
}

func (r *rules) Decide(_ context.Context, ev *protocol.Event) (protocol.Decision, error) {
	r.record(ev)
	if r.down {
		return protocol.Decision{}, context.DeadlineExceeded
	}
	var p payload
	_ = json.Unmarshal(ev.Payload, &p)
	switch {
	case p.ToolName == "delete" || strings.Contains(p.Arguments.Message, "forbidden"):
		return protocol.Block("not on this server"), nil
	case p.Arguments.Message == "held-expired":
		// What the harness answers when a rule with await_approval held
		// the call and nobody answered within the proxy's wait.
		d := protocol.Block("approval expired: no decision within 4m58s; fallback is block")
		d.Metadata = json.RawMessage(`{"approval_id":"ab12","approval_status":"expired","rule_id":"approvals.cluster_delete"}`)
		return d, nil
	case p.Arguments.Message == "rewrite-me":
		return protocol.Modify(json.RawMessage(`{"tool_name":"` + p.ToolName + `","arguments":{"message":"rewritten by ahp"}}`)), nil
	case p.ToolName == "deploy" || strings.Contains(p.Arguments.Message, "escalate"):
		return protocol.Decision{Kind: protocol.DecisionEscalate, Reason: "needs a human"}, nil
	}
	return protocol.Allow(), nil
}

func (r *rules) Confirm(_ context.Context, ev *protocol.Event) (protocol.ConfirmationDecision, error) {
	r.record(ev)
	if strings.Contains(string(ev.Payload), "approve-me") {
		return protocol.ConfirmationDecision{Decision: "approve"}, nil
	}
	return protocol.ConfirmationDecision{Decision: "escalate"}, nil
}

func (r *rules) Notify(_ context.Context, ev *protocol.Event) error {
	r.record(ev)
	return nil
}

// startProxy connects an MCP client through the proxy to the server
// reached by upstream and returns the client's session.
func startProxy(t *testing.T, upstream mcp.Transport, opts Options) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	up, err := upstream.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clientSide, proxySide := mcp.NewInMemoryTransports()
	down, err := proxySide.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = Proxy(ctx, down, up, opts) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	return cs
}

// echoServer is an in-process MCP server whose echo tool records what it
// received.
func echoServer(t *testing.T, seen *[]string, mu *sync.Mutex) mcp.Transport {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo-server", Version: "1"}, nil)
	type in struct {
		Message string `json:"message"`
	}
	handler := func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		*seen = append(*seen, a.Message)
		mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + a.Message}}}, nil, nil
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo"}, handler)
	mcp.AddTool(s, &mcp.Tool{Name: "delete", Description: "delete"}, handler)
	mcp.AddTool(s, &mcp.Tool{Name: "deploy", Description: "deploy"}, handler)
	s.AddPrompt(&mcp.Prompt{Name: "greet"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
	})
	serverSide, proxySide := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := s.Connect(ctx, serverSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close(); cancel() })
	return proxySide
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func callTool(t *testing.T, cs *mcp.ClientSession, tool, msg string) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"message": msg}})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return r
}

func TestProxyInProcess(t *testing.T) {
	var (
		seen []string
		mu   sync.Mutex
	)
	h := &rules{}
	cs := startProxy(t, echoServer(t, &seen, &mu), Options{Harness: h, ServerName: "echo-server", SessionID: "s1"})

	if r := callTool(t, cs, "echo", "hi"); r.IsError || text(r) != "Echo: hi" {
		t.Fatalf("allowed: %+v %q", r.IsError, text(r))
	}
	if r := callTool(t, cs, "delete", "x"); !r.IsError || text(r) != "ahp: blocked by the harness: not on this server" {
		t.Fatalf("blocked: %v %q", r.IsError, text(r))
	}
	if r := callTool(t, cs, "echo", "rewrite-me"); r.IsError || text(r) != "Echo: rewritten by ahp" {
		t.Fatalf("modified: %v %q", r.IsError, text(r))
	}
	if r := callTool(t, cs, "deploy", "approve-me"); r.IsError || text(r) != "Echo: approve-me" {
		t.Fatalf("escalated and approved: %v %q", r.IsError, text(r))
	}
	if r := callTool(t, cs, "deploy", "nobody answers"); !r.IsError || !strings.Contains(text(r), "approval needed") {
		t.Fatalf("escalated, unanswered: %v %q", r.IsError, text(r))
	}
	mu.Lock()
	got := strings.Join(seen, ",")
	mu.Unlock()
	if got != "hi,rewritten by ahp,approve-me" {
		t.Fatalf("the server saw %q", got)
	}
	// Everything else passes through.
	if p, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "greet"}); err != nil || len(p.Messages) != 1 {
		t.Fatalf("prompt: %v", err)
	}
	// Events: one pre_action per call, a post_action per forwarded call.
	pre := h.eventsOf(protocol.EventPreAction)
	if len(pre) != 5 {
		t.Fatalf("%d pre_action events", len(pre))
	}
	var p payload
	_ = json.Unmarshal(pre[0].Payload, &p)
	if p.ToolName != "echo" || p.Server != "echo-server" || p.Arguments.Message != "hi" || pre[0].SessionID != "s1" {
		t.Fatalf("pre_action %s", pre[0].Payload)
	}
	// The harness is told how long the proxy waits for a held approval
	// (5 minutes by default, less two seconds for the answer).
	if string(pre[0].Metadata) != `{"escalation":{"wait_ms":298000}}` {
		t.Fatalf("pre_action metadata %s", pre[0].Metadata)
	}
	waitEvents(t, h, protocol.EventPostAction, 3)
}

func waitEvents(t *testing.T, h *rules, typ protocol.EventType, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(h.eventsOf(typ)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d %s events, want %d", len(h.eventsOf(typ)), typ, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProxyAllowListAndFailClosed(t *testing.T) {
	var (
		seen []string
		mu   sync.Mutex
	)
	h := &rules{down: true}
	cs := startProxy(t, echoServer(t, &seen, &mu), Options{Harness: h, AllowTools: map[string]bool{"echo": true}})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "echo" {
		t.Fatalf("tools/list: %v %+v", err, res)
	}
	if r := callTool(t, cs, "delete", "x"); !r.IsError || !strings.Contains(text(r), "not in the allow-list") {
		t.Fatalf("not listed: %q", text(r))
	}
	if r := callTool(t, cs, "echo", "hi"); !r.IsError || !strings.Contains(text(r), "failing closed") {
		t.Fatalf("harness down: %q", text(r))
	}
	if len(seen) != 0 {
		t.Fatalf("the server ran %v", seen)
	}
}

// everythingCommand finds @modelcontextprotocol/server-everything:
// $AHP_MCP_EVERYTHING (set by .ci/run), else mcp-server-everything on PATH.
func everythingCommand(t *testing.T) string {
	if p := os.Getenv("AHP_MCP_EVERYTHING"); p != "" {
		return p
	}
	if p, err := exec.LookPath("mcp-server-everything"); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatal("CI: @modelcontextprotocol/server-everything is not installed (.ci/run sets AHP_MCP_EVERYTHING)")
	}
	t.Skip("@modelcontextprotocol/server-everything not installed: npm install it and set AHP_MCP_EVERYTHING to its mcp-server-everything (as .ci/run does)")
	return ""
}

// TestProxyServerEverything runs the proxy in front of the reference MCP
// server from npm.
func TestProxyServerEverything(t *testing.T) {
	bin := everythingCommand(t)
	h := &rules{}
	cmd := exec.Command(bin, "stdio")
	cs := startProxy(t, &mcp.CommandTransport{Command: cmd}, Options{Harness: h, ServerName: "everything", SessionID: "s-everything"})

	if r := callTool(t, cs, "echo", "hello"); r.IsError || text(r) != "Echo: hello" {
		t.Fatalf("allowed: %v %q", r.IsError, text(r))
	}
	if r := callTool(t, cs, "echo", "forbidden words"); !r.IsError || text(r) != "ahp: blocked by the harness: not on this server" {
		t.Fatalf("blocked: %v %q", r.IsError, text(r))
	}
	// The server echoes what it received: the modified message.
	if r := callTool(t, cs, "echo", "rewrite-me"); r.IsError || text(r) != "Echo: rewritten by ahp" {
		t.Fatalf("modified: %v %q", r.IsError, text(r))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil || r.IsError || !strings.Contains(text(r), "5") {
		t.Fatalf("get-sum: %v %+v", err, r)
	}
	// tools/list passes through untouched without an allow-list.
	tl, err := cs.ListTools(ctx, nil)
	if err != nil || len(tl.Tools) < 5 {
		t.Fatalf("tools/list: %v", err)
	}
	// So do resources.
	if rl, err := cs.ListResources(ctx, nil); err != nil || len(rl.Resources) == 0 {
		t.Fatalf("resources/list: %v", err)
	}
	waitEvents(t, h, protocol.EventPostAction, 3)
}

func TestProxyStreamableHTTP(t *testing.T) {
	var (
		seen []string
		mu   sync.Mutex
	)
	h := &rules{}
	handler := &HTTPHandler{
		Upstream: func(ctx context.Context) (mcp.Connection, error) { return echoServer(t, &seen, &mu).Connect(ctx) },
		Options:  Options{Harness: h, ServerName: "echo-server"},
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if r := callTool(t, cs, "echo", "over http"); r.IsError || text(r) != "Echo: over http" {
		t.Fatalf("allowed: %q", text(r))
	}
	if r := callTool(t, cs, "delete", "x"); !r.IsError || !strings.Contains(text(r), "blocked") {
		t.Fatalf("blocked: %q", text(r))
	}
	if pre := h.eventsOf(protocol.EventPreAction); len(pre) != 2 || !strings.HasPrefix(pre[0].SessionID, "mcp-") {
		t.Fatalf("pre_action events: %d", len(pre))
	}
}

// A call the harness held for an approval nobody gave is refused naming
// the approval, as the hooks do.
func TestProxyHeldApprovalExpired(t *testing.T) {
	var (
		seen []string
		mu   sync.Mutex
	)
	cs := startProxy(t, echoServer(t, &seen, &mu), Options{Harness: &rules{}, ServerName: "echo-server"})
	if r := callTool(t, cs, "echo", "held-expired"); !r.IsError || text(r) != "ahp: approval needed (approvals.cluster_delete, approval ab12): no approver answered in time" {
		t.Fatalf("held, expired: %v %q", r.IsError, text(r))
	}
	if len(seen) != 0 {
		t.Fatalf("the server saw %v", seen)
	}
}
