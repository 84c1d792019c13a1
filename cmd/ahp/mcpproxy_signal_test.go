package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startIgnoringSIGINT starts the ahp binary the way a shell starts a
// background job: with SIGINT ignored, which Go keeps unless the program
// asks for the signal.
func startIgnoringSIGINT(t *testing.T, bin string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", `trap '' INT; exec "$0" "$@"`, bin}, args...)...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if _, err := cmd.StdinPipe(); err != nil { // stays open: stdio mode waits on it
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, stderr
}

// exitsWithin waits for cmd and returns its exit code, failing the test
// if it is still running after d.
func exitsWithin(t *testing.T, cmd *exec.Cmd, d time.Duration, stderr *syncBuffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("still running %s after SIGINT; stderr:\n%s", d, stderr.String())
		return -1
	}
}

// SIGINT stops ahp mcp-proxy in order (exit status 0) even when it was
// started with SIGINT ignored, in both modes; in stdio mode the MCP
// server process it started is stopped too.
func TestMCPProxyStopsOnSIGINT(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	harness := "unix:" + filepath.Join(dir, "none.sock") // never dialled: no tool call is made

	t.Run("listen", func(t *testing.T) {
		cmd, stderr := startIgnoringSIGINT(t, bin, "mcp-proxy", "--connect", harness,
			"--listen", "http://127.0.0.1:0", "--", "cat")
		waitForOutput(t, stderr, "MCP proxy listening on")
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if code := exitsWithin(t, cmd, 10*time.Second, stderr); code != 0 {
			t.Fatalf("exit status %d, want 0; stderr:\n%s", code, stderr.String())
		}
	})

	t.Run("stdio", func(t *testing.T) {
		pidFile := filepath.Join(dir, "server.pid")
		cmd, stderr := startIgnoringSIGINT(t, bin, "mcp-proxy", "--connect", harness, "--",
			"sh", "-c", `echo $$ > "$0"; exec cat`, pidFile)
		var pid int
		deadline := time.Now().Add(10 * time.Second)
		for {
			b, err := os.ReadFile(pidFile)
			if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && n > 0 {
				pid = n
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the MCP server did not start; stderr:\n%s", stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if code := exitsWithin(t, cmd, 10*time.Second, stderr); code != 0 {
			t.Fatalf("exit status %d, want 0; stderr:\n%s", code, stderr.String())
		}
		if syscall.Kill(pid, 0) == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the MCP server process %d still runs after the proxy stopped", pid)
		}
	})
}

// waitForOutput waits until buf holds want.
func waitForOutput(t *testing.T, buf *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in:\n%s", want, buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
