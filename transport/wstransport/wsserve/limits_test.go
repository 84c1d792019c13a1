package wsserve_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport/internal/nettest"
	"github.com/ahp-go/ahp/transport/wstransport/wsserve"
)

// rawDial opens a WebSocket with coder/websocket directly, so that a test
// can misbehave. readBuf, when > 0, shrinks the socket receive buffer.
func rawDial(t *testing.T, url string, readBuf int) *websocket.Conn {
	t.Helper()
	d := &net.Dialer{}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil && readBuf > 0 {
			_ = c.(*net.TCPConn).SetReadBuffer(readBuf)
		}
		return c, err
	}}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	return ws
}

// TestOversizedFrame checks that a frame over the limit closes the
// connection with status 1009 and never reaches the handler.
func TestOversizedFrame(t *testing.T) {
	e := start(t, wsserve.Options{Authenticator: auth.InsecureNoAuth{}, MaxMessageBytes: 1024}, nil, serverOpts())
	ws := rawDial(t, e.url, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	big := `{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":{"event_type":"pre_action","payload":"` + strings.Repeat("x", 2048) + `"}}`
	if err := ws.Write(ctx, websocket.MessageText, []byte(big)); err != nil {
		t.Fatal(err)
	}
	_, _, err := ws.Read(ctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusMessageTooBig {
		t.Fatalf("read after oversized frame: %v (status %d), want close 1009", err, got)
	}
	if n := e.h.Calls(); n != 0 {
		t.Fatalf("%d calls reached the handler, want 0", n)
	}
	nettest.Eventually(t, 5*time.Second, "connection to be dropped", func() bool { return e.ws.Connections() == 0 })
}

// TestOneMessagePerFrame checks garbage and batching by frame: a frame that
// is not JSON gets -32700, and each frame holds one message.
func TestOneMessagePerFrame(t *testing.T) {
	e := start(t, wsserve.Options{Authenticator: auth.InsecureNoAuth{}}, nil, serverOpts())
	ws := rawDial(t, e.url, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, m := range []string{"not json at all", `{"jsonrpc":"2.0","id":"p","method":"ping"}`} {
		if err := ws.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	_, b, err := ws.Read(ctx)
	if err != nil || !strings.Contains(string(b), `"code":-32700`) {
		t.Fatalf("garbage: %s, %v; want a -32700 error", b, err)
	}
	_, b, err = ws.Read(ctx)
	if err != nil || string(b) != `{"jsonrpc":"2.0","id":"p","result":{}}` {
		t.Fatalf("ping: %s, %v", b, err)
	}
	if n := e.h.Calls(); n != 0 {
		t.Fatalf("%d calls reached the handler, want 0", n)
	}
}

// TestStalledReaderDropped floods the server with pings whose responses
// are large (their id is echoed) and never reads them. The server must
// drop the connection after its write timeout instead of buffering.
func TestStalledReaderDropped(t *testing.T) {
	e := start(t, wsserve.Options{
		Authenticator: auth.InsecureNoAuth{},
		WriteTimeout:  300 * time.Millisecond,
		PingInterval:  -1, // the write timeout alone must do it
	}, nil, server.Options{MaxInFlight: 8})
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	ws := rawDial(t, e.url, 4096)
	id := strings.Repeat("i", 64<<10)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 1000; i++ { // 64 MiB of responses if all were answered
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":"%s%d","method":"ping"}`, id, i)
			if ws.Write(ctx, websocket.MessageText, []byte(msg)) != nil {
				return // the server stopped reading, then dropped us
			}
		}
	}()
	start := time.Now()
	nettest.Eventually(t, 15*time.Second, "the stalled connection to be dropped", func() bool {
		return e.ws.Connections() == 0 && time.Since(start) > 100*time.Millisecond
	})
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	_ = ws.CloseNow()
	wg.Wait()
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 32<<20 {
		t.Fatalf("heap grew by %d MiB while a peer did not read", grew>>20)
	}
	if n := e.h.Calls(); n != 0 {
		t.Fatalf("%d calls reached the handler, want 0", n)
	}
}

// TestKeepAlive checks that a peer that answers pings stays connected and
// one that does not (it never reads, so never sends a pong) is dropped.
func TestKeepAlive(t *testing.T) {
	e := start(t, wsserve.Options{
		Authenticator: auth.InsecureNoAuth{},
		PingInterval:  50 * time.Millisecond,
		PongTimeout:   500 * time.Millisecond, // generous: the answering peer may be starved of CPU
	}, nil, serverOpts())

	alive := rawDial(t, e.url, 0)
	readCtx := alive.CloseRead(context.Background()) // reads, so pongs go out
	silent := rawDial(t, e.url, 0)                   // never reads: no pongs
	_ = silent

	nettest.Eventually(t, 5*time.Second, "the silent peer to be dropped", func() bool { return e.ws.Connections() == 1 })
	time.Sleep(700 * time.Millisecond) // many ping intervals more
	if n := e.ws.Connections(); n != 1 {
		t.Fatalf("%d connections open, want the answering peer only", n)
	}
	select {
	case <-readCtx.Done():
		t.Fatal("the answering peer was disconnected")
	default:
	}
}

// TestManyInFlight sends requests that the handler holds until all have
// arrived: they can only complete if they are in flight together.
func TestManyInFlight(t *testing.T) {
	e := start(t, wsserve.Options{Authenticator: auth.InsecureNoAuth{}}, nil, serverOpts())
	c, err := dial(t, e.url, nopts())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 32
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := c.Event(ctx, "pre_action", nettest.Wait)
			errs <- err
		}()
	}
	for range n {
		select {
		case <-e.h.Waiting:
		case <-ctx.Done():
			t.Fatal("requests were not handled concurrently")
		}
	}
	close(e.h.Release)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestOutlivesHTTPServerTimeouts checks that the read and write deadlines
// of the HTTP server do not end upgraded connections.
func TestOutlivesHTTPServerTimeouts(t *testing.T) {
	h := nettest.NewHandler()
	ws := wsserve.NewHandler(server.New(h, server.Options{}), wsserve.Options{Authenticator: auth.InsecureNoAuth{}})
	ts := httptest.NewUnstartedServer(ws)
	ts.Config.ReadTimeout = 150 * time.Millisecond
	ts.Config.WriteTimeout = 150 * time.Millisecond
	ts.Start()
	t.Cleanup(ts.Close)
	t.Cleanup(func() { _ = ws.Close() })
	c, err := dial(t, strings.Replace(ts.URL, "http", "ws", 1)+"/ahp", nopts())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // past both deadlines
	nettest.RoundTrip(t, c)
}
