package mcpproxy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// childHandler returns an HTTPHandler whose sessions each start the test
// binary as an MCP server process, and the count of processes started.
func childHandler(t *testing.T) (*HTTPHandler, *atomic.Int64) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	started := &atomic.Int64{}
	h := &HTTPHandler{
		Upstream: func(ctx context.Context) (mcp.Connection, error) {
			started.Add(1)
			c := exec.Command(self)
			c.Env = append(os.Environ(), childServerEnv+"=1")
			return (&mcp.CommandTransport{Command: c}).Connect(ctx)
		},
		Options: Options{Harness: &rules{}, ServerName: "child"},
		Context: ctx,
	}
	t.Cleanup(func() { cancel(); h.Wait() })
	return h, started
}

// rawPost sends one MCP POST and returns the status, the session id the
// server gave, and the response body.
func rawPost(t *testing.T, url, sid, body string, header map[string]string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

// sseResult returns the "result" of the first JSON-RPC answer in an SSE
// (or plain JSON) response body.
func sseResult(t *testing.T, body string) json.RawMessage {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok && strings.HasPrefix(line, "{") {
			data, ok = line, true
		}
		if !ok {
			continue
		}
		var m struct {
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(data), &m) == nil && m.Result != nil {
			return m.Result
		}
	}
	t.Fatalf("no JSON-RPC result in %q", body)
	return nil
}

func (h *HTTPHandler) sessionCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// connectAndCheckServer opens an MCP session with the SDK client, asks the
// server process for its pid and checks that the process runs while the
// session is open (closing the session may stop it at once).
func connectAndCheckServer(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pid", Arguments: map[string]any{}})
	if err != nil || r.IsError {
		t.Fatalf("pid: %v", err)
	}
	pid, err := strconv.Atoi(text(r))
	if err != nil {
		t.Fatalf("pid answer %q", text(r))
	}
	if !alive(pid) {
		t.Fatalf("server process %d not running", pid)
	}
}

// POSTs without a session that are not an initialize request start no
// server process and take no session slot: a real client still gets in
// after more of them than there are slots.
func TestHTTPGarbagePOSTsStartNothing(t *testing.T) {
	h, started := childHandler(t)
	srv := httptest.NewServer(h)
	defer srv.Close()

	garbage := []string{
		"garbage",
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"initialize","params":{}}`,           // a notification: no id
		`{"jsonrpc":"2.0","id":null,"method":"initialize","params":{}}`, // null id
		`{"jsonrpc":"2.0","id":1,"Method":"initialize","params":{}}`,    // case variant
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		"",
	}
	for i := range 100 {
		status, _, body := rawPost(t, srv.URL, "", garbage[i%len(garbage)], nil)
		if status != http.StatusBadRequest {
			t.Fatalf("garbage POST %d (%q): status %d %q, want 400", i, garbage[i%len(garbage)], status, body)
		}
	}
	if n := started.Load(); n != 0 {
		t.Fatalf("garbage POSTs started %d server processes", n)
	}
	if n := h.sessionCount(); n != 0 {
		t.Fatalf("garbage POSTs hold %d sessions", n)
	}
	connectAndCheckServer(t, srv.URL)
	if n := started.Load(); n != 1 {
		t.Fatalf("one initialize started %d server processes", n)
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// A body past MaxBodyBytes is answered 413, is not read much past the
// limit, and starts nothing; within the limit an initialize works.
func TestHTTPBodyLimit(t *testing.T) {
	h, started := childHandler(t)
	h.MaxBodyBytes = 1024

	// An initialize padded past the limit, read from a counting reader.
	big := initializeBody[:len(initializeBody)-1] + `,"pad":"` + strings.Repeat("x", 1<<20) + `"}`
	body := &countingReader{r: strings.NewReader(big)}
	req := httptest.NewRequest(http.MethodPost, "/", body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversize body: status %d %q, want 413", rec.Code, rec.Body.String())
	}
	if n := body.n.Load(); n > 1025 {
		t.Fatalf("read %d bytes of an oversize body, limit 1024", n)
	}
	if n := started.Load(); n != 0 {
		t.Fatalf("oversize initialize started %d server processes", n)
	}

	// Over a real connection, for a new and for an existing session.
	srv := httptest.NewServer(h)
	defer srv.Close()
	status, sid, resp := rawPost(t, srv.URL, "", initializeBody, nil)
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize within the limit: status %d session %q %q", status, sid, resp)
	}
	if status, _, resp := rawPost(t, srv.URL, "", big, nil); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversize new-session POST: status %d %q, want 413", status, resp)
	}
	huge := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", 8<<20) + `"}}`
	if status, _, resp := rawPost(t, srv.URL, sid, huge, nil); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversize POST in a session: status %d %q, want 413", status, resp)
	}
}

// On a loopback listener a request whose Host is not a loopback name is
// refused (DNS rebinding); loopback names with any port are served.
func TestHTTPLoopbackHostCheck(t *testing.T) {
	h, started := childHandler(t)
	srv := httptest.NewServer(h) // 127.0.0.1
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]

	for _, host := range []string{"evil.example:" + port, "evil.example", "10.0.0.1:" + port, "localhost.evil.example:" + port} {
		status, _, body := rawPost(t, srv.URL, "", initializeBody, map[string]string{"Host": host})
		if status != http.StatusForbidden {
			t.Errorf("Host %q: status %d %q, want 403", host, status, body)
		}
	}
	if n := started.Load(); n != 0 {
		t.Fatalf("refused requests started %d server processes", n)
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "127.0.0.2:1", "[::1]:" + port, "LOCALHOST"} {
		status, sid, body := rawPost(t, srv.URL, "", initializeBody, map[string]string{"Host": host})
		if status != http.StatusOK || sid == "" {
			t.Errorf("Host %q: status %d %q, want 200 and a session", host, status, body)
		}
	}
	connectAndCheckServer(t, srv.URL)
}

// A browser's cross-site request is refused; the same origin and loopback
// origins are served.
func TestHTTPCrossOrigin(t *testing.T) {
	h, started := childHandler(t)
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, hdr := range []map[string]string{
		{"Origin": "https://evil.example"},
		{"Origin": "http://evil.example:" + srv.URL[strings.LastIndex(srv.URL, ":")+1:]},
		{"Origin": "null"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Origin": srv.URL, "Sec-Fetch-Site": "cross-site"},
	} {
		status, _, body := rawPost(t, srv.URL, "", initializeBody, hdr)
		if status != http.StatusForbidden {
			t.Errorf("%v: status %d %q, want 403", hdr, status, body)
		}
	}
	if n := started.Load(); n != 0 {
		t.Fatalf("refused requests started %d server processes", n)
	}
	for _, hdr := range []map[string]string{
		{"Origin": srv.URL, "Sec-Fetch-Site": "same-origin"},
		{"Origin": "http://localhost:6274", "Sec-Fetch-Site": "same-site"},
		{"Sec-Fetch-Site": "none"},
	} {
		status, sid, body := rawPost(t, srv.URL, "", initializeBody, hdr)
		if status != http.StatusOK || sid == "" {
			t.Errorf("%v: status %d %q, want 200 and a session", hdr, status, body)
		}
	}
}

// A session without requests for IdleTimeout is closed and its server
// process stopped; its id is then unknown. DELETE ends a session at once.
func TestHTTPIdleSessionEvicted(t *testing.T) {
	h, _ := childHandler(t)
	h.IdleTimeout = 500 * time.Millisecond
	srv := httptest.NewServer(h)
	defer srv.Close()

	pidOf := func(sid string) int {
		t.Helper()
		if status, _, body := rawPost(t, srv.URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); status != http.StatusAccepted {
			t.Fatalf("initialized: status %d %q", status, body)
		}
		status, _, body := rawPost(t, srv.URL, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pid","arguments":{}}}`, nil)
		if status != http.StatusOK {
			t.Fatalf("tools/call: status %d %q", status, body)
		}
		var r struct {
			Content []struct{ Text string } `json:"content"`
		}
		if err := json.Unmarshal(sseResult(t, body), &r); err != nil || len(r.Content) != 1 {
			t.Fatalf("tools/call answer %q", body)
		}
		pid, err := strconv.Atoi(r.Content[0].Text)
		if err != nil {
			t.Fatalf("pid answer %q", body)
		}
		return pid
	}
	status, sid, body := rawPost(t, srv.URL, "", initializeBody, nil)
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: status %d %q", status, body)
	}
	pid := pidOf(sid)
	if !alive(pid) {
		t.Fatalf("server process %d not running", pid)
	}
	deadline := time.Now().Add(15 * time.Second)
	for (alive(pid) || h.sessionCount() != 0) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(pid) {
		t.Fatalf("server process %d of an idle session still runs", pid)
	}
	if n := h.sessionCount(); n != 0 {
		t.Fatalf("%d sessions left after the idle timeout", n)
	}
	if status, _, _ := rawPost(t, srv.URL, sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil); status != http.StatusNotFound {
		t.Fatalf("request on an evicted session: status %d, want 404", status)
	}

	// DELETE ends the session and its process without waiting.
	h.IdleTimeout = time.Hour
	status, sid, body = rawPost(t, srv.URL, "", initializeBody, nil)
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: status %d %q", status, body)
	}
	pid = pidOf(sid)
	req, _ := http.NewRequest(http.MethodDelete, srv.URL, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: status %d, want 204", resp.StatusCode)
	}
	deadline = time.Now().Add(15 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(pid) {
		t.Fatalf("server process %d still runs after DELETE", pid)
	}
}

// The connection limit makes Accept wait for a closed connection, and
// Close ends a waiting Accept.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := limitListener(inner, 1)
	defer l.Close()
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	c1, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(got)
				return
			}
			got <- c
		}
	}()
	select {
	case <-got:
		t.Fatal("accepted a second connection past a limit of 1")
	case <-time.After(200 * time.Millisecond):
	}
	c1.Close()
	c1.Close() // a second Close frees nothing more
	var c2 net.Conn
	select {
	case c2 = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("no connection accepted after one closed")
	}
	select {
	case <-got:
		t.Fatal("a double Close freed two slots")
	case <-time.After(200 * time.Millisecond):
	}
	l.Close()
	select {
	case _, ok := <-got:
		if ok {
			t.Fatal("accepted after Close")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept still waits after Close")
	}
	c2.Close()
}
