package server

import (
	"bufio"
	"context"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/transport"
)

// serveUnix serves s on a Unix socket until the test ends.
func serveUnix(t *testing.T, s *Server, limit int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.sock")
	l, err := transport.ListenUnix(path, limit)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Serve(ctx, l); close(done) }()
	t.Cleanup(func() { cancel(); _ = l.Close(); <-done })
	return path
}

// TestHostileInput sends, on one raw connection, what a hostile or broken
// agent might: deep nesting, a line over the limit (8 MiB against 1 MiB),
// invalid UTF-8, duplicate keys, out-of-range numbers, null where objects
// belong. Each gets a clear JSON-RPC error (or, for notifications,
// nothing); the connection goes on answering; no goroutine is left behind
// once it closes.
func TestHostileInput(t *testing.T) {
	before := runtime.NumGoroutine()
	s := New(BaseHandler{}, Options{MaxMessageBytes: 1 << 20})
	path := serveUnix(t, s, 1<<20)
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReaderSize(c, 1<<16)
	ev := func(payload string) string {
		return `{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":` + payload + `}`
	}
	cases := []struct{ name, msg, want string }{
		{"deep nesting", `{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":` + ev(strings.Repeat("[", 100000)+strings.Repeat("]", 100000)) + `}`, `"code":-32`},
		{"over the size limit", `{"jsonrpc":"2.0","id":2,"method":"ahp/event","params":` + ev(`"`+strings.Repeat("x", 8<<20)+`"`) + `}`, `larger than the limit`},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ahp/event\",\"params\":" + ev("{\"tool_name\":\"\xff\"}") + "}", `"code":-32`},
		{"duplicate key", `{"jsonrpc":"2.0","id":4,"method":"ahp/event","params":` + ev(`{"tool_name":"read","tool_name":"bash"}`) + `}`, `"code":-32`},
		{"number out of range", `{"jsonrpc":"2.0","id":5,"method":"ahp/event","params":{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":1e400,"payload":{}}}`, `"code":-32`},
		{"null params", `{"jsonrpc":"2.0","id":6,"method":"ahp/event","params":null}`, `"code":-32602`},
		{"null handshake", `{"jsonrpc":"2.0","id":7,"method":"ahp/handshake","params":null}`, `"code":-32602`},
		{"null batch events", `{"jsonrpc":"2.0","id":8,"method":"ahp/batch","params":{"events":null}}`, `"code":-32602`},
		{"still answering", `{"jsonrpc":"2.0","id":9,"method":"ping"}`, `"result":{}`},
	}
	for _, tc := range cases {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte(tc.msg + "\n")); err != nil {
			t.Fatalf("%s: write: %v", tc.name, err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: no answer: %v", tc.name, err)
		}
		if !strings.Contains(line, tc.want) {
			t.Errorf("%s: answer %s, want it to contain %s", tc.name, line, tc.want)
		}
	}
	_ = c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) { // Serve and its listener
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Errorf("goroutines: %d before, %d after the connection closed", before, n)
	}
}

// TestHarnessDiesMidStream closes the harness's end while a blocking call
// waits: the client fails closed (a block naming the failure) well within
// its timeout, and a new client reaches the harness once it is back.
func TestHarnessDiesMidStream(t *testing.T) {
	release := make(chan struct{})
	h := &recorder{decide: func(*protocol.Event) (protocol.Decision, error) {
		<-release
		return protocol.Allow(), nil
	}}
	defer close(release)
	s := New(h, Options{})
	path := filepath.Join(t.TempDir(), "h.sock")
	l, err := transport.ListenUnix(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	conns := make(chan transport.Conn, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err == nil {
			conns <- c
			_ = s.ServeConn(ctx, c)
		}
	}()
	cl, err := client.Dial(context.Background(), "unix:"+path, transport.DialOptions{}, client.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Handshake(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := make(chan protocol.Decision, 1)
	start := time.Now()
	go func() {
		d, _ := cl.Event(context.Background(), protocol.EventPreAction, map[string]any{"tool_name": "bash"})
		got <- d
	}()
	for h.calls.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	srvConn := <-conns
	_ = srvConn.Close() // the harness's side goes away mid-request
	cancel()
	_ = l.Close()
	select {
	case d := <-got:
		if d.Kind != protocol.DecisionBlock || d.Reason == "" {
			t.Fatalf("after the harness died: %+v, want block with a reason", d)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Fatalf("failed closed after %v, beyond the client timeout", el)
		}
		t.Logf("failed closed in %v: %s", time.Since(start).Round(time.Millisecond), d.Reason)
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking call did not return")
	}
	// The harness comes back on the same path: a new client is answered.
	s2 := New(BaseHandler{}, Options{})
	l2, err := transport.ListenUnix(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	go func() { _ = s2.Serve(ctx2, l2) }()
	defer l2.Close()
	cl2, err := client.Dial(context.Background(), "unix:"+path, transport.DialOptions{}, client.Options{Timeout: 5 * time.Second, FailMode: client.FailError})
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	if _, err := cl2.Handshake(context.Background()); err != nil {
		t.Fatal(err)
	}
	d, err := cl2.Event(context.Background(), protocol.EventPreAction, map[string]any{"tool_name": "bash"})
	if err != nil || d.Kind != protocol.DecisionAllow {
		t.Fatalf("after the harness came back: %+v %v", d, err)
	}
}
