package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 8, items 1 and 2, against the real harness over a Unix socket:
// the 2.4 README's handshake (no ids) is accepted and recorded with the
// ids it was given; a pre_action whose arguments repeat "command" is
// refused in either order, and no decision on it reaches the audit log.
func TestServeOneReadingAndReferenceHandshake(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	srv, sock, stderr := startServe(t, bin, dir)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = srv.Process.Signal(os.Interrupt)
			_ = srv.Wait()
		}
	}
	defer stop()

	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	call := func(msg string) map[string]any {
		t.Helper()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write([]byte(msg + "\n")); err != nil {
			t.Fatal(err)
		}
		line, err := rd.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading the answer to %s: %v (%s)", msg, err, stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("answer %s: %v", line, err)
		}
		return m
	}
	if m := call(`{"jsonrpc":"2.0","id":1,"method":"ahp/handshake","params":{"protocol_version":"2.0","agent_info":{"framework":"a3s-code","version":"1.0.0"}}}`); m["result"] == nil {
		t.Fatalf("reference handshake refused: %v", m)
	}
	const env = `"session_id":"dup-s","agent_id":"a","timestamp":"2026-11-23T00:00:00Z","depth":0`
	for i, args := range []string{`{"command":"ls","command":"rm -rf /"}`, `{"command":"rm -rf /","command":"ls"}`} {
		m := call(`{"jsonrpc":"2.0","id":` + string(rune('2'+i)) + `,"method":"ahp/event","params":{"event_type":"pre_action",` + env + `,"payload":{"tool_name":"bash","arguments":` + args + `}}}`)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"].(float64) != -32602 || !strings.Contains(e["message"].(string), "params.payload.arguments.command") {
			t.Fatalf("%s: answer %v", args, m)
		}
	}
	// A notification with a duplicated envelope key is dropped: the next
	// request's answer is the next line.
	if _, err := conn.Write([]byte(`{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"post_action","event_type":"pre_action",` + env + `,"payload":{}}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if m := call(`{"jsonrpc":"2.0","id":"p","method":"ping"}`); m["id"] != "p" {
		t.Fatalf("after the refused notification: %v", m)
	}
	_ = conn.Close()
	stop()

	cmd := exec.Command(bin, "audit", "query", "--json", "--data-dir", filepath.Join(dir, "data"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("audit query: %v %s", err, out.String())
	}
	var handshake, rejected, ended bool
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r struct {
			SessionID string          `json:"session_id"`
			EventType string          `json:"event_type"`
			Outcome   string          `json:"outcome"`
			Event     json.RawMessage `json:"event"`
			Error     string          `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %s: %v", line, err)
		}
		switch {
		case r.EventType == "connection_ended":
			ended = r.SessionID == "unix-1" && strings.Contains(string(r.Event), `"connection":"closed"`)
		case r.EventType == "handshake":
			handshake = r.SessionID == "unix-1" && strings.Contains(string(r.Event), `"defaulted":["session_id","agent_id"]`) &&
				strings.Contains(string(r.Event), `"payload":{"agent_info":{"framework":"a3s-code","version":"1.0.0","capabilities":[]},"protocol_version":"2.0"}`)
		case r.Outcome == "rejected":
			rejected = strings.Contains(r.Error, "params.event_type") && (len(r.Event) == 0 || string(r.Event) == "null")
		case r.SessionID == "dup-s" || strings.Contains(string(r.Event), "rm -rf"):
			t.Fatalf("a refused message reached the audit log as decided: %s", line)
		}
	}
	if !handshake || !rejected || !ended {
		t.Fatalf("handshake recorded %v, refused notification recorded %v, end of the connection recorded %v:\n%s", handshake, rejected, ended, out.String())
	}
}
