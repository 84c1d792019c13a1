package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	e2eOnce sync.Once
	e2eBin  string
	e2eErr  error
	e2eDir  string
)

// e2eBinary builds the ahp binary once for the end-to-end tests.
func e2eBinary(t *testing.T) string {
	t.Helper()
	e2eOnce.Do(func() {
		e2eDir, e2eErr = os.MkdirTemp("", "ahp-e2e-")
		if e2eErr != nil {
			return
		}
		e2eBin = filepath.Join(e2eDir, "ahp")
		out, err := exec.Command("go", "build", "-o", e2eBin, ".").CombinedOutput()
		if err != nil {
			e2eErr = errors.New(string(out))
		}
	})
	if e2eErr != nil {
		t.Fatalf("build ahp: %v", e2eErr)
	}
	return e2eBin
}

func TestMain(m *testing.M) {
	// The default data directory and socket (config.DefaultDataDir,
	// DefaultSocket) of every ahp these tests start are in a directory
	// of their own, never the user's.
	xdg, err := os.MkdirTemp("", "ahp-cmd-test-")
	if err != nil {
		panic(err)
	}
	for _, v := range []string{"XDG_STATE_HOME", "XDG_RUNTIME_DIR"} {
		_ = os.MkdirAll(filepath.Join(xdg, v), 0o700)
		_ = os.Setenv(v, filepath.Join(xdg, v))
	}
	_ = os.Unsetenv("AHP_CONNECT")
	_ = os.Unsetenv("AHP_DATA_DIR")
	code := m.Run()
	_ = os.RemoveAll(xdg)
	if e2eDir != "" {
		_ = os.RemoveAll(e2eDir)
	}
	os.Exit(code)
}

// runSendCmd runs ahp send and returns stdout and the exit code.
func runSendCmd(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	return runSendCmdRaw(t, bin, append([]string{"send"}, args...)...)
}

// runSendCmdRaw runs the ahp binary and returns stdout and the exit code.
func runSendCmdRaw(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run: %v", err)
	}
	if code == 1 {
		t.Logf("stderr: %s", errb.String())
	}
	return strings.TrimSpace(out.String()), code
}

const (
	rmRoot = `{"tool_name":"bash","arguments":{"command":"rm -rf /"}}`
	lsCmd  = `{"tool_name":"bash","arguments":{"command":"ls"}}`
)

func TestSendServeStdio(t *testing.T) {
	bin := e2eBinary(t)
	connect := "stdio:" + bin + " serve --listen stdio --log-level error --admin off --data-dir " + t.TempDir()
	out, code := runSendCmd(t, bin, "--connect", connect, "pre_action", rmRoot)
	if code != 2 || !strings.Contains(out, `"decision":"block"`) {
		t.Fatalf("rm -rf /: exit %d, %s", code, out)
	}
	out, code = runSendCmd(t, bin, "--connect", connect, "pre_action", lsCmd)
	if code != 0 || !strings.HasPrefix(out, `{"decision":"allow"`) {
		t.Fatalf("ls: exit %d, %s", code, out)
	}
}

func TestSendServeUnix(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "h.sock")
	srv := exec.Command(bin, "serve", "--listen", "unix:"+sock, "--log-level", "error", "--admin", "off")
	srv.Dir = dir
	stderr := &syncBuffer{}
	srv.Stderr = stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = srv.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- srv.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = srv.Process.Kill()
			t.Error("serve did not stop on SIGINT")
		}
		if _, err := os.Stat(sock); err == nil {
			t.Error("socket file left behind")
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if accepting(sock) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("socket never appeared; stderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	out, code := runSendCmd(t, bin, "--connect", "unix:"+sock, "pre_action", rmRoot)
	if code != 2 || !strings.Contains(out, `"decision":"block"`) {
		t.Fatalf("rm -rf /: exit %d, %s", code, out)
	}
	out, code = runSendCmd(t, bin, "--connect", "unix:"+sock, "pre_action", lsCmd)
	if code != 0 || !strings.HasPrefix(out, `{"decision":"allow"`) {
		t.Fatalf("ls: exit %d, %s", code, out)
	}
	out, code = runSendCmd(t, bin, "--connect", "unix:"+sock, "intent_detection", `{"session_id":"s","prompt":"where is main.go","workspace":"."}`)
	if code != 0 || !strings.Contains(out, `"detected_intent":"locate"`) {
		t.Fatalf("intent: exit %d, %s", code, out)
	}
	// Errors exit 1.
	if _, code = runSendCmd(t, bin, "--connect", "unix:"+sock, "pre_action", `{not json`); code != 1 {
		t.Fatalf("bad payload: exit %d", code)
	}
	if _, code = runSendCmd(t, bin, "--connect", "unix:"+filepath.Join(dir, "absent.sock"), "pre_action", lsCmd); code != 1 {
		t.Fatalf("absent harness: exit %d", code)
	}
}
