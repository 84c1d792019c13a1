package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
)

// captureHandler records the events the server decodes.
type captureHandler struct {
	server.BaseHandler
	mu     sync.Mutex
	events []protocol.Event
}

func (h *captureHandler) HandleEvent(_ context.Context, ev *protocol.Event) (protocol.Decision, error) {
	h.mu.Lock()
	cp := *ev
	cp.Payload = append(json.RawMessage(nil), ev.Payload...)
	cp.Metadata = append(json.RawMessage(nil), ev.Metadata...)
	h.events = append(h.events, cp)
	h.mu.Unlock()
	if strings.Contains(string(ev.Payload), "rm -rf") {
		return protocol.Block("no"), nil
	}
	return protocol.Allow(), nil
}

// connect returns a client connected to a real server over a pipe.
func connect(t *testing.T, h server.Handler, opts Options) *Client {
	t.Helper()
	a, b := transport.Pipe()
	s := server.New(h, server.Options{BatchSize: 3})
	done := make(chan struct{})
	go func() { _ = s.ServeConn(context.Background(), b); close(done) }()
	c := New(a, opts)
	t.Cleanup(func() { _ = c.Close(); <-done })
	return c
}

// fakeHarness answers each request with whatever reply returns.
func fakeHarness(t *testing.T, opts Options, reply func(m jsonrpc.Message) string) *Client {
	t.Helper()
	a, b := transport.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			msg, err := b.ReadMessage(context.Background())
			if err != nil {
				return
			}
			m, err := jsonrpc.Decode(msg)
			if err != nil || m.Kind != jsonrpc.KindRequest {
				continue
			}
			if out := reply(m); out != "" {
				_ = b.WriteMessage(context.Background(), []byte(out))
			}
		}
	}()
	c := New(a, opts)
	t.Cleanup(func() { _ = c.Close(); _ = b.Close(); <-done })
	return c
}

const hsResult = `{"protocol_version":"2.4","harness_info":{"name":"fake","version":"1","capabilities":[]}}`

// Spec §8.1: events, queries and batches only after the handshake.
func TestRequiresHandshake(t *testing.T) {
	c := connect(t, &captureHandler{}, Options{})
	ctx := context.Background()
	if _, err := c.Event(ctx, protocol.EventPreAction, map[string]any{}); !errors.Is(err, ErrNoHandshake) {
		t.Fatalf("Event: %v", err)
	}
	if _, err := c.Query(ctx, "x", nil); !errors.Is(err, ErrNoHandshake) {
		t.Fatalf("Query: %v", err)
	}
	if _, err := c.Batch(ctx, nil); !errors.Is(err, ErrNoHandshake) {
		t.Fatalf("Batch: %v", err)
	}
	if err := c.Notify(ctx, protocol.EventPostAction, nil); !errors.Is(err, ErrNoHandshake) {
		t.Fatalf("Notify: %v", err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping before handshake: %v", err)
	}
	resp, err := c.Handshake(ctx)
	if err != nil || resp.ProtocolVersion != "2.4" {
		t.Fatalf("Handshake: %v %v", resp, err)
	}
	d, err := c.Event(ctx, protocol.EventPreAction, map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": "rm -rf /"}})
	if err != nil || d.Kind != protocol.DecisionBlock {
		t.Fatalf("Event: %+v %v", d, err)
	}
}

// Spec §8.2: the response must carry jsonrpc 2.0 and the request's id; an
// error becomes an error; neither result nor error is an error.
func TestResponseValidation(t *testing.T) {
	mode := ""
	var mu sync.Mutex
	c := fakeHarness(t, Options{Timeout: 300 * time.Millisecond, FailMode: FailError}, func(m jsonrpc.Message) string {
		mu.Lock()
		defer mu.Unlock()
		if m.Method == jsonrpc.MethodHandshake {
			return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + hsResult + `}`
		}
		switch mode {
		case "wrong-version":
			return `{"jsonrpc":"1.0","id":` + string(m.ID) + `,"result":{"decision":"allow"}}`
		case "wrong-id":
			return `{"jsonrpc":"2.0","id":999999,"result":{"decision":"allow"}}`
		case "error":
			return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32602,"message":"Invalid params: nope"}}`
		case "empty":
			return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":null}`
		case "bad-decision":
			return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"decision":"maybe"}}`
		}
		return ""
	})
	ctx := context.Background()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	set := func(m string) { mu.Lock(); mode = m; mu.Unlock() }
	set("wrong-version")
	if _, err := c.Event(ctx, protocol.EventPreAction, nil); err == nil || !strings.Contains(err.Error(), "invalid response") {
		t.Fatalf("wrong version accepted: %v", err)
	}
	set("wrong-id")
	if _, err := c.Event(ctx, protocol.EventPreAction, nil); !errors.Is(err, ErrTimeout) {
		t.Fatalf("wrong id accepted: %v", err)
	}
	set("error")
	_, err := c.Event(ctx, protocol.EventPreAction, nil)
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32602 {
		t.Fatalf("error response: %v", err)
	}
	set("empty")
	if _, err := c.Event(ctx, protocol.EventPreAction, nil); err == nil {
		t.Fatal("null result accepted")
	}
	set("bad-decision")
	if _, err := c.Event(ctx, protocol.EventPreAction, nil); err == nil {
		t.Fatal("unknown decision accepted")
	}
}

// A response with neither result nor error is refused.
func TestResponseWithoutResult(t *testing.T) {
	c := fakeHarness(t, Options{Timeout: 300 * time.Millisecond, FailMode: FailError}, func(m jsonrpc.Message) string {
		if m.Method == jsonrpc.MethodHandshake {
			return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + hsResult + `}`
		}
		return `{"jsonrpc":"2.0","id":` + string(m.ID) + `}`
	})
	ctx := context.Background()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Event(ctx, protocol.EventPreAction, nil); err == nil || !strings.Contains(err.Error(), "invalid response") {
		t.Fatal("response without result accepted")
	}
}

// Spec §8.3: batch size must match; non-batchable events are refused first.
func TestBatchRules(t *testing.T) {
	h := &captureHandler{}
	c := connect(t, h, Options{SessionID: "s", AgentID: "a"})
	ctx := context.Background()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	ev1, _ := c.NewEvent(protocol.EventPreAction, map[string]any{"n": 1})
	ev2, _ := c.NewEvent(protocol.EventPrePrompt, map[string]any{"text": "rm -rf /"})
	ds, err := c.Batch(ctx, []protocol.Event{*ev1, *ev2})
	if err != nil || len(ds) != 2 || ds[0].Kind != protocol.DecisionAllow || ds[1].Kind != protocol.DecisionBlock {
		t.Fatalf("batch: %+v %v", ds, err)
	}
	idle, _ := c.NewEvent(protocol.EventIdle, map[string]any{"idle_duration_ms": 1, "idle_reason": "x"})
	before := len(h.events)
	if _, err := c.Batch(ctx, []protocol.Event{*ev1, *idle}); err == nil || !strings.Contains(err.Error(), "cannot be batched") {
		t.Fatalf("non-batchable: %v", err)
	}
	if len(h.events) != before {
		t.Fatal("a refused batch was sent")
	}

	short := fakeHarness(t, Options{}, func(m jsonrpc.Message) string {
		if m.Method == jsonrpc.MethodHandshake {
			return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + hsResult + `}`
		}
		return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"decisions":[{"decision":"allow"}]}}`
	})
	if _, err := short.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := short.Batch(ctx, []protocol.Event{*ev1, *ev1}); err == nil || !strings.Contains(err.Error(), "1 decisions for 2 events") {
		t.Fatalf("short batch: %v", err)
	}
}

// Spec §8.4: full-event calls keep the caller's fields as given.
func TestFullEventKeepsFields(t *testing.T) {
	h := &captureHandler{}
	c := connect(t, h, Options{SessionID: "client-session", AgentID: "client-agent"})
	ctx := context.Background()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	ev := &protocol.Event{
		EventType: protocol.EventPreAction, SessionID: "other-session", AgentID: "sub-agent",
		Timestamp: "2026-01-02T03:04:05Z", Depth: 2, Payload: json.RawMessage(`{"tool_name":"read"}`),
		Context:  &protocol.EventContext{CurrentTask: "refactor", RecentFacts: []protocol.Fact{{Content: "c", Source: "s", Confidence: 0.5}}},
		Metadata: json.RawMessage(`{"trace":"abc"}`),
	}
	if _, err := c.SendEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	got := h.events[0]
	if got.SessionID != "other-session" || got.AgentID != "sub-agent" || got.Depth != 2 || got.Timestamp != ev.Timestamp ||
		got.Context == nil || got.Context.CurrentTask != "refactor" || len(got.Context.RecentFacts) != 1 || string(got.Metadata) != `{"trace":"abc"}` {
		t.Fatalf("event changed on the way: %+v", got)
	}
}

// Spec §8.5: one timeout applies; fail-closed and fail-open behaviour.
func TestTimeoutAndFailModes(t *testing.T) {
	silent := func(m jsonrpc.Message) string {
		if m.Method == jsonrpc.MethodHandshake {
			return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + hsResult + `}`
		}
		return "" // never answers events
	}
	ctx := context.Background()
	for _, tc := range []struct {
		mode FailMode
		want protocol.DecisionKind
	}{{FailClosed, protocol.DecisionBlock}, {FailOpen, protocol.DecisionAllow}, {FailError, ""}} {
		c := fakeHarness(t, Options{Timeout: 100 * time.Millisecond, FailMode: tc.mode}, silent)
		if _, err := c.Handshake(ctx); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		d, err := c.Event(ctx, protocol.EventPreAction, nil)
		if el := time.Since(start); el > 2*time.Second {
			t.Fatalf("timeout not applied: %v", el)
		}
		switch tc.mode {
		case FailError:
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("FailError: %v", err)
			}
		case FailClosed:
			if err != nil || d.Kind != tc.want || !strings.Contains(d.Reason, "failing closed") {
				t.Fatalf("FailClosed: %+v %v", d, err)
			}
		case FailOpen:
			if err != nil || d.Kind != tc.want || !strings.Contains(string(d.Metadata), "ahp_fail_open") {
				t.Fatalf("FailOpen: %+v %v", d, err)
			}
		}
	}
}

// A lost connection fails every pending call, and blocking events fail closed.
func TestConnectionLossFailsPending(t *testing.T) {
	a, b := transport.Pipe()
	c := New(a, Options{Timeout: 5 * time.Second, FailMode: FailError})
	defer c.Close()
	go func() {
		msg, _ := b.ReadMessage(context.Background())
		m, _ := jsonrpc.Decode(msg)
		_ = b.WriteMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+hsResult+`}`))
		_, _ = b.ReadMessage(context.Background()) // the event: never answered
		_ = b.Close()
	}()
	ctx := context.Background()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := c.Event(ctx, protocol.EventPreAction, nil)
	if err == nil || !strings.Contains(err.Error(), "connection lost") {
		t.Fatalf("pending call: %v", err)
	}
	if _, err := c.Event(ctx, protocol.EventPreAction, nil); err == nil {
		t.Fatal("call after loss succeeded")
	}
}

// Many goroutines share one client; every answer matches its question.
func TestConcurrentCalls(t *testing.T) {
	h := &echoHandler{}
	c := connect(t, h, Options{SessionID: "s", AgentID: "a"})
	ctx := context.Background()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				want := fmt.Sprintf("g%d-%d", g, i)
				d, err := c.Event(ctx, protocol.EventPreAction, map[string]string{"tool_name": want})
				if err != nil {
					errs <- err
					return
				}
				if d.Reason != want {
					errs <- fmt.Errorf("asked %s, got %s", want, d.Reason)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

type echoHandler struct{ server.BaseHandler }

func (echoHandler) HandleEvent(_ context.Context, ev *protocol.Event) (protocol.Decision, error) {
	var p struct {
		ToolName string `json:"tool_name"`
	}
	_ = json.Unmarshal(ev.Payload, &p)
	return protocol.Block(p.ToolName), nil
}

// Typed calls decode the specialized decision.
func TestTypedCalls(t *testing.T) {
	c := connect(t, &captureHandler{}, Options{SessionID: "s", AgentID: "a"})
	ctx := context.Background()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := Typed[protocol.IntentDetectionDecision](ctx, c, protocol.EventIntentDetection,
		protocol.IntentDetectionPayload{SessionID: "s", Prompt: "why did the build fail", Workspace: "/w"})
	if err != nil || d.Decision != "allow" || d.DetectedIntent != "reason" {
		t.Fatalf("intent: %+v %v", d, err)
	}
	rl, err := Typed[protocol.RateLimitDecision](ctx, c, protocol.EventRateLimit,
		protocol.RateLimitPayload{SessionID: "s", LimitType: protocol.RateLimitType{Name: "llm_request_limit"}, RetryAfterMs: 250, CurrentUsage: "x"})
	if err != nil || rl.Decision != "retry" || rl.RetryAfterMs != 250 {
		t.Fatalf("rate limit: %+v %v", rl, err)
	}
	if _, err := c.Event(ctx, protocol.EventIdle, nil); err == nil {
		t.Fatal("typed event through the generic call accepted")
	}
	q, err := c.Query(ctx, "status", map[string]int{"x": 1})
	if err != nil || string(q.Answer) != "null" {
		t.Fatalf("query: %+v %v", q, err)
	}
}

// A transport's own error (-32001: connection lost, HTTP refusal) is not
// an answer from the harness: the fail mode applies to it.
func TestTransportErrorFailsClosed(t *testing.T) {
	c := fakeHarness(t, Options{}, func(m jsonrpc.Message) string {
		if m.Method == jsonrpc.MethodHandshake {
			return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + hsResult + `}`
		}
		return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32001,"message":"connection lost"}}`
	})
	ctx := context.Background()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := c.Event(ctx, protocol.EventPreAction, nil)
	if err != nil || d.Kind != protocol.DecisionBlock || !strings.Contains(d.Reason, "connection lost") {
		t.Fatalf("transport error under FailClosed: %+v %v", d, err)
	}
}

// A connection error the harness sends for no call (id null), such as its
// connection limit, is told with the loss of the connection that follows.
func TestConnectionErrorToldWithLoss(t *testing.T) {
	a, b := transport.Pipe()
	c := New(a, Options{Timeout: 5 * time.Second, FailMode: FailError})
	defer c.Close()
	go func() {
		_ = b.WriteMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32002,"message":"ahp: the harness is at its connection limit (2 connections); `+strings.Repeat("x", 2000)+`"}}`))
		_, _ = b.ReadMessage(context.Background()) // the handshake: never answered
		_ = b.Close()
	}()
	_, err := c.Handshake(context.Background())
	if err == nil || !strings.Contains(err.Error(), "connection lost: the harness said jsonrpc error -32002: ahp: the harness is at its connection limit") {
		t.Fatalf("handshake: %v", err)
	}
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32002 {
		t.Fatalf("the harness's error is not in the chain: %v", err)
	}
	if len(je.Message) > maxSaidBytes+len("…") {
		t.Fatalf("message of %d bytes repeated whole", len(je.Message))
	}
}

// The same when the harness closed before the request was written: the
// failed write is told with what the harness said.
func TestConnectionErrorToldWithFailedSend(t *testing.T) {
	a, b := transport.Pipe()
	c := New(a, Options{Timeout: 5 * time.Second, FailMode: FailError})
	defer c.Close()
	_ = b.WriteMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32002,"message":"at the connection limit"}}`))
	_ = b.Close()
	_, err := c.Handshake(context.Background())
	if err == nil || !strings.Contains(err.Error(), "the harness said jsonrpc error -32002: at the connection limit") {
		t.Fatalf("handshake: %v", err)
	}
}
