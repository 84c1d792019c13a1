package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const e2eDescriptor = `
metadata: {name: support, version: v1}
runtime: {entry_agent: router}
tools:
  lookup_order: {target: example://tool/lookup_order}
agents:
  router:
    handoffs: [order]
    instructions: Route.
  order:
    tools: [lookup_order]
    instructions: Look orders up.
`

// ahp serve --descriptor blocks a tool the agent does not declare and
// records the descriptor hash with the decision.
func TestServeDescriptorBlocksUndeclaredTool(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	desc := filepath.Join(dir, "harness.yaml")
	if err := os.WriteFile(desc, []byte(e2eDescriptor), 0o600); err != nil {
		t.Fatal(err)
	}
	hash, code := runSendCmdRaw(t, bin, "descriptor", "hash", desc)
	if code != 0 || !strings.HasPrefix(hash, "sha256:") {
		t.Fatalf("descriptor hash: %d %s", code, hash)
	}
	srv, sock, _ := startServe(t, bin, dir, "--descriptor", desc)
	out, code := runSendCmd(t, bin, "--connect", "unix:"+sock, "--agent", "order", "pre_action", `{"tool_name":"refund","arguments":{}}`)
	if code != 2 || !strings.Contains(out, `agent \"order\" does not declare tool \"refund\"`) {
		t.Fatalf("undeclared tool: %d %s", code, out)
	}
	if out, code = runSendCmd(t, bin, "--connect", "unix:"+sock, "--agent", "order", "pre_action", `{"tool_name":"lookup_order","arguments":{}}`); code != 0 {
		t.Fatalf("declared tool: %d %s", code, out)
	}
	_ = srv.Process.Signal(os.Interrupt)
	_ = srv.Wait()
	audit, code := runSendCmdRaw(t, bin, "audit", "query", "--json", "--rule", "descriptor", "--data-dir", filepath.Join(dir, "data"))
	if code != 0 || !strings.Contains(audit, strings.TrimSpace(hash)) || !strings.Contains(audit, "refund") {
		t.Fatalf("audit entry lacks the descriptor hash %s: %d %s", hash, code, audit)
	}
}
