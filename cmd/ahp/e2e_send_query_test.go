package main

import (
	"strings"
	"testing"
)

// TestSendQueryStdio: ahp send query TYPE JSON prints the harness's answer
// and exits like the checked event; a check leaves no decision behind.
func TestSendQueryStdio(t *testing.T) {
	bin := e2eBinary(t)
	data := t.TempDir()
	connect := "stdio:" + bin + " serve --listen stdio --log-level error --admin off --data-dir " + data
	out, code := runSendCmd(t, bin, "--connect", connect, "query", "check", `{"event_type":"pre_action","payload":`+rmRoot+`}`)
	if code != 2 || !strings.Contains(out, `"answer":{"event_type":"pre_action","decision":{"decision":"block"`) ||
		!strings.Contains(out, `"rule_id":"destructive_shell.rm_root_or_home"`) {
		t.Fatalf("check rm -rf /: exit %d, %s", code, out)
	}
	out, code = runSendCmd(t, bin, "--connect", connect, "query", "budget")
	if code != 0 || !strings.Contains(out, `"counters":{"actions":0,`) {
		t.Fatalf("budget: exit %d, %s", code, out)
	}
	out, code = runSendCmd(t, bin, "--connect", connect, "query", "weather", `{"city":"Paris"}`)
	if code != 1 || !strings.Contains(out, `"answer":null`) {
		t.Fatalf("unknown type: exit %d, %s", code, out)
	}
	if _, code = runSendCmd(t, bin, "--connect", connect, "query"); code != 1 {
		t.Fatalf("query without a type: exit %d", code)
	}
	// The audit log holds the queries, and no decision.
	out, code = runSendCmdRaw(t, bin, "audit", "export", "--data-dir", data, "--event-type", "pre_action")
	if code != 0 || strings.Contains(out, `"event_type":"pre_action"`) {
		t.Fatalf("a check was recorded as a decision: %s", out)
	}
	out, _ = runSendCmdRaw(t, bin, "audit", "export", "--data-dir", data, "--event-type", "query")
	if strings.Count(out, `"event_type":"query"`) < 3 {
		t.Fatalf("queries not recorded: %s", out)
	}
}
