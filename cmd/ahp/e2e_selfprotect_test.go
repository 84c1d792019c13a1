package main

import (
	"context"
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
