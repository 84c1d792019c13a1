package wstransport

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// TestBatchConnKeepsOrder writes numbered records from one goroutine
// while the peer reads slowly: every byte must arrive, in order.
func TestBatchConnKeepsOrder(t *testing.T) {
	a, b := net.Pipe()
	bc := newBatchConn(a, 5*time.Second)
	var want bytes.Buffer
	for i := range 2000 {
		fmt.Fprintf(&want, "record %d;", i)
	}
	got := make(chan []byte, 1)
	go func() {
		all, _ := io.ReadAll(b)
		got <- all
	}()
	rest := want.Bytes()
	for len(rest) > 0 {
		n := min(len(rest), 37)
		if _, err := bc.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := bc.Close(); err != nil {
		t.Fatal(err)
	}
	if g := <-got; !bytes.Equal(g, want.Bytes()) {
		t.Fatalf("got %d bytes, want %d in order", len(g), want.Len())
	}
}

// TestBatchConnStuckPeer checks that a peer that never reads makes
// writes fail after the timeout, with a bounded amount queued, and that
// Close does not hang.
func TestBatchConnStuckPeer(t *testing.T) {
	a, b := net.Pipe() // unbuffered: nothing is taken unless b reads
	defer b.Close()
	bc := newBatchConn(a, 100*time.Millisecond)
	frame := bytes.Repeat([]byte("x"), 1024)
	began := time.Now()
	var err error
	written := 0
	for written < 64<<20 {
		if _, err = bc.Write(frame); err != nil {
			break
		}
		written += len(frame)
	}
	if err == nil {
		t.Fatal("64 MiB queued for a peer that does not read")
	}
	if written > 2*maxPendingBytes {
		t.Fatalf("%d bytes accepted before failing, want at most %d", written, 2*maxPendingBytes)
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Fatalf("failure took %v", d)
	}
	if !bc.timedOut() {
		t.Fatalf("error %v is not a timeout", err)
	}
	done := make(chan struct{})
	go func() { _ = bc.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("Close hung")
	}
}

// TestBatchConnConcurrentWriters checks that concurrent whole writes are
// never interleaved.
func TestBatchConnConcurrentWriters(t *testing.T) {
	a, b := net.Pipe()
	bc := newBatchConn(a, 5*time.Second)
	got := make(chan []byte, 1)
	go func() {
		all, _ := io.ReadAll(b)
		got <- all
	}()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := bytes.Repeat([]byte{byte('a' + w)}, 100)
			for range 200 {
				if _, err := bc.Write(rec); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	_ = bc.Close()
	all := <-got
	if len(all) != 8*200*100 {
		t.Fatalf("got %d bytes", len(all))
	}
	for i := 0; i < len(all); i += 100 {
		if !bytes.Equal(all[i:i+100], bytes.Repeat(all[i:i+1], 100)) {
			t.Fatalf("record at %d interleaved", i)
		}
	}
}
