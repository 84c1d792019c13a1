package httptransport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-go/ahp/transport"
)

// serve runs h on 127.0.0.1 until the test ends and returns its /ahp URL.
func serve(t *testing.T, h http.Handler, configure func(*http.Server)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{ReadHeaderTimeout: time.Second, Handler: h}
	if configure != nil {
		configure(hs)
	}
	go func() { _ = hs.Serve(l) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + l.Addr().String() + "/ahp"
}

// echo answers every request with a result carrying its id and every
// notification with 204.
func echo(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	id, req := classify(b)
	if !req {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{}}`)
}

// dialers are the two Conn implementations.
var dialers = map[string]func(t *testing.T, url string, o transport.DialOptions) (transport.Conn, error){
	"Dial": func(_ *testing.T, url string, o transport.DialOptions) (transport.Conn, error) {
		return Dial(context.Background(), url, o)
	},
	"NewConn": func(t *testing.T, url string, o transport.DialOptions) (transport.Conn, error) {
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		return NewConn(url, &http.Client{Transport: tr}, o)
	},
}

func request(id int) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"ping"}`)
}

func read(t *testing.T, c transport.Conn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := c.ReadMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRequestsAndNotifications(t *testing.T) {
	url := serve(t, http.HandlerFunc(echo), nil)
	for name, dial := range dialers {
		t.Run(name, func(t *testing.T) {
			c, err := dial(t, url, transport.DialOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			const n = 50
			for i := range n {
				if err := c.WriteMessage(context.Background(), request(i)); err != nil {
					t.Fatal(err)
				}
			}
			seen := map[string]bool{}
			for range n {
				seen[read(t, c)] = true
			}
			if len(seen) != n {
				t.Fatalf("%d distinct responses", len(seen))
			}
			if err := c.WriteMessage(context.Background(), []byte(`{"jsonrpc":"2.0","method":"ahp/event","params":{}}`)); err != nil {
				t.Fatalf("notification: %v", err)
			}
		})
	}
}

func TestErrorStatus(t *testing.T) {
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "go away", http.StatusForbidden)
	}), nil)
	for name, dial := range dialers {
		t.Run(name, func(t *testing.T) {
			c, err := dial(t, url, transport.DialOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err = c.WriteMessage(context.Background(), []byte(`{"jsonrpc":"2.0","method":"ahp/event","params":{}}`))
			var se *StatusError
			if !errors.As(err, &se) || se.Code != 403 || se.Body != "go away" {
				t.Fatalf("notification: %v", err)
			}
			if err := c.WriteMessage(context.Background(), request(9)); err != nil {
				t.Fatal(err)
			}
			got := read(t, c)
			if !strings.Contains(got, `"id":9`) || !strings.Contains(got, `"code":-32001`) || !strings.Contains(got, `"http_status":403`) {
				t.Fatalf("request: %s", got)
			}
		})
	}
}

func TestIdleConnectionClosedByServer(t *testing.T) {
	url := serve(t, http.HandlerFunc(echo), func(s *http.Server) { s.IdleTimeout = 50 * time.Millisecond })
	for name, dial := range dialers {
		t.Run(name, func(t *testing.T) {
			c, err := dial(t, url, transport.DialOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for i := range 3 {
				if err := c.WriteMessage(context.Background(), request(i)); err != nil {
					t.Fatal(err)
				}
				read(t, c)
				time.Sleep(150 * time.Millisecond)
			}
		})
	}
}

func TestConnectionCloseAndChunked(t *testing.T) {
	var conns atomic.Int32
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		id, _ := classify(b)
		w.Header().Set("Connection", "close")
		w.Header().Set("Content-Type", "application/json")
		w.(http.Flusher).Flush() // forces a chunked body
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{}}`)
	}), func(s *http.Server) {
		s.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				conns.Add(1)
			}
		}
	})
	c, err := Dial(context.Background(), url, transport.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 3 {
		if err := c.WriteMessage(context.Background(), request(i)); err != nil {
			t.Fatal(err)
		}
		if got := read(t, c); !strings.Contains(got, `"id":`+strconv.Itoa(i)) {
			t.Fatalf("response %s", got)
		}
	}
	if conns.Load() != 3 {
		t.Fatalf("%d connections for 3 requests answered with Connection: close", conns.Load())
	}
}

func TestHeaderInjectionRefused(t *testing.T) {
	for _, o := range []transport.DialOptions{
		{APIKey: "k\r\nX-Evil: 1"},
		{BearerToken: "t\nx"},
		{Header: http.Header{"X-Extra": {"a\rb"}}},
		{Header: http.Header{"Bad Name": {"v"}}},
	} {
		if _, err := Dial(context.Background(), "http://127.0.0.1:1/ahp", o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

func TestCloseWhileWriting(t *testing.T) {
	url := serve(t, http.HandlerFunc(echo), nil)
	for name, dial := range dialers {
		t.Run(name, func(t *testing.T) {
			for round := range 20 {
				c, err := dial(t, url, transport.DialOptions{})
				if err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				for i := range 16 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range 20 {
							if err := c.WriteMessage(context.Background(), request(round*100+i)); err != nil {
								return
							}
						}
					}()
				}
				go func() {
					for {
						if _, err := c.ReadMessage(context.Background()); err != nil {
							return
						}
					}
				}()
				time.Sleep(time.Duration(round%4) * time.Millisecond)
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
				wg.Wait()
				if err := c.WriteMessage(context.Background(), request(1)); !errors.Is(err, transport.ErrClosed) {
					t.Fatalf("write after close: %v", err)
				}
			}
		})
	}
}

func TestCloseWithRequestInFlight(t *testing.T) {
	release := make(chan struct{})
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), nil)
	defer close(release)
	for name, dial := range dialers {
		t.Run(name, func(t *testing.T) {
			c, err := dial(t, url, transport.DialOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.WriteMessage(context.Background(), request(1)); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { _ = c.Close(); close(done) }()
			select {
			case <-done:
			case <-time.After(3 * time.Second):
				t.Fatal("Close waited for the harness")
			}
		})
	}
}

// TestMain fails the package when goroutines outlive the tests.
func TestMain(m *testing.M) {
	before := runtime.NumGoroutine()
	code := m.Run()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); code == 0 && n > before {
		buf := make([]byte, 1<<20)
		fmt.Fprintf(os.Stderr, "%d goroutines leaked:\n%s", n-before, buf[:runtime.Stack(buf, true)])
		code = 1
	}
	os.Exit(code)
}
