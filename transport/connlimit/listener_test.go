package connlimit

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// failingListener fails Accept with err for its first n calls, then
// hands out one end of a pipe.
type failingListener struct {
	mu    sync.Mutex
	n     int
	err   error
	calls int
}

func (f *failingListener) Accept() (net.Conn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.calls <= f.n {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", f.err)}
	}
	a, _ := net.Pipe()
	return a, nil
}
func (f *failingListener) Close() error   { return nil }
func (f *failingListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestAcceptEMFILEBacksOffAndRecovers(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE} {
		t.Run(errno.Error(), func(t *testing.T) {
			var logs syncBuffer
			lim, err := New(10, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			f := &failingListener{n: 12, err: errno}
			ln := lim.Listener(f, ListenerOptions{Transport: "unix", Name: "unix:test"}).(*listener)
			var waits []time.Duration
			ln.sleep = func(_ <-chan struct{}, d time.Duration) bool { waits = append(waits, d); return true }
			c, err := ln.Accept()
			if err != nil {
				t.Fatalf("Accept after %d failures: %v", f.n, err)
			}
			defer c.Close()
			want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000, 1000}
			if len(waits) != len(want) {
				t.Fatalf("waited %d times, want %d: %v", len(waits), len(want), waits)
			}
			for i, w := range want {
				if waits[i] != w*time.Millisecond {
					t.Fatalf("wait %d: %v, want %v (all: %v)", i, waits[i], w*time.Millisecond, waits)
				}
			}
			if n := strings.Count(logs.String(), "accept failing"); n != 1 {
				t.Fatalf("%d warnings for 12 failures in a burst, want 1:\n%s", n, logs.String())
			}
			if lim.Open() != 1 {
				t.Fatalf("open %d, want 1", lim.Open())
			}
		})
	}
}

func TestAcceptBackOffEndsOnClose(t *testing.T) {
	lim, _ := New(10, Options{})
	f := &failingListener{n: 1 << 30, err: syscall.EMFILE}
	ln := lim.Listener(f, ListenerOptions{Name: "test"})
	errc := make(chan error, 1)
	go func() { _, err := ln.Accept(); errc <- err }()
	time.Sleep(50 * time.Millisecond)
	_ = ln.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept after Close: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Accept still backing off after Close")
	}
}

func TestLimitRefusesAndCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	var logs syncBuffer
	lim, err := New(2, Options{Registerer: reg, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var refused []int
	var mu sync.Mutex
	ln := lim.Listener(inner, ListenerOptions{Transport: "test", Name: "one", Refuse: func(c net.Conn, max int) {
		mu.Lock()
		refused = append(refused, max)
		mu.Unlock()
		_, _ = c.Write([]byte("full\n"))
	}})
	defer ln.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	var clients []net.Conn
	for range 5 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	a, b := <-accepted, <-accepted
	// The other three were refused: each reads the refusal, then EOF.
	for _, c := range clients[2:] {
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		buf := make([]byte, 16)
		n, _ := c.Read(buf)
		if string(buf[:n]) != "full\n" {
			t.Fatalf("refused client read %q", buf[:n])
		}
	}
	if got := metric(t, reg, "ahp_connections_refused_total", "reason", ReasonLimit); got != 3 {
		t.Fatalf("refused counter %v, want 3", got)
	}
	if got := metric(t, reg, "ahp_connections_open", "listener", "one"); got != 2 {
		t.Fatalf("open gauge %v, want 2", got)
	}
	if n := strings.Count(logs.String(), "connection limit"); n != 1 {
		t.Fatalf("%d warnings for 3 refusals, want 1", n)
	}
	// Closing one frees its slot for the next agent.
	_ = a.Close()
	_ = a.Close() // twice: freed once
	c, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case d := <-accepted:
		defer d.Close()
	case <-time.After(time.Second):
		t.Fatal("a freed slot was not reused")
	}
	if lim.Open() != 2 {
		t.Fatalf("open %d, want 2", lim.Open())
	}
	_ = b.Close()
	for _, c := range clients {
		_ = c.Close()
	}
}

func TestUnmarkedPastLimitMarked(t *testing.T) {
	lim, _ := New(1, Options{})
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := lim.Listener(inner, ListenerOptions{Name: "grpc"})
	defer ln.Close()
	for range 2 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, _ := ln.Accept()
	second, _ := ln.Accept()
	if Refused(first) || !Refused(second) {
		t.Fatalf("refused: first %v second %v", Refused(first), Refused(second))
	}
	if !lim.RefusedAddr(second.LocalAddr(), second.RemoteAddr()) || lim.RefusedAddr(first.LocalAddr(), first.RemoteAddr()) {
		t.Fatal("RefusedAddr does not tell the connections apart")
	}
	_ = second.Close()
	if lim.RefusedAddr(second.LocalAddr(), second.RemoteAddr()) {
		t.Fatal("a closed refused connection is still listed")
	}
	_ = first.Close()
}

// metric returns the value of the series of name in reg whose label has
// the given value.
func metric(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label && lp.GetValue() == value {
					if m.Counter != nil {
						return m.GetCounter().GetValue()
					}
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{%s=%q}", name, label, value)
	return 0
}

func TestDefaultMax(t *testing.T) {
	for _, c := range []struct {
		files uint64
		want  int
	}{{1024, 896}, {4096, 3584}, {20000, 18976}, {1 << 20, 1<<20 - 1024}, {100, 36}, {50, 16}} {
		if got := defaultFor(c.files); got != c.want {
			t.Errorf("file limit %d: default %d, want %d", c.files, got, c.want)
		}
	}
	if n, ok := fileLimit(); ok && DefaultMax() != defaultFor(n) {
		t.Errorf("DefaultMax %d for file limit %d", DefaultMax(), n)
	}
}
