package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// With this variable set, the test binary is not a test: it is a stdio
// harness that behaves like one built on the a3s-ahp 2.4 crate's
// AhpServer::run_stdio (see stringIDHarness).
const stringIDHarnessEnv = "AHP_TEST_STRING_ID_HARNESS"

// stringIDHarnessLog names a file where that harness writes one line per
// message it took for a notification.
const stringIDHarnessLog = "AHP_TEST_STRING_ID_HARNESS_LOG"

func init() {
	if os.Getenv(stringIDHarnessEnv) == "1" {
		stringIDHarness()
		os.Exit(0)
	}
}

// stringIDHarness answers newline-delimited JSON-RPC on stdin/stdout the
// way the 2.4 crate does: only a request whose id is a JSON string is a
// request; any other message with a method and params is a notification,
// never answered. It knows ahp/handshake and ahp/event; anything else gets
// -32601, as "ping" does from the crate.
func stringIDHarness() {
	var notes *os.File
	if p := os.Getenv(stringIDHarnessLog); p != "" {
		notes, _ = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 64<<10), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.Params == nil {
			continue
		}
		var id string
		if len(m.ID) == 0 || json.Unmarshal(m.ID, &id) != nil {
			if notes != nil {
				fmt.Fprintf(notes, "%s %s\n", m.Method, m.Params)
			}
			continue
		}
		var result string
		switch m.Method {
		case "ahp/handshake":
			result = `"result":{"protocol_version":"2.4","harness_info":{"name":"ahp-server","version":"2.4.0","capabilities":["pre_action","post_action","pre_prompt","query","batch"]},"config":{"timeout_ms":10000,"batch_size":100,"max_depth":10}}`
		case "ahp/event":
			result = `"result":{"decision":"allow"}`
			if bytes.Contains(m.Params, []byte("rm -rf")) {
				result = `"result":{"decision":"block","reason":"destructive command"}`
			}
		default:
			result = `"error":{"code":-32601,"message":"Method not found"}`
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,%s}`+"\n", m.ID, result)
		_ = out.Flush()
	}
}

// runSendInProcess runs "ahp send ARGS" in this process and returns its
// stdout and exit code.
func runSendInProcess(t *testing.T, args ...string) (string, int) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(append([]string{"send"}, args...))
	err := root.Execute()
	code := 0
	var ec exitCoder
	switch {
	case errors.As(err, &ec):
		code = ec.ExitCode()
	case err != nil:
		code = 1
	}
	if err != nil && err.Error() != "" {
		t.Logf("ahp send: %v", err)
	}
	return strings.TrimSpace(out.String()), code
}

// Issue 8, item 3: ahp send talks to a stdio harness that, like the 2.4
// crate's run_stdio, answers string ids only; a fire-and-forget event gets
// through although that harness has no ping.
func TestSendToStringIDOnlyHarness(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("no path to the test binary: %v", err)
	}
	if strings.ContainsAny(exe, ` '"\`) {
		t.Skipf("test binary path %q needs quoting", exe)
	}
	logPath := filepath.Join(t.TempDir(), "notes")
	t.Setenv(stringIDHarnessEnv, "1")
	t.Setenv(stringIDHarnessLog, logPath)
	addr := "stdio:" + exe

	start := time.Now()
	out, code := runSendInProcess(t, "--connect", addr, "--timeout", "3s", "pre_action", `{"tool_name":"ls"}`)
	if code != exitAllow || out != `{"decision":"allow"}` {
		t.Fatalf("pre_action ls: exit %d, output %q after %v", code, out, time.Since(start))
	}
	out, code = runSendInProcess(t, "--connect", addr, "--timeout", "3s", "pre_action", rmRoot)
	if code != exitBlock || !strings.Contains(out, `"destructive command"`) {
		t.Fatalf("pre_action rm: exit %d, output %q", code, out)
	}
	if _, code = runSendInProcess(t, "--connect", addr, "--timeout", "3s", "post_action", `{"tool_name":"ls","result":"ok"}`); code != exitAllow {
		t.Fatalf("post_action: exit %d", code)
	}
	notes, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(notes), `ahp/event {"event_type":"post_action"`) {
		t.Fatalf("the harness did not get the post_action notification: %q %v", notes, err)
	}
	if strings.Count(string(notes), "\n") != 1 {
		t.Fatalf("the harness took requests for notifications (numeric ids?): %q", notes)
	}
}
