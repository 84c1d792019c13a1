package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/service"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
	"github.com/ahp-go/ahp/transport"
)

// lifecycleRecords returns the harness_* audit records of a data directory.
func lifecycleRecords(t *testing.T, dataDir string) []store.AuditRecord {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(dataDir, service.DBFile), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs, err := db.Audit().Query(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []store.AuditRecord
	for _, r := range recs {
		if strings.HasPrefix(r.EventType, "harness_") {
			out = append(out, r)
		}
	}
	return out
}

func kinds(recs []store.AuditRecord) string {
	var k []string
	for _, r := range recs {
		k = append(k, r.EventType)
	}
	return strings.Join(k, ",")
}

// An orderly shutdown ends with a harness_stop record; a run that was
// killed has none, and the next start says so with harness_lost.
func TestServeRecordsItsStops(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")

	srv, _, stderr := startServe(t, bin, dir)
	_ = srv.Process.Signal(syscall.SIGTERM)
	_ = srv.Wait()
	if got := kinds(lifecycleRecords(t, data)); got != "harness_start,harness_stop" {
		t.Fatalf("after SIGTERM: %s\n%s", got, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(data, service.RunMarkerFile)); !os.IsNotExist(err) {
		t.Fatalf("run marker left after an orderly stop: %v", err)
	}

	srv, _, _ = startServe(t, bin, dir)
	_ = srv.Process.Kill()
	_ = srv.Wait()
	srv, _, stderr = startServe(t, bin, dir)
	_ = srv.Process.Signal(syscall.SIGTERM)
	_ = srv.Wait()
	recs := lifecycleRecords(t, data)
	if got := kinds(recs); got != "harness_start,harness_stop,harness_start,harness_lost,harness_start,harness_stop" {
		t.Fatalf("after SIGKILL and a restart: %s", got)
	}
	if lost := recs[3]; !strings.Contains(lost.Error, "without a final audit record") || lost.Principal != "ahp" {
		t.Fatalf("harness_lost record: %+v", lost)
	}
	if !strings.Contains(stderr.String(), "previous harness run ended without a final record") {
		t.Fatalf("no warning at start: %s", stderr.String())
	}
}

// Through a running harness, the default configuration protects its own
// policy file, data directory and process; switching the pack off takes a
// configuration setting and warns at every start.
func TestServeSelfProtection(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "team.yaml"), []byte("rules: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, sock, stderr := startServe(t, bin, dir, "--policy", "team.yaml")
	defer func() { _ = srv.Process.Signal(syscall.SIGTERM); _ = srv.Wait() }()
	decide := func(sock, cmd string) protocol.Decision {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := transport.Dial(ctx, "unix:"+sock, transport.DialOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := client.New(conn, client.Options{SessionID: "sp", AgentID: "coder", FailMode: client.FailError, Timeout: 5 * time.Second})
		defer c.Close()
		if _, err := c.Handshake(ctx); err != nil {
			t.Fatal(err)
		}
		d, err := c.Event(ctx, protocol.EventPreAction, map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": cmd}, "cwd": dir})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, cmd := range []string{
		"sed -i s/block/allow/ team.yaml",
		"cat data/admin.token",
		"rm -rf data",
		"kill " + strconv.Itoa(srv.Process.Pid),
		"ahp approvals approve 1 --reason ok",
	} {
		if d := decide(sock, cmd); d.Kind != protocol.DecisionBlock || !strings.Contains(d.Reason, "protects itself") {
			t.Errorf("%s: %+v", cmd, d)
		}
	}
	if d := decide(sock, "cat README.md"); d.Kind != protocol.DecisionAllow {
		t.Errorf("cat README.md: %+v", d)
	}
	if strings.Contains(stderr.String(), "self_protection pack is off") {
		t.Fatalf("warning with the pack on: %s", stderr.String())
	}

	// Off, by configuration only, with a warning.
	off := t.TempDir()
	cfg := filepath.Join(off, "ahp.yaml")
	if err := os.WriteFile(cfg, []byte("policy:\n  packs:\n    self_protection: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv2, sock2, stderr2 := startServe(t, bin, off, "--config", cfg)
	defer func() { _ = srv2.Process.Signal(syscall.SIGTERM); _ = srv2.Wait() }()
	if !strings.Contains(stderr2.String(), "self_protection pack is off") {
		t.Fatalf("no warning with the pack off: %s", stderr2.String())
	}
	if d := decide(sock2, "cat data/admin.token"); d.Kind != protocol.DecisionAllow {
		t.Fatalf("pack off: %+v", d)
	}
}

// spDecide sends one pre_action to a running harness and returns its
// decision.
func spDecide(t *testing.T, sock string, payload map[string]any) protocol.Decision {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := transport.Dial(ctx, "unix:"+sock, transport.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(conn, client.Options{SessionID: "sp24", AgentID: "coder", FailMode: client.FailError, Timeout: 5 * time.Second})
	defer c.Close()
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := c.Event(ctx, protocol.EventPreAction, payload)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The self_protection rows of issue 24's table, through a running harness
// with its admin API on a loopback port and Claude Code hooks that run a
// copy of ahp: each of the table's commands is blocked.
func TestServeSelfProtectionIssue24(t *testing.T) {
	bin := e2eBinary(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hookBin := filepath.Join(dir, "bin", "ahp")
	if err := os.MkdirAll(filepath.Dir(hookBin), 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hookBin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"` + hookBin + ` hook claude-code --connect unix:` + filepath.Join(dir, "h.sock") + `"}]}]}}`
	if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	_ = l.Close()
	srv, sock, stderr := startServe(t, bin, dir, "--admin", "http://127.0.0.1:"+port)
	defer func() { _ = srv.Process.Signal(syscall.SIGTERM); _ = srv.Wait() }()

	bash := func(cmd string) map[string]any {
		return map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}, "cwd": dir}
	}
	blocked := map[string]map[string]any{
		"self-approval, port with a leading zero": bash("ahp --admin http://127.0.0.1:0" + port + " approvals approve 1"),
		"self-approval, empty token":              bash("ahp --token '' approvals approve 1"),
		"self-approval, the hook's copy":          bash(hookBin + " --token '' approvals approve 1"),
		"installer replaces the hooks":            bash("ahp hook install claude-code --command true --write"),
		"256 true; then read the token":           bash(strings.Repeat("true;", 256) + "cat data/admin.token"),
		"256 true; then kill":                     bash(strings.Repeat("true;", 256) + "kill " + strconv.Itoa(srv.Process.Pid)),
		"256 true; then edit the hooks":           bash(strings.Repeat("true;", 256) + "echo '{}' > .claude/settings.json"),
		"a command beyond every bound":            bash(strings.Repeat("true;", 5000) + "cat data/admin.token"),
		"127.1":                                   bash("curl http://127.1:" + port + "/v1/approvals"),
		"hex":                                     bash("curl http://0x7f000001:" + port + "/v1/approvals"),
		"decimal":                                 bash("curl http://2130706433:" + port + "/v1/approvals"),
		"octal":                                   bash("curl http://017700000001:" + port + "/v1/approvals"),
		"port with a leading zero":                bash("curl http://127.0.0.1:0" + port + "/v1/approvals"),
		"curl --resolve":                          bash("curl --resolve example.com:" + port + ":127.0.0.1 http://example.com:" + port + "/v1/approvals"),
		"IPv6":                                    bash("curl 'http://[::1]:" + port + "/v1/approvals'"),
		"localhost.":                              bash("curl http://localhost.:" + port + "/v1/approvals"),
		"replace the hook executable":             bash("rm -f " + hookBin + " && cp /bin/true " + hookBin),
		"replace the harness's executable":        bash("cp /bin/true " + bin),
		"Write the hook executable":               {"tool_name": "Write", "tool_input": map[string]any{"file_path": hookBin, "content": "#!/bin/sh\nexit 0\n"}, "cwd": dir},
	}
	for name, payload := range blocked {
		if d := spDecide(t, sock, payload); d.Kind != protocol.DecisionBlock || !strings.Contains(d.Reason, "protects itself") {
			t.Errorf("%s: %+v", name, d)
		}
	}
	for _, cmd := range []string{hookBin + " version", "cat README.md", "curl http://127.0.0.1:1" + port + "/"} {
		if d := spDecide(t, sock, bash(cmd)); d.Kind != protocol.DecisionAllow {
			t.Errorf("%s: %+v", cmd, d)
		}
	}
	if t.Failed() {
		t.Logf("harness log:\n%s", stderr.String())
	}
}
