package transport_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/connlimit"
)

// rawAgent is a Unix socket client speaking raw JSON lines.
type rawAgent struct {
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, path string) *rawAgent {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawAgent{c: c, br: bufio.NewReaderSize(c, 1<<20)}
}

func (a *rawAgent) send(t *testing.T, line string) {
	t.Helper()
	_ = a.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(a.c, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (a *rawAgent) read(t *testing.T, within time.Duration) (string, error) {
	t.Helper()
	_ = a.c.SetReadDeadline(time.Now().Add(within))
	line, err := a.br.ReadString('\n')
	return strings.TrimSpace(line), err
}

// ping checks that the agent is still served.
func (a *rawAgent) ping(t *testing.T) {
	t.Helper()
	a.send(t, `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	line, err := a.read(t, 5*time.Second)
	if err != nil || !strings.Contains(line, `"id":"p"`) || !strings.Contains(line, `"result"`) {
		t.Fatalf("ping: %q %v", line, err)
	}
}

func serveUnix(t *testing.T, lim *connlimit.Limiter) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.sock")
	l, err := transport.ListenUnixLimited(path, 0, lim)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.New(server.BaseHandler{}, server.Options{}).Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return path
}

// TestUnixConnectionLimit: past the limit, a new agent on the Unix socket
// gets one JSON-RPC error naming the limit within a second and is
// disconnected; the connected agents are served on.
func TestUnixConnectionLimit(t *testing.T) {
	lim, err := connlimit.New(2, connlimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := serveUnix(t, lim)
	a, b := dialRaw(t, path), dialRaw(t, path)
	a.ping(t)
	b.ping(t)

	began := time.Now()
	c := dialRaw(t, path)
	line, err := c.read(t, time.Second)
	if err != nil {
		t.Fatalf("refused agent: %v (after %v)", err, time.Since(began))
	}
	var resp struct {
		ID    *json.RawMessage `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Reason string `json:"reason"`
				Max    int    `json:"max_connections"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &resp); err != nil {
		t.Fatalf("refusal %q: %v", line, err)
	}
	if resp.Error.Code != transport.CodeConnectionLimit || resp.Error.Data.Reason != "connection_limit" ||
		resp.Error.Data.Max != 2 || !strings.Contains(resp.Error.Message, "connection limit") {
		t.Fatalf("refusal %q", line)
	}
	if _, err := c.read(t, time.Second); !errors.Is(err, io.EOF) {
		t.Fatalf("refused agent not disconnected: %v", err)
	}
	if d := time.Since(began); d > time.Second {
		t.Fatalf("refusal took %v", d)
	}
	a.ping(t)
	b.ping(t)

	// Closing one frees its slot.
	_ = a.c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for lim.Open() != 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	dialRaw(t, path).ping(t)
}

// TestUnixFourMegabyteMessage: a 4 MB message passes both ways, through
// the pooled buffers, over a real socket and through the server.
func TestUnixFourMegabyteMessage(t *testing.T) {
	path := serveUnix(t, nil)
	a := dialRaw(t, path)
	pad := strings.Repeat("x", 4_000_000)
	a.send(t, `{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"`+pad+`"}}`)
	line, err := a.read(t, 10*time.Second)
	if err != nil || !strings.Contains(line, `"id":"big"`) || !strings.Contains(line, `"result"`) {
		t.Fatalf("4 MB request: %.200q %v", line, err)
	}
	a.ping(t) // and the connection goes on

	// Conn to Conn: 4 MB out, 4 MB in, then a small one.
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "p.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() { c, _ := l.Accept(); accepted <- c }()
	nc, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	w := transport.NewNetConn(nc, 0, transport.Info{})
	r := transport.NewNetConn(<-accepted, 0, transport.Info{})
	defer w.Close()
	defer r.Close()
	big := []byte(`{"pad":"` + pad + `"}`)
	ctx := context.Background()
	go func() {
		_ = w.WriteMessage(ctx, big)
		_ = w.WriteMessage(ctx, []byte(`{"small":1}`))
	}()
	got, err := r.ReadMessage(ctx)
	if err != nil || string(got) != string(big) {
		t.Fatalf("4 MB message: %d bytes, %v", len(got), err)
	}
	got, err = r.ReadMessage(ctx)
	if err != nil || string(got) != `{"small":1}` {
		t.Fatalf("after it: %q %v", got, err)
	}
}
