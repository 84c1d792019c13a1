package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestStreamConnReadsLines(t *testing.T) {
	in := "{\"a\":1}\n\n  \r\n{\"b\":2}\r\n{\"c\":3}"
	c := NewStreamConn(strings.NewReader(in), io.Discard, nil, 0, Info{})
	ctx := context.Background()
	for _, want := range []string{`{"a":1}`, `{"b":2}`, `{"c":3}`} {
		got, err := c.ReadMessage(ctx)
		if err != nil || string(got) != want {
			t.Fatalf("got %q %v, want %q", got, err, want)
		}
	}
	if _, err := c.ReadMessage(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("end: %v", err)
	}
}

func TestStreamConnTooLarge(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	in := big + "\n{\"ok\":1}\n" + big
	c := NewStreamConn(strings.NewReader(in), io.Discard, nil, 100<<10, Info{})
	ctx := context.Background()
	_, err := c.ReadMessage(ctx)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !tl.Skipped {
		t.Fatalf("first: %v", err)
	}
	got, err := c.ReadMessage(ctx)
	if err != nil || string(got) != `{"ok":1}` {
		t.Fatalf("second: %q %v", got, err)
	}
	if _, err := c.ReadMessage(ctx); !errors.As(err, &tl) || tl.Skipped {
		t.Fatalf("last (no newline before EOF): %v", err)
	}
}

func TestStreamConnConcurrentWrites(t *testing.T) {
	pr, pw := io.Pipe()
	c := NewStreamConn(strings.NewReader(""), pw, pw.Close, 0, Info{})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if err := c.WriteMessage(context.Background(), []byte(`{"msg":"`+strings.Repeat("y", 100)+`"}`)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(pr); done <- b }()
	wg.Wait()
	_ = c.Close()
	out := <-done
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 1600 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if l != `{"msg":"`+strings.Repeat("y", 100)+`"}` {
			t.Fatalf("interleaved line %q", l)
		}
	}
	if err := c.WriteMessage(context.Background(), []byte("{}")); !errors.Is(err, ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
}

func TestUnixListenDialAndStaleSocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "h.sock")
	l, err := ListenUnix(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v %v", fi.Mode(), err)
	}
	ctx := context.Background()
	accepted := make(chan Conn, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err == nil {
			accepted <- c
		}
	}()
	c, err := Dial(ctx, "unix:"+path, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc := <-accepted
	if err := c.WriteMessage(ctx, []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	got, err := sc.ReadMessage(ctx)
	if err != nil || string(got) != `{"x":1}` {
		t.Fatalf("%q %v", got, err)
	}
	_ = c.Close()
	if _, err := sc.ReadMessage(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after peer close: %v", err)
	}
	_ = sc.Close()
	if _, err := ListenUnix(path, 0); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second listener on a live socket: %v", err)
	}
	_ = l.Close()
	if _, err := l.Accept(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("accept after close: %v", err)
	}
	// A regular file in the way is not removed.
	file := filepath.Join(dir, "file")
	_ = os.WriteFile(file, []byte("x"), 0o600)
	if _, err := ListenUnix(file, 0); err == nil {
		t.Fatal("listened over a regular file")
	}
}

func TestPipe(t *testing.T) {
	a, b := Pipe()
	ctx := context.Background()
	msg := []byte(`{"a":1}`)
	if err := a.WriteMessage(ctx, msg); err != nil {
		t.Fatal(err)
	}
	msg[2] = 'X' // the pipe copied it
	got, err := b.ReadMessage(ctx)
	if err != nil || string(got) != `{"a":1}` {
		t.Fatalf("%q %v", got, err)
	}
	_ = a.Close()
	if _, err := b.ReadMessage(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	tctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	c, _ := Pipe()
	if _, err := c.ReadMessage(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ctx: %v", err)
	}
}

func TestDialErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Dial(ctx, "nowhere", DialOptions{}); err == nil || !strings.Contains(err.Error(), "no scheme") {
		t.Fatal(err)
	}
	if _, err := Dial(ctx, "carrier-pigeon:x", DialOptions{}); err == nil || !strings.Contains(err.Error(), "unknown scheme") {
		t.Fatal(err)
	}
	if _, err := Dial(ctx, "stdio:", DialOptions{}); err == nil {
		t.Fatal("empty stdio program accepted")
	}
}

func TestSplitCommand(t *testing.T) {
	cases := map[string][]string{
		`ahp serve --listen stdio`:  {"ahp", "serve", "--listen", "stdio"},
		`prog 'a b' "c \"d\"" e\ f`: {"prog", "a b", `c "d"`, "e f"},
		`  spaced   out  `:          {"spaced", "out"},
		`python3 -c 'print("hi")'`:  {"python3", "-c", `print("hi")`},
		`empty '' arg`:              {"empty", "", "arg"},
	}
	for in, want := range cases {
		got, err := SplitCommand(in)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("SplitCommand(%q) = %q %v", in, got, err)
		}
	}
	if _, err := SplitCommand(`unterminated 'quote`); err == nil {
		t.Error("unterminated quote accepted")
	}
}

func TestStdioCommand(t *testing.T) {
	// cat echoes every line back: a minimal peer.
	ctx := context.Background()
	c, err := Dial(ctx, "stdio:cat", DialOptions{})
	if err != nil {
		t.Skipf("cat not available: %v", err)
	}
	if err := c.WriteMessage(ctx, []byte(`{"echo":true}`)); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReadMessage(ctx)
	if err != nil || string(got) != `{"echo":true}` {
		t.Fatalf("%q %v", got, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.(*CommandConn).Done():
	case <-time.After(5 * time.Second):
		t.Fatal("program still running after Close")
	}
}

func TestUnixStaleSocketRemoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stale.sock")
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ul.SetUnlinkOnClose(false)
	_ = ul.Close() // leaves the socket file behind, as a crashed harness would
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("stale socket not left: %v", err)
	}
	l, err := ListenUnix(path, 0)
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	_ = l.Close()
}
