package service_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/service"
)

// claudePreTool is a Claude Code PreToolUse hook input for a Bash command,
// with pad bytes of padding in the tool's description.
func claudePreTool(t *testing.T, command string, pad int) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"session_id":      "hooks-limits-session",
		"cwd":             "/tmp",
		"hook_event_name": "PreToolUse",
		"tool_name":       "Bash",
		"tool_input":      map[string]any{"command": command, "description": strings.Repeat("x", pad)},
		"tool_use_id":     "toolu_01",
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// postHook posts body to the listener's /hooks/claude-code with the given
// credential header (none when name is empty).
func postHook(t *testing.T, base string, body []byte, name, value string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/hooks/claude-code", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if name != "" {
		req.Header.Set(name, value)
	}
	cl := &http.Client{Timeout: 30 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// hookBase returns the http://HOST:PORT of the listener configured as l.
func hookBase(r *running, l string) string {
	return strings.TrimSuffix(r.addrs[l], "/ahp")
}

// /hooks/* require role agent, as /ahp, ws and gRPC do: an approver's or
// an observer's credential is refused with 403 and its event never
// reaches the harness; an agent's credential is answered.
func TestHooksRequireAgentRole(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials.yaml")
	writeFile(t, creds, fmt.Sprintf(`version: 1
principals:
  - id: agent-1
    roles: [agent]
    api_keys: [%q]
  - id: approver-1
    roles: [approver]
    bearer_tokens: [%q]
  - id: observer-1
    roles: [observer]
    api_keys: [%q]
`, agentKey, approverToken, observerKey))
	c := testConfig(t)
	c.Listen = []string{"http://127.0.0.1:0"}
	c.Auth = config.AuthConfig{Credentials: creds}
	rec := &recorder{}
	r := start(t, c, service.Options{Observers: []harness.Observer{rec}})
	base := hookBase(r, c.Listen[0])
	body := claudePreTool(t, "rm -rf /", 0)

	for _, tc := range []struct{ who, header, value string }{
		{"approver", "Authorization", "Bearer " + approverToken},
		{"observer", "X-API-Key", observerKey},
	} {
		if code, resp := postHook(t, base, body, tc.header, tc.value); code != http.StatusForbidden {
			t.Errorf("%s credential on /hooks/claude-code: %d %s, want 403", tc.who, code, resp)
		}
	}
	if code, _ := postHook(t, base, body, "", ""); code != http.StatusUnauthorized {
		t.Errorf("no credential: %d, want 401", code)
	}
	if got := rec.seen(); got != "" {
		t.Fatalf("refused hook calls reached the harness: %s", got)
	}
	code, resp := postHook(t, base, body, "X-API-Key", agentKey)
	if code != http.StatusOK || !strings.Contains(resp, `"permissionDecision":"deny"`) {
		t.Fatalf("agent credential: %d %s, want 200 with the harness's deny", code, resp)
	}
	if got := rec.seen(); !strings.Contains(got, "pre_action:block") {
		t.Fatalf("the agent's hook call was not decided: %q", got)
	}
}

// A loopback listener without credentials stays open to the hooks (its
// anonymous caller holds role agent), as /ahp is.
func TestHooksLoopbackWithoutCredentials(t *testing.T) {
	c := testConfig(t)
	c.Listen = []string{"http://127.0.0.1:0"}
	r := start(t, c, service.Options{})
	code, resp := postHook(t, hookBase(r, c.Listen[0]), claudePreTool(t, "rm -rf /", 0), "", "")
	if code != http.StatusOK || !strings.Contains(resp, `"permissionDecision":"deny"`) {
		t.Fatalf("loopback without credentials: %d %s", code, resp)
	}
}

// A hook input over the harness's max_message_bytes is not decided: it is
// answered with a deny (status 200, so that the tool does not go on) that
// names the limit, and nothing reaches the harness. One under the limit is
// decided.
func TestHooksBodyLimitFollowsMaxMessageBytes(t *testing.T) {
	c := testConfig(t)
	c.Listen = []string{"http://127.0.0.1:0"}
	c.Harness.MaxMessageBytes = 64 << 10
	rec := &recorder{}
	r := start(t, c, service.Options{Observers: []harness.Observer{rec}})
	base := hookBase(r, c.Listen[0])

	code, resp := postHook(t, base, claudePreTool(t, "ls", 200<<10), "", "")
	if code != http.StatusOK || !strings.Contains(resp, `"permissionDecision":"deny"`) || !strings.Contains(resp, "65536 bytes") {
		t.Fatalf("hook input over max_message_bytes: %d %s, want a deny naming the 65536-byte limit", code, resp)
	}
	if got := rec.seen(); got != "" {
		t.Fatalf("an oversized hook input was decided: %s", got)
	}
	if code, resp := postHook(t, base, claudePreTool(t, "ls", 1<<10), "", ""); code != http.StatusOK || strings.Contains(resp, "deny") {
		t.Fatalf("small hook input: %d %s", code, resp)
	}
	if got := rec.seen(); !strings.Contains(got, "pre_action:allow") {
		t.Fatalf("the small hook input was not decided: %q", got)
	}
}
