package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One policy, two runs of ahp serve (two processes, so two pids): ahp
// status reports one policy version for both, and ahp replay of their
// audit log finds that one version and computes it for the same policy;
// a changed rule gives another.
func TestPolicyVersionSurvivesRestart(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(statusPolicyA), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	admin := "http://" + l.Addr().String()
	_ = l.Close()
	sock := filepath.Join(dir, "h.sock")
	cfg := fmt.Sprintf("data_dir: data\nlisten: [\"unix:%s\"]\nadmin: %s\npolicy:\n  files: [policy.yaml]\n", sock, admin)
	if err := os.WriteFile(filepath.Join(dir, "ahp.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	runOnce := func() (version string, pid int) {
		srv, stop := serveOnSocket(t, bin, dir, sock, "--config", "ahp.yaml", "--log-level", "error")
		defer stop()
		if code, out, errText := runAhpIn(t, bin, dir, "send", "--connect", "unix:"+sock, "pre_action", `{"tool_name":"bash","arguments":{"command":"curl example.com"}}`); code != 2 {
			t.Fatalf("send: exit %d, %s %s", code, out, errText)
		}
		code, out, errText := runAhpIn(t, bin, dir, "status", "--connect", admin, "--data-dir", "data", "--json")
		var rep statusReport
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Replicas) != 1 {
			t.Fatalf("status: exit %d, %s %s", code, out, errText)
		}
		return rep.Replicas[0].PolicyVersion, srv.Process.Pid
	}
	v1, pid1 := runOnce()
	v2, pid2 := runOnce()
	if pid1 == pid2 || !strings.HasPrefix(v1, "sha256:") || v1 != v2 {
		t.Fatalf("the same policy after a restart (pid %d, then %d): version %s, then %s", pid1, pid2, v1, v2)
	}

	replayJSON := func(args ...string) (newVersion string, old []string) {
		t.Helper()
		code, out, errText := runAhpIn(t, bin, dir, append([]string{"replay", "--config", "ahp.yaml", "--json"}, args...)...)
		var rep struct {
			New string `json:"new_policy_version"`
			Old []struct {
				Version string `json:"version"`
			} `json:"old_policy_versions"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
			t.Fatalf("replay: exit %d, %s %s", code, out, errText)
		}
		for _, o := range rep.Old {
			old = append(old, o.Version)
		}
		return rep.New, old
	}
	newV, old := replayJSON()
	if newV != v1 || len(old) != 1 || old[0] != v1 {
		t.Fatalf("replay of two runs of one policy: new %s, old %v; want %s and [%s]", newV, old, v1, v1)
	}
	changed := filepath.Join(dir, "changed.yaml")
	if err := os.WriteFile(changed, []byte(strings.Replace(statusPolicyA, `"curl"`, `"curl "`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if newV, _ := replayJSON("--policy", changed); newV == v1 {
		t.Fatalf("a changed rule kept the version %s", v1)
	}
}
