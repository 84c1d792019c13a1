package httpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/connlimit"
	"github.com/ahp-go/ahp/transport/httpserver"
	"github.com/ahp-go/ahp/transport/httptransport"
	"github.com/ahp-go/ahp/transport/wstransport/wsserve"
)

const pingBody = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// keepAlive is an agent holding one keep-alive HTTP connection.
type keepAlive struct {
	c  net.Conn
	br *bufio.Reader
}

func openKeepAlive(t *testing.T, addr string) *keepAlive {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &keepAlive{c: c, br: bufio.NewReader(c)}
}

// post sends a ping on the connection and returns the response.
func (k *keepAlive) post(t *testing.T) *http.Response {
	t.Helper()
	_ = k.c.SetDeadline(time.Now().Add(5 * time.Second))
	req := "POST /ahp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(pingBody)) + "\r\n\r\n" + pingBody
	if _, err := io.WriteString(k.c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(k.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp
}

// checkRefusal checks the documented 503 refusal of the connection limit.
func checkRefusal(t *testing.T, resp *http.Response, max int) {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", resp.StatusCode)
	}
	if resp.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	var body struct {
		Error   string `json:"error"`
		Message string `json:"message"`
		Max     int    `json:"max_connections"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("body: %v", err)
	}
	if body.Error != "connection_limit" || body.Max != max || !strings.Contains(body.Message, "connection limit") {
		t.Fatalf("body %+v", body)
	}
	if !resp.Close {
		t.Fatal("the refused connection is not closed")
	}
}

// TestConnectionLimitRefuses: past the limit, a new agent is refused
// within a second with 503, Retry-After and a JSON body, over HTTP POST
// and WebSocket upgrade alike, and the connected agents go on.
func TestConnectionLimitRefuses(t *testing.T) {
	lim, err := connlimit.New(2, connlimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws := wsserve.NewHandler(server.New(server.BaseHandler{}, server.Options{}), wsserve.Options{})
	ts := startServer(t, httpserver.Options{Authenticator: auth.InsecureNoAuth{}, WebSocket: ws}, httpserver.ServerOptions{Limiter: lim})
	a, b := openKeepAlive(t, ts.Addr), openKeepAlive(t, ts.Addr)
	for _, k := range []*keepAlive{a, b} {
		if resp := k.post(t); resp.StatusCode != http.StatusOK {
			t.Fatalf("connected agent: status %d", resp.StatusCode)
		}
	}
	began := time.Now()
	checkRefusal(t, openKeepAlive(t, ts.Addr).post(t), 2)

	up := openKeepAlive(t, ts.Addr)
	_ = up.c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.WriteString(up.c, "GET /ahp HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	resp, err := http.ReadResponse(up.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRefusal(t, resp, 2)
	if d := time.Since(began); d > time.Second {
		t.Fatalf("refusals took %v", d)
	}
	// The connected agents are unaffected.
	for _, k := range []*keepAlive{a, b} {
		if resp := k.post(t); resp.StatusCode != http.StatusOK {
			t.Fatalf("connected agent after the refusals: status %d", resp.StatusCode)
		}
	}
	// A slot freed is a slot for the next agent.
	_ = a.c.Close()
	eventually(t, "the closed connection to free its slot", func() bool { return lim.Open() == 1 })
	if resp := openKeepAlive(t, ts.Addr).post(t); resp.StatusCode != http.StatusOK {
		t.Fatalf("agent after a slot freed: status %d", resp.StatusCode)
	}
}

// TestClientShowsLimitMessage: an HTTP client refused at the connection
// limit reports the harness's message, not the raw JSON body.
func TestClientShowsLimitMessage(t *testing.T) {
	lim, err := connlimit.New(1, connlimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, httpserver.Options{Authenticator: auth.InsecureNoAuth{}}, httpserver.ServerOptions{Limiter: lim})
	held := openKeepAlive(t, ts.Addr)
	if resp := held.post(t); resp.StatusCode != http.StatusOK {
		t.Fatalf("connected agent: status %d", resp.StatusCode)
	}
	c, err := transport.Dial(context.Background(), "http://"+ts.Addr+"/ahp", transport.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.WriteMessage(context.Background(), []byte(`{"jsonrpc":"2.0","method":"ahp/event","params":{}}`))
	var se *httptransport.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusServiceUnavailable {
		t.Fatalf("over the limit: %v", err)
	}
	want := "http: harness answered 503 Service Unavailable: " + connlimit.Message(1)
	if se.Message != connlimit.Message(1) || err.Error() != want || !strings.Contains(se.Body, `"max_connections":1`) {
		t.Fatalf("error %q (message %q, body %q), want %q", err, se.Message, se.Body, want)
	}
}
