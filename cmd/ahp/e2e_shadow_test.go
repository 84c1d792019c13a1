package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 14 through the binary: a candidate policy given with
// --shadow-policy changes nothing for the agent, and ahp audit query
// --shadow and ahp audit shadow-report show what it would have changed.
func TestServeShadowPolicyReport(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	cand := filepath.Join(dir, "candidate.yaml")
	if err := os.WriteFile(cand, []byte(`rules:
  - id: cand-no-curl
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("curl ")'
    outcome: {decision: block, reason: "no curl"}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, sock, stderr := startServe(t, bin, dir, "--shadow-policy", cand)
	connect := "unix:" + sock
	for _, cmd := range []string{"curl https://example.com", "ls", "curl http://x"} {
		out, code := runSendCmd(t, bin, "--connect", connect, "pre_action", `{"tool_name":"bash","arguments":{"command":"`+cmd+`"}}`)
		if code != 0 {
			t.Fatalf("%s: the shadow policy changed the live answer: %d %s (%s)", cmd, code, out, stderr.String())
		}
	}
	_ = srv.Process.Signal(os.Interrupt)
	_ = srv.Wait()

	data := filepath.Join(dir, "data")
	run := func(args ...string) string {
		t.Helper()
		c := exec.Command(bin, append(args, "--data-dir", data)...)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Run(); err != nil {
			t.Fatalf("%v: %v %s", args, err, out.String())
		}
		return out.String()
	}
	q := strings.TrimSpace(run("audit", "query", "--shadow", "--json"))
	lines := strings.Split(q, "\n")
	if len(lines) != 2 || !strings.Contains(q, "cand-no-curl") || strings.Contains(q, `"command":"ls"`) {
		t.Fatalf("audit query --shadow:\n%s", q)
	}
	var rep struct {
		Rules []map[string]any `json:"rules"`
	}
	raw := run("audit", "shadow-report", "--json")
	if err := json.Unmarshal([]byte(raw), &rep); err != nil {
		t.Fatalf("shadow-report --json: %v\n%s", err, raw)
	}
	found := false
	for _, r := range rep.Rules {
		if r["rule_id"] == "cand-no-curl" {
			found = true
			b, _ := json.Marshal(r)
			if !strings.Contains(string(b), `"would_block":2`) {
				t.Fatalf("rule line %s", b)
			}
		}
	}
	if !found {
		t.Fatalf("no line for cand-no-curl in %s", raw)
	}
	if txt := run("audit", "shadow-report"); !strings.Contains(txt, "cand-no-curl") {
		t.Fatalf("text report:\n%s", txt)
	}
}
