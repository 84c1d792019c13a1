package client

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
)

// rustLikeHarness plays the a3s-ahp 2.4 crate's AhpServer::run_stdio on the
// far end of a pipe: a request whose id is not a JSON string does not parse
// as its request type, so it is taken for a notification and never answered;
// "ping" is an unknown method (-32601). echo says how the id of an answer is
// written back: "same" (as received), "number" (converted to a JSON number)
// or "escaped" (the same string with every character \u-escaped). It
// returns the client and the raw ids the harness saw.
func rustLikeHarness(t *testing.T, opts Options, echo string) (*Client, func() []string) {
	t.Helper()
	a, b := transport.Pipe()
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			msg, err := b.ReadMessage(context.Background())
			if err != nil {
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(msg, &m) != nil || m.Params == nil {
				continue
			}
			mu.Lock()
			seen = append(seen, string(m.ID))
			mu.Unlock()
			var id string
			if len(m.ID) == 0 || json.Unmarshal(m.ID, &id) != nil {
				continue // no id, or not a string: a notification for the crate
			}
			var result string
			switch m.Method {
			case jsonrpc.MethodHandshake:
				result = `"result":{"protocol_version":"2.4","harness_info":{"name":"ahp-server","version":"2.4.0","capabilities":["pre_action"]},"config":{"timeout_ms":10000,"batch_size":100,"max_depth":10}}`
			case jsonrpc.MethodEvent:
				result = `"result":{"decision":"allow"}`
				if strings.Contains(string(m.Params), "rm -rf") {
					result = `"result":{"decision":"block","reason":"destructive"}`
				}
			default:
				result = `"error":{"code":-32601,"message":"Method not found"}`
			}
			var idOut string
			switch echo {
			case "number":
				idOut = id
			case "escaped":
				var sb strings.Builder
				sb.WriteByte('"')
				for _, r := range id {
					sb.WriteString(`\u00` + strconv.FormatInt(int64(r)>>4, 16) + strconv.FormatInt(int64(r)&15, 16))
				}
				sb.WriteByte('"')
				idOut = sb.String()
			default:
				idOut = string(m.ID)
			}
			_ = b.WriteMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":`+idOut+`,`+result+`}`))
		}
	}()
	c := New(a, opts)
	t.Cleanup(func() { _ = c.Close(); _ = b.Close(); <-done })
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// Issue 8, item 3: a harness built on the 2.4 crate reads ids only as
// strings. The client must send string ids so that it is answered at all.
func TestRustLikeHarnessAnswersStringIDs(t *testing.T) {
	c, seen := rustLikeHarness(t, Options{Timeout: 500 * time.Millisecond, FailMode: FailError, SessionID: "s", AgentID: "a"}, "same")
	ctx := context.Background()
	hs, err := c.Handshake(ctx)
	if err != nil {
		t.Fatalf("handshake with a string-id-only harness: %v (ids sent: %v)", err, seen())
	}
	if hs.HarnessInfo.Name != "ahp-server" {
		t.Fatalf("handshake answer: %+v", hs)
	}
	d, err := c.Event(ctx, protocol.EventPreAction, map[string]any{"tool_name": "bash", "arguments": map[string]string{"command": "rm -rf /"}})
	if err != nil || d.Kind != protocol.DecisionBlock || d.Reason != "destructive" {
		t.Fatalf("event: %+v %v", d, err)
	}
	// The crate has no ping: the harness still answers, with -32601.
	var je *jsonrpc.Error
	if err := c.Ping(ctx); !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("ping: %v", err)
	}
	ids := seen()
	if len(ids) != 3 {
		t.Fatalf("harness saw %d requests, want 3: %v", len(ids), ids)
	}
	for i, id := range ids {
		// Conservative: a short JSON string of ASCII digits, distinct per call.
		want := strconv.Quote(strconv.Itoa(i + 1))
		if id != want {
			t.Fatalf("request %d had id %s, want %s", i, id, want)
		}
	}
}

// Responses are matched whatever form of the id the harness writes back: a
// string re-escaped, or converted to a number.
func TestResponseIDEchoedInAnotherForm(t *testing.T) {
	for _, echo := range []string{"number", "escaped"} {
		t.Run(echo, func(t *testing.T) {
			c, _ := rustLikeHarness(t, Options{Timeout: 500 * time.Millisecond, FailMode: FailError}, echo)
			ctx := context.Background()
			if _, err := c.Handshake(ctx); err != nil {
				t.Fatalf("handshake: %v", err)
			}
			for range 3 {
				d, err := c.Event(ctx, protocol.EventPreAction, map[string]string{"tool_name": "ls"})
				if err != nil || d.Kind != protocol.DecisionAllow {
					t.Fatalf("event: %+v %v", d, err)
				}
			}
		})
	}
}

func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want uint64
		ok   bool
	}{
		{`"1"`, 1, true},
		{`"18446744073709551615"`, 18446744073709551615, true},
		{`"\u0034\u0032"`, 42, true},
		{`42`, 42, true},
		{`42.0`, 42, true},
		{`4.2e1`, 42, true},
		{`"18446744073709551616"`, 0, false},
		{`18446744073709551616`, 0, false},
		{`""`, 0, false},
		{`"x1"`, 0, false},
		{`"1 "`, 0, false},
		{`"-1"`, 0, false},
		{`-1`, 0, false},
		{`1.5`, 0, false},
		{`null`, 0, false},
		{`true`, 0, false},
		{`"\u00zz"`, 0, false},
		{`"`, 0, false},
	} {
		got, ok := parseID(json.RawMessage(tc.raw))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseID(%s) = %d, %v; want %d, %v", tc.raw, got, ok, tc.want, tc.ok)
		}
	}
}
