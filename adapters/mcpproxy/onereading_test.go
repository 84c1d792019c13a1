package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ahp-go/ahp/protocol"
)

// rawProxy runs the proxy between a raw JSON-RPC client connection and
// upstream, so a test can send params no SDK client writes.
func rawProxy(t *testing.T, upstream mcp.Connection, opts Options) mcp.Connection {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	clientSide, proxySide := mcp.NewInMemoryTransports()
	down, err := proxySide.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client, err := clientSide.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = Proxy(ctx, down, upstream, opts) }()
	t.Cleanup(func() { client.Close(); cancel(); <-done })
	return client
}

func mustID(t *testing.T, n int) jsonrpc.ID {
	t.Helper()
	id, err := jsonrpc.MakeID(float64(n))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// roundTrip sends a request on c and returns the response with its id.
func roundTrip(t *testing.T, c mcp.Connection, id int, method, params string) *jsonrpc.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Write(ctx, &jsonrpc.Request{ID: mustID(t, id), Method: method, Params: json.RawMessage(params)}); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("%s %d: %v", method, id, err)
		}
		if r, ok := msg.(*jsonrpc.Response); ok && r.ID == mustID(t, id) {
			return r
		}
	}
}

// toolError returns the text of r when it is a tool result with isError
// set, and fails the test otherwise.
func toolError(t *testing.T, r *jsonrpc.Response) string {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("JSON-RPC error %v, want a tool error result", r.Error)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("result %s: %v", r.Result, err)
	}
	if !res.IsError {
		t.Fatalf("result %s is not an error", r.Result)
	}
	return text(&res)
}

// Params that the proxy and an exact reader (every MCP SDK server) could
// read as different calls are refused, never forwarded, and the harness
// is not asked about a call the server would not run.
func TestProxyToolCallOneReading(t *testing.T) {
	var (
		seen []string
		mu   sync.Mutex
	)
	h := &rules{}
	up, err := echoServer(t, &seen, &mu).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := rawProxy(t, up, Options{Harness: h, ServerName: "echo-server"})
	if r := roundTrip(t, c, 1, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`); r.Error != nil {
		t.Fatalf("initialize: %v", r.Error)
	}
	if err := c.Write(context.Background(), &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	// The raw client works: a plain call goes through.
	r := roundTrip(t, c, 2, "tools/call", `{"name":"echo","arguments":{"message":"plain"}}`)
	var res mcp.CallToolResult
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.IsError || text(&res) != "Echo: plain" {
		t.Fatalf("plain call: %v %s", r.Error, r.Result)
	}

	cases := []struct {
		name, params, want string
	}{
		{"case twin of name", `{"name":"delete","arguments":{"message":"x"},"Name":"echo"}`, "member names that differ only in letter case"},
		{"case twin of arguments", `{"name":"echo","arguments":{"message":"rm -rf /"},"Arguments":{"message":"harmless"}}`, "member names that differ only in letter case"},
		{"case twin of a wrong type", `{"name":"delete","arguments":{"message":"x"},"nAme":1}`, "member names that differ only in letter case"},
		{"case twin, empty", `{"name":"delete","arguments":{"message":"x"},"NAME":""}`, "member names that differ only in letter case"},
		{"duplicate name", `{"name":"delete","name":"echo","arguments":{"message":"x"}}`, "duplicate member name"},
		{"case variant of arguments alone", `{"name":"echo","ARGUMENTS":{"message":"judged"}}`, `member "ARGUMENTS", which some servers read as "arguments"`},
		{"case variant of name alone", `{"Name":"echo","arguments":{"message":"x"}}`, `member "Name", which some servers read as "name"`},
		{"lone surrogate", `{"name":"echo","arguments":{"message":"\ud800"}}`, "surrogate"},
		{"huge number", `{"name":"echo","arguments":{"message":"x","n":1e400}}`, "number"},
		{"name not a string", `{"name":1,"arguments":{"message":"x"}}`, "the tool name is not a string"},
		{"no name", `{"arguments":{"message":"x"}}`, "the params have no tool name"},
		{"empty name", `{"name":"","arguments":{"message":"x"}}`, "the tool name is empty"},
		{"arguments not an object", `{"name":"echo","arguments":"rm -rf /"}`, "the arguments are not an object"},
		{"params not an object", `["echo"]`, "the params are not an object"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(h.eventsOf(protocol.EventPreAction))
			msg := toolError(t, roundTrip(t, c, 10+i, "tools/call", tc.params))
			if !strings.HasPrefix(msg, "ahp: tools/call refused: ") || !strings.Contains(msg, tc.want) {
				t.Fatalf("refusal %q, want one naming %q", msg, tc.want)
			}
			if pre := h.eventsOf(protocol.EventPreAction); len(pre) != before {
				t.Fatalf("the harness was asked about %s", pre[len(pre)-1].Payload)
			}
		})
	}
	// A last plain call, answered after every refusal: the server ran only
	// the two plain calls.
	if r := roundTrip(t, c, 99, "tools/call", `{"name":"echo","arguments":{"message":"last"}}`); r.Error != nil {
		t.Fatalf("last call: %v", r.Error)
	}
	mu.Lock()
	got := strings.Join(seen, ",")
	mu.Unlock()
	if got != "plain,last" {
		t.Fatalf("the server ran %q", got)
	}
}

// lockedBuffer is a log sink safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fakeServer answers each tools/call it reads with result and records
// the messages it receives.
type fakeServer struct {
	mu   sync.Mutex
	got  []jsonrpc.Message
	conn mcp.Connection
}

func startFakeServer(t *testing.T, result string) (*fakeServer, mcp.Connection) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	serverSide, proxySide := mcp.NewInMemoryTransports()
	conn, err := serverSide.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	up, err := proxySide.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{conn: conn}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			msg, err := conn.Read(ctx)
			if err != nil {
				return
			}
			f.mu.Lock()
			f.got = append(f.got, msg)
			f.mu.Unlock()
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				_ = conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(result)})
			}
		}
	}()
	t.Cleanup(func() { cancel(); conn.Close(); <-done })
	return f, up
}

func (f *fakeServer) messages() []jsonrpc.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]jsonrpc.Message(nil), f.got...)
}

// A tools/call sent as a notification cannot be answered or judged: it is
// dropped, with a warning, and never reaches the server.
func TestProxyToolCallNotificationDropped(t *testing.T) {
	f, up := startFakeServer(t, `{"content":[{"type":"text","text":"ok"}]}`)
	var logs lockedBuffer
	h := &rules{}
	c := rawProxy(t, up, Options{Harness: h, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Write(ctx, &jsonrpc.Request{Method: "tools/call", Params: json.RawMessage(`{"name":"delete","arguments":{"message":"secret-arg"}}`)}); err != nil {
		t.Fatal(err)
	}
	// A call with an id after it, answered by the server: the
	// notification, read first, has been dealt with by then.
	if r := roundTrip(t, c, 1, "tools/call", `{"name":"echo","arguments":{"message":"hi"}}`); r.Error != nil {
		t.Fatalf("call: %v", r.Error)
	}
	got := f.messages()
	if len(got) != 1 {
		for _, m := range got {
			b, _ := jsonrpc.EncodeMessage(m)
			t.Logf("server got %s", b)
		}
		t.Fatalf("the server got %d messages, want only the call with an id", len(got))
	}
	if req, ok := got[0].(*jsonrpc.Request); !ok || !req.IsCall() {
		t.Fatalf("the server got %#v", got[0])
	}
	out := logs.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "notification") {
		t.Fatalf("no warning logged: %q", out)
	}
	if strings.Contains(out, "secret-arg") {
		t.Fatalf("the log shows the arguments: %q", out)
	}
	if pre := h.eventsOf(protocol.EventPreAction); len(pre) != 1 {
		t.Fatalf("%d pre_action events, want 1", len(pre))
	}
}

// The post_action's success reads isError exactly: a result with an
// "IsError" twin is not reported as a success.
func TestProxyResultIsErrorOneReading(t *testing.T) {
	for _, tc := range []struct {
		name, result string
		success      bool
	}{
		{"plain success", `{"content":[],"isError":false}`, true},
		{"plain error", `{"content":[],"isError":true}`, false},
		{"error with a success twin", `{"content":[],"isError":true,"IsError":false}`, false},
		{"error read only by case-insensitive clients", `{"content":[],"ISERROR":true}`, false},
		{"isError not a boolean", `{"content":[],"isError":"yes"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, up := startFakeServer(t, tc.result)
			h := &rules{}
			c := rawProxy(t, up, Options{Harness: h})
			if r := roundTrip(t, c, 1, "tools/call", `{"name":"echo","arguments":{"message":"hi"}}`); r.Error != nil {
				t.Fatalf("call: %v", r.Error)
			}
			waitEvents(t, h, protocol.EventPostAction, 1)
			var p payload
			ev := h.eventsOf(protocol.EventPostAction)[0]
			if err := json.Unmarshal(ev.Payload, &p); err != nil || p.Success == nil {
				t.Fatalf("post_action %s", ev.Payload)
			}
			if *p.Success != tc.success {
				t.Fatalf("success %v for %s, want %v (post_action %s)", *p.Success, tc.result, tc.success, ev.Payload)
			}
		})
	}
}

// An approver sees the whole arguments up to 64 KiB, and is told how many
// bytes were left out beyond that.
func TestProxyEscalationShowsArguments(t *testing.T) {
	var (
		seen []string
		mu   sync.Mutex
	)
	h := &rules{}
	cs := startProxy(t, echoServer(t, &seen, &mu), Options{Harness: h, ServerName: "echo-server"})
	message := func(i int) string {
		t.Helper()
		cf := h.eventsOf(protocol.EventConfirmation)
		if len(cf) <= i {
			t.Fatalf("%d confirmation events", len(cf))
		}
		var p protocol.ConfirmationPayload
		if err := json.Unmarshal(cf[i].Payload, &p); err != nil {
			t.Fatal(err)
		}
		return p.Message
	}

	long := "approve-me " + strings.Repeat("a", 5000) + " ; rm -rf /"
	if r := callTool(t, cs, "deploy", long); r.IsError {
		t.Fatalf("approved call: %q", text(r))
	}
	if m := message(0); !strings.Contains(m, long) || strings.Contains(m, "not shown") {
		t.Fatalf("the approver saw %d bytes, not the whole %d-byte message", len(m), len(long))
	}

	huge := "approve-me " + strings.Repeat("b", 70000) + " ; rm -rf /"
	if r := callTool(t, cs, "deploy", huge); r.IsError {
		t.Fatalf("approved call: %q", text(r))
	}
	m := message(1)
	args, _ := json.Marshal(map[string]string{"message": huge})
	sub := regexp.MustCompile(`… \[(\d+) more bytes not shown\]`).FindStringSubmatch(m)
	if sub == nil {
		t.Fatalf("the cut message does not say what was left out: ...%q", m[max(0, len(m)-200):])
	}
	if n, _ := strconv.Atoi(sub[1]); n != len(args)-64<<10 {
		t.Fatalf("%d bytes said left out, want %d", n, len(args)-64<<10)
	}
	if !strings.Contains(m, string(args[:64<<10])) {
		t.Fatal("the approver does not see the first 64 KiB of the arguments")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("the server ran %d calls", len(seen))
	}
}
