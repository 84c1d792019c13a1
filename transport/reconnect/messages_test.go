package reconnect

import "testing"

func TestPeek(t *testing.T) {
	cases := []struct {
		msg, id, method string
		req             bool
	}{
		{`{"jsonrpc":"2.0","id":12,"method":"ahp/event","params":{}}`, "12", "ahp/event", true},
		{`{"jsonrpc":"2.0","id":"a-b","method":"ahp/handshake","params":{}}`, `"a-b"`, "ahp/handshake", true},
		{`{"method":"ping","id":7,"jsonrpc":"2.0"}`, "7", "ping", true},
		{`{"jsonrpc":"2.0","method":"ahp/event","params":{}}`, "", "ahp/event", false},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, "null", "ping", false},
		{`{"jsonrpc":"2.0","id":3,"method":"a\"b"}`, "3", `a"b`, true},
	}
	for _, tc := range cases {
		id, method, req := peek([]byte(tc.msg))
		if id != tc.id || method != tc.method || req != tc.req {
			t.Errorf("peek(%s) = %q %q %v, want %q %q %v", tc.msg, id, method, req, tc.id, tc.method, tc.req)
		}
	}
}

func TestReceivedForgetsOnlyResponses(t *testing.T) {
	c := &Conn{pending: map[string]uint64{"1": 1, "2": 1, `"s"`: 1, "4": 1}}
	c.received([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	c.received([]byte(`{"result":{},"id":"s","jsonrpc":"2.0"}`))
	c.received([]byte(`{"jsonrpc":"2.0","id":2,"method":"x"}`)) // a request: not an answer
	c.received([]byte(`{"jsonrpc":"2.0","id":4,"error":{"code":1,"message":"m"}}`))
	if len(c.pending) != 1 || c.pending["2"] != 1 {
		t.Fatalf("pending after responses: %v", c.pending)
	}
}
