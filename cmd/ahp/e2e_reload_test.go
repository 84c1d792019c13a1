package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const reloadPolicyA = `rules:
  - id: no-curl
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.startsWith("curl")'
    outcome: {decision: block, reason: "curl is not allowed"}
`

const reloadPolicyB = `rules:
  - id: no-wget
    priority: 100
    target: {event_types: [pre_action]}
    condition: 'event.command.startsWith("wget")'
    outcome: {decision: block, reason: "wget is not allowed"}
`

// SIGHUP reloads the policy; a bad policy is refused and the old one keeps
// running. (Reload itself and policy.watch are tested in process, in
// service; this test is for the signal.)
func TestSIGHUPReload(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(reloadPolicyA), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, sock, stderr := startServe(t, bin, dir, "--policy", pol)
	defer func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
	}()
	send := func(cmd string) (string, int) {
		return runSendCmd(t, bin, "--connect", "unix:"+sock, "pre_action", `{"tool_name":"bash","arguments":{"command":"`+cmd+`"}}`)
	}
	if out, code := send("curl example.com"); code != 2 || !strings.Contains(out, "no-curl") {
		t.Fatalf("policy A not applied: %d %s", code, out)
	}
	// A policy with a syntax error is refused; A keeps running.
	if err := os.WriteFile(pol, []byte("rules:\n  - id: broken\n    condition: 'event.command.startsWith('\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "policy reload refused") })
	if out, code := send("curl example.com"); code != 2 || !strings.Contains(out, "no-curl") {
		t.Fatalf("old policy not kept after a refused reload: %d %s", code, out)
	}
	// A good policy replaces it.
	if err := os.WriteFile(pol, []byte(reloadPolicyB), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "policy reloaded") })
	if out, code := send("curl example.com"); code != 0 {
		t.Fatalf("policy A still applied after reload: %d %s", code, out)
	}
	if out, code := send("wget example.com"); code != 2 || !strings.Contains(out, "no-wget") {
		t.Fatalf("policy B not applied: %d %s", code, out)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
