package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
	"github.com/ahp-go/ahp/transport"
)

// accepting reports whether a harness accepts connections on sock (the
// socket file appears a moment before the listener accepts).
func accepting(sock string) bool {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// startServe runs ahp serve on a Unix socket in dir and waits for it.
func startServe(t *testing.T, bin, dir string, extra ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	sock := filepath.Join(dir, "h.sock")
	args := append([]string{"serve", "--listen", "unix:" + sock, "--admin", "off", "--data-dir", filepath.Join(dir, "data")}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if accepting(sock) {
			return cmd, sock, stderr
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("harness did not start: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Every decision returned to an agent is in the audit log after the
// harness is killed with SIGKILL under load.
func TestKill9KeepsEveryAcknowledgedDecision(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	srv, sock, stderr := startServe(t, bin, dir)

	var mu sync.Mutex
	acked := map[string]protocol.DecisionKind{}
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		conn, err := transport.Dial(ctx, "unix:"+sock, transport.DialOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := client.New(conn, client.Options{SessionID: fmt.Sprintf("kill9-%d", g), AgentID: "load", FailMode: client.FailError, Timeout: 5 * time.Second})
		if _, err := c.Handshake(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			for i := 0; ; i++ {
				marker := fmt.Sprintf("g%d-i%d", g, i)
				cmd := "ls " + marker
				if i%5 == 0 {
					cmd = "rm -rf / # " + marker
				}
				d, err := c.Event(ctx, protocol.EventPreAction, map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": cmd}})
				if err != nil {
					return // the harness is gone
				}
				mu.Lock()
				acked[marker] = d.Kind
				mu.Unlock()
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	if err := srv.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = srv.Wait()
	wg.Wait()
	if len(acked) < 50 {
		t.Fatalf("only %d decisions before the kill; stderr: %s", len(acked), stderr.String())
	}

	db, err := sqlite.Open(ctx, filepath.Join(dir, "data", "ahp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	found := map[string]string{}
	var after int64
	for {
		recs, err := db.Audit().Query(ctx, store.AuditFilter{AfterID: after, Limit: 5000})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			after = r.ID
			ev := string(r.Event)
			for _, field := range strings.FieldsFunc(ev, func(c rune) bool { return c == ' ' || c == '"' }) {
				if strings.HasPrefix(field, "g") && strings.Contains(field, "-i") {
					found[field] = r.Outcome
				}
			}
		}
	}
	missing := 0
	for m, kind := range acked {
		out, ok := found[m]
		if !ok {
			missing++
			continue
		}
		if out != string(kind) {
			t.Errorf("%s: agent got %s, audit says %s", m, kind, out)
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged decisions missing from the audit log after kill -9", missing, len(acked))
	}
	t.Logf("%d acknowledged decisions, all in the audit log (%d records)", len(acked), len(found))
}
