package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// The tour with no configuration file: rm -rf / is blocked, a
// private key in a prompt is blocked, a cluster deletion passes (the
// approvals pack is off by default), a package removal waits until ahp
// approvals approve releases it, and ahp audit query shows all of it.
func TestServeWithNoConfig(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir() // the project the harness is started in
	home := t.TempDir()
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+filepath.Join(home, "run"), "XDG_STATE_HOME="+filepath.Join(home, "state"))
	if err := os.MkdirAll(filepath.Join(home, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(home, "run", "ahp", "ahp.sock") // config.DefaultSocket
	admin := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	srv := exec.Command(bin, "serve", "--admin", admin) // everything else defaulted
	srv.Dir = dir
	srv.Env = env
	stderr := &syncBuffer{}
	srv.Stderr = stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
	}()
	waitFor(t, func() bool {
		return accepting(sock) && strings.Contains(stderr.String(), "admin API listening")
	})
	run := func(args ...string) (string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), code
	}
	connect := "unix:" + sock
	// With no --connect, ahp send finds the harness on its default socket;
	// nothing of the harness is in the project it was started in.
	if out, code := run("send", "pre_action", rmRoot); code != 2 || !strings.Contains(out, "destructive_shell") {
		t.Fatalf("rm -rf / on the default socket: %d %s", code, out)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("the harness wrote into the directory it was started in: %v", ents)
	}
	if _, err := os.Stat(filepath.Join(home, "state", "ahp", "admin.token")); err != nil {
		t.Fatalf("no admin token in the default data directory: %v", err)
	}
	if out, code := run("send", "--connect", connect, "pre_prompt", `{"prompt":"use this key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"}`); code != 2 || !strings.Contains(out, "secrets.") {
		t.Fatalf("private key: %d %s", code, out)
	}

	// The approvals pack (change management) is off by default: a deploy is
	// allowed (deleting a namespace is shared_infrastructure's, on).
	if out, code := run("send", "--connect", connect, "pre_action", `{"tool_name":"bash","arguments":{"command":"kubectl apply -f k8s/staging/"}}`); code != 0 {
		t.Fatalf("kubectl apply with the default packs: %d %s", code, out)
	}

	// An escalation that waits for a human (the README's: a default pack's).
	type sent struct {
		out  string
		code int
	}
	waiting := make(chan sent, 1)
	go func() {
		out, code := run("send", "--connect", connect, "--timeout", "60s", "pre_action", `{"tool_name":"bash","arguments":{"command":"sudo apt-get remove nginx"}}`)
		waiting <- sent{out, code}
	}()
	var id string
	waitFor(t, func() bool {
		out, code := run("approvals", "list", "--json", "--admin", admin)
		if code != 0 || strings.TrimSpace(out) == "" {
			return false
		}
		var a struct {
			ID     string `json:"id"`
			RuleID string `json:"rule_id"`
		}
		if json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &a) != nil {
			return false
		}
		id = a.ID
		return a.RuleID == "system_integrity.package_manager"
	})
	select {
	case s := <-waiting:
		t.Fatalf("agent released before approval: %d %s", s.code, s.out)
	case <-time.After(200 * time.Millisecond):
	}
	// The approver reads the whole event before answering.
	if out, code := run("approvals", "show", id, "--admin", admin); code != 0 ||
		!strings.Contains(out, `"command": "sudo apt-get remove nginx"`) || !strings.Contains(out, `"status": "pending"`) {
		t.Fatalf("approvals show: %d %s", code, out)
	}
	if out, code := run("approvals", "approve", id, "--reason", "cleanup ticket 9", "--admin", admin); code != 0 || !strings.Contains(out, "approved") {
		t.Fatalf("approve: %d %s", code, out)
	}
	var s sent
	select {
	case s = <-waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("agent not released by the approval")
	}
	if s.code != 0 || !strings.Contains(s.out, `"decided_by":"local-admin"`) {
		t.Fatalf("released agent: %d %s", s.code, s.out)
	}

	// The audit log has all of it.
	out, code := run("audit", "query", "--json")
	if code != 0 {
		t.Fatalf("audit query: %d %s", code, out)
	}
	for _, want := range []string{"destructive_shell.rm_root_or_home", "secrets.", "system_integrity.package_manager", "local-admin"} {
		if !strings.Contains(out, want) {
			t.Errorf("audit query lacks %q:\n%s", want, out)
		}
	}
}
