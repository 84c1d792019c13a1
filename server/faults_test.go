package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/transport"
	"github.com/ahp-go/ahp/transport/httpserver"
	_ "github.com/ahp-go/ahp/transport/httptransport" // the http: dialer
)

// slowHandler allows every event but a pre_action of the tool "slow",
// which it holds until its context ends, after telling started.
type slowHandler struct {
	server.BaseHandler
	started func()
}

func (h *slowHandler) HandleEvent(ctx context.Context, ev *protocol.Event) (protocol.Decision, error) {
	var p struct {
		ToolName string `json:"tool_name"`
	}
	_ = json.Unmarshal(ev.Payload, &p)
	if p.ToolName == "slow" {
		h.started()
		<-ctx.Done()
		return protocol.Block("stopped"), nil
	}
	return protocol.Allow(), nil
}

// childEnv, when set, makes TestStdioHarnessChild a stdio harness that
// writes its pid to the named file when a slow call arrives.
const childEnv = "AHP_TEST_STDIO_HARNESS_PIDFILE"

// TestStdioHarnessChild is not a test: run by TestStdioHarnessKilled as
// the child process of a stdio: address, it serves the slow handler on
// its stdin and stdout.
func TestStdioHarnessChild(t *testing.T) {
	pidFile := os.Getenv(childEnv)
	if pidFile == "" {
		t.Skip("the child process of TestStdioHarnessKilled")
	}
	h := &slowHandler{started: func() {
		_ = os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o600)
	}}
	s := server.New(h, server.Options{})
	_ = s.ServeConn(context.Background(), transport.Stdio(os.Stdin, os.Stdout, 0))
	os.Exit(0)
}

// settle waits until the number of goroutines is back to at most n and
// fails the test if it is not within 5 s.
func settle(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := runtime.NumGoroutine(); got > n {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutine leak: %d, want at most %d\n%s", got, n, buf[:runtime.Stack(buf, true)])
	}
}

// failsClosed runs a blocking call of the tool "slow", waits for the
// harness to hold it, breaks the harness with kill, and checks that the
// call comes back as a block with a reason well within the client's
// timeout.
func failsClosed(t *testing.T, f *client.Failover, held <-chan struct{}, kill func(), timeout time.Duration) {
	t.Helper()
	got := make(chan protocol.Decision, 1)
	gotErr := make(chan error, 1)
	go func() {
		d, err := f.Event(context.Background(), protocol.EventPreAction, map[string]any{"tool_name": "slow"})
		if err != nil {
			gotErr <- err
			return
		}
		got <- d
	}()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the harness never received the blocking call")
	}
	start := time.Now()
	kill()
	select {
	case d := <-got:
		if d.Kind != protocol.DecisionBlock || d.Reason == "" {
			t.Fatalf("after the harness died: %+v, want a block with a reason", d)
		}
		if el := time.Since(start); el >= timeout/2 { // the loss is known at once: no waiting for the timeout
			t.Fatalf("failed closed after %v: the lost connection was left to the client timeout %v", el, timeout)
		}
		t.Logf("failed closed in %v: %s", time.Since(start).Round(time.Millisecond), d.Reason)
	case err := <-gotErr:
		t.Fatalf("a blocking call with FailClosed returned an error instead of a block: %v", err)
	case <-time.After(2 * timeout):
		t.Fatal("the blocking call did not return")
	}
}

// TestStdioHarnessKilled kills (SIGKILL) a stdio harness child while it
// holds a blocking call: the call fails closed within the client timeout,
// and the next call starts the harness again and is answered.
func TestStdioHarnessKilled(t *testing.T) {
	before := runtime.NumGoroutine()
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Setenv(childEnv, pidFile)
	addr := "stdio:" + os.Args[0] + " -test.run=^TestStdioHarnessChild$"
	const timeout = 5 * time.Second
	f, err := client.DialAny(context.Background(), []string{addr}, transport.DialOptions{}, client.Options{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Handshake(context.Background()); err != nil {
		t.Fatal(err)
	}
	held := make(chan struct{})
	var pid int
	go func() {
		for {
			if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
				pid, _ = strconv.Atoi(string(b))
				close(held)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	failsClosed(t, f, held, func() {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Errorf("kill %d: %v", pid, err)
		}
	}, timeout)
	// The harness is back as soon as it is started again: the same client
	// does that on its next call.
	d, err := f.Event(context.Background(), protocol.EventPreAction, map[string]any{"tool_name": "read"})
	if err != nil || d.Kind != protocol.DecisionAllow {
		t.Fatalf("the next call after the kill: %+v %v", d, err)
	}
	_ = f.Close()
	settle(t, before)
}

// resetProxy forwards TCP connections from its own address to target
// until stopped; Reset ends every connection it carries with a TCP RST
// and stops accepting, Start accepts again on the same address.
type resetProxy struct {
	t      *testing.T
	addr   string
	target string

	mu    sync.Mutex
	l     net.Listener
	conns []*net.TCPConn
	wg    sync.WaitGroup
}

func (p *resetProxy) Start() {
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.l, p.addr = l, l.Addr().String()
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c.(*net.TCPConn), b.(*net.TCPConn))
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); _, _ = io.Copy(b, c); _ = b.Close() }()
			go func() { defer p.wg.Done(); _, _ = io.Copy(c, b); _ = c.Close() }()
		}
	}()
}

// Reset stops accepting and resets every connection.
func (p *resetProxy) Reset() {
	p.mu.Lock()
	_ = p.l.Close()
	for _, c := range p.conns {
		_ = c.SetLinger(0) // close sends RST, not FIN
		_ = c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}

// TestHTTPConnectionReset resets the TCP connection of an HTTP agent while
// the harness holds its blocking call, and keeps the harness unreachable
// for a while: the call fails closed within the client timeout, calls
// made while it is unreachable fail closed at once, and the same client
// is answered again once the harness is back on its address.
func TestHTTPConnectionReset(t *testing.T) {
	before := runtime.NumGoroutine()
	held := make(chan struct{}, 1)
	s := server.New(&slowHandler{started: func() { held <- struct{}{} }}, server.Options{})
	ep, err := httpserver.New(s, httpserver.Options{Authenticator: auth.InsecureNoAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ahp", ep)
	backend, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(backend) }()
	proxy := &resetProxy{t: t, addr: "127.0.0.1:0", target: backend.Addr().String()}
	proxy.Start()

	const timeout = 5 * time.Second
	addr := "http://" + proxy.addr + "/ahp"
	f, err := client.DialAny(context.Background(), []string{addr}, transport.DialOptions{Timeout: timeout}, client.Options{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Handshake(context.Background()); err != nil {
		t.Fatal(err)
	}
	failsClosed(t, f, held, proxy.Reset, timeout)

	start := time.Now()
	d, err := f.Event(context.Background(), protocol.EventPreAction, map[string]any{"tool_name": "read"})
	if err != nil || d.Kind != protocol.DecisionBlock {
		t.Fatalf("with the harness unreachable: %+v %v, want a block", d, err)
	}
	if el := time.Since(start); el >= timeout {
		t.Errorf("an unreachable harness took %v to fail closed", el)
	}
	t.Logf("unreachable: failed closed in %v: %s", time.Since(start).Round(time.Millisecond), d.Reason)

	proxy.Start() // the harness is back on the same address
	d, err = f.Event(context.Background(), protocol.EventPreAction, map[string]any{"tool_name": "read"})
	if err != nil || d.Kind != protocol.DecisionAllow {
		t.Fatalf("once the harness is back: %+v %v", d, err)
	}
	_ = f.Close()
	proxy.Reset()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	http.DefaultClient.CloseIdleConnections()
	settle(t, before)
}

// peakRSS reads the process's peak resident set size (VmHWM) in bytes, and
// with reset first sets the peak back to the current size.
func peakRSS(t *testing.T, reset bool) int64 {
	t.Helper()
	if reset {
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			t.Skipf("cannot reset the peak RSS (%v): Linux only", err)
		}
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmHWM in /proc/self/status")
	return 0
}

// TestHundredMegabyteLine streams a 100 MB line (never held in memory by
// the test) to a server with the default 4 MiB message limit: it answers
// with a clear error, goes on answering on the same connection, the peak
// RSS of the process grows by far less than the line, and no goroutine
// is left behind.
func TestHundredMegabyteLine(t *testing.T) {
	before := runtime.NumGoroutine()
	s := server.New(server.BaseHandler{}, server.Options{})
	path := filepath.Join(t.TempDir(), "h.sock")
	l, err := transport.ListenUnix(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Serve(ctx, l); close(done) }()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	runtime.GC()
	base := peakRSS(t, true)

	const size = 100 << 20
	wrote := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(c, 1<<20)
		_, err := io.WriteString(w, `{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"t","depth":0,"payload":{"tool_name":"`)
		chunk := strings.Repeat("A", 1<<20)
		for n := 0; err == nil && n < size; n += len(chunk) {
			_, err = w.WriteString(chunk)
		}
		if err == nil {
			_, err = io.WriteString(w, "\"}}}\n"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
		}
		if err == nil {
			err = w.Flush()
		}
		wrote <- err
	}()
	r := bufio.NewReader(c)
	first, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("no answer to the 100 MB line: %v", err)
	}
	if !strings.Contains(first, `"code":-32600`) || !strings.Contains(first, "larger than the limit") {
		t.Errorf("answer to the 100 MB line: %.300s", first)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("writing the 100 MB line: %v (the server stopped reading)", err)
	}
	second, err := r.ReadString('\n')
	if err != nil || !strings.Contains(second, `"result":{}`) {
		t.Fatalf("ping after the 100 MB line: %q %v", second, err)
	}
	peak := peakRSS(t, false)
	growth := peak - base
	t.Logf("100 MB line: peak RSS %d MiB (%+d MiB over the %d MiB before); answer: %.160s",
		peak>>20, growth>>20, base>>20, strings.TrimSpace(first))
	if growth > 64<<20 { // a buffered line would add 100 MiB or more; -race alone adds about 40
		t.Errorf("peak RSS grew by %d MiB for a 100 MB line: the line is being buffered", growth>>20)
	}
	_ = c.Close()
	cancel()
	_ = l.Close()
	<-done
	settle(t, before)
}
