package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// scriptedClaudeModel plays the Messages API for Claude Code: the first
// request of a run is answered with one Bash tool call, every later one
// ends the turn. It keeps the tool results it was sent.
type scriptedClaudeModel struct {
	command string
	mu      sync.Mutex
	sent    bool
	results []string
}

func (m *scriptedClaudeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	m.mu.Lock()
	if strings.Contains(string(body), `"tool_result"`) {
		m.results = append(m.results, string(body))
	}
	toolCall := !m.sent && strings.HasSuffix(r.URL.Path, "/v1/messages") && len(req.Messages) > 0 && !strings.Contains(string(body), `"tool_result"`) && strings.Contains(string(body), `"Bash"`)
	if toolCall {
		m.sent = true
	}
	m.mu.Unlock()
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"msg_x","type":"message","role":"assistant","model":"scripted","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(name, data string) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data) }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"scripted","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`)
	if toolCall {
		input, _ := json.Marshal(map[string]string{"command": m.command, "description": "scripted"})
		partial, _ := json.Marshal(string(input))
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01","name":"Bash","input":{}}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+string(partial)+`}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5}}`)
	} else {
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"done"}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}`)
	}
	ev("message_stop", `{"type":"message_stop"}`)
}

// TestClaudeCodeHookForReal drives the real Claude Code binary offline
// (a scripted model on loopback), with ahp hook installed by ahp hook
// install, against ahp serve: an allowed command runs, a blocked one does
// not, an escalated one waits for an approval that does not come and
// does not run, a modified one runs with the harness's arguments. It needs
// $AHP_CLAUDE_BIN (npm install @anthropic-ai/claude-code; ~360 MB), so it
// is skipped without it, CI included.
func TestClaudeCodeHookForReal(t *testing.T) {
	claude := os.Getenv("AHP_CLAUDE_BIN")
	if claude == "" {
		t.Skip("set AHP_CLAUDE_BIN to a Claude Code executable (npm install @anthropic-ai/claude-code) to run this test")
	}
	bin := e2eBinary(t)
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	home := filepath.Join(dir, "home")
	for _, d := range []string{work, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	policy := filepath.Join(dir, "policy.yaml")
	modified := filepath.Join(work, "modified-ran")
	if err := os.WriteFile(policy, []byte(`rules:
  - id: no-marker
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("blocked-ran")'
    outcome: {decision: block, reason: "the marker is off limits"}
  - id: ask-a-human
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("escalate-ran")'
    outcome: {decision: escalate, reason: "a human must agree"}
  - id: rewrite-marker
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("modify-src")'
    outcome:
      decision: modify
      modified_payload: '{"tool_name": payload.tool_name, "arguments": {"command": "touch `+modified+`", "description": "rewritten"}}'
`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, sock, stderr := startServe(t, bin, dir, "--policy", policy)
	install := exec.Command(bin, "hook", "install", "claude-code", "--user", "--write", "--connect", "unix:"+sock, "--timeout", "8s")
	install.Env = append(os.Environ(), "HOME="+home)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install: %v %s", err, out)
	}
	run := func(command string) *scriptedClaudeModel {
		m := &scriptedClaudeModel{command: command}
		model := httptest.NewServer(m)
		defer model.Close()
		cmd := exec.Command(claude, "-p", "run the command", "--output-format", "json", "--permission-mode", "bypassPermissions")
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HOME="+home, "ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY=test-key",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "IS_SANDBOX=1", "DISABLE_AUTOUPDATER=1")
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(120 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("claude did not finish: %s", out)
		}
		if err != nil {
			t.Fatalf("claude: %v\n%s\nharness: %s", err, out, stderr.String())
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if !m.sent || len(m.results) == 0 {
			t.Fatalf("the scripted tool call was not made or not answered: %s", out)
		}
		return m
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	allowed := filepath.Join(work, "allowed-ran")
	run("touch " + allowed)
	if !exists(allowed) {
		t.Fatal("the allowed command did not run: the set-up does not execute tools")
	}
	blocked := filepath.Join(work, "blocked-ran")
	m := run("touch " + blocked)
	if exists(blocked) {
		t.Fatal("the blocked command ran")
	}
	if r := m.results[0]; !strings.Contains(r, "the marker is off limits") {
		t.Fatalf("the model was not told the reason: %s", r)
	}
	// Escalated in bypassPermissions mode, where "ask" is not safe: the
	// call waits in the approval queue, nobody answers, it is denied.
	escalated := filepath.Join(work, "escalate-ran")
	m = run("touch " + escalated)
	if exists(escalated) {
		t.Fatal("the escalated command ran without an approval")
	}
	if r := m.results[0]; !strings.Contains(r, "approval needed") {
		t.Fatalf("the model was not told an approval is needed: %s", r)
	}
	src := filepath.Join(work, "modify-src")
	run("touch " + src)
	if exists(src) || !exists(modified) {
		t.Fatalf("modify: original ran %v, modified ran %v", exists(src), exists(modified))
	}
}
