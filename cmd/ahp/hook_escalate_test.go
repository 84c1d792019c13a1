package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// escalatingInput is a tool's PreToolUse / BeforeTool stdin for
// "terraform apply", which the approvals pack (turned on with
// approvalsConfig) holds for a human (await_approval, 10 minutes). mode is Claude Code's or Codex's
// permission_mode; Gemini CLI sends none.
func escalatingInput(tool, session, mode string) string {
	switch tool {
	case "claude-code":
		return `{"session_id":"` + session + `","transcript_path":"/t.jsonl","cwd":"/work","permission_mode":"` + mode + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"terraform apply"},"tool_use_id":"toolu_9"}`
	case "codex":
		return `{"session_id":"` + session + `","transcript_path":null,"cwd":"/work","hook_event_name":"PreToolUse","model":"m","permission_mode":"` + mode + `","turn_id":"t","tool_name":"Bash","tool_input":{"command":"terraform apply"},"tool_use_id":"c9"}`
	}
	return `{"session_id":"` + session + `","transcript_path":"/t.json","cwd":"/work","hook_event_name":"BeforeTool","timestamp":"2026-11-23T10:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"terraform apply","description":"apply"}}`
}

// approvalsConfig writes a serve configuration that turns on the approvals
// pack (off by default) and returns its path.
func approvalsConfig(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "approvals.yaml")
	if err := os.WriteFile(p, []byte("policy: {packs: {approvals: true}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

type hookCase struct{ tool, mode string }

func (c hookCase) session() string { return "esc-" + c.tool + "-" + c.mode }

// TestHookEscalationPerToolAndMode checks docs/adapters.md's escalate table
// against an ahp serve with the approvals pack turned on (it holds
// terraform apply for ten minutes) and hooks whose --timeout is far shorter:
//   - Claude Code in default, acceptEdits and plan answers "ask" at once
//     (it used to wait out --timeout and fail closed, "timed out waiting
//     for the harness");
//   - Claude Code in auto, bypassPermissions and dontAsk, Codex and Gemini
//     wait in the approval queue; unanswered, they are denied with the
//     documented "approval needed" before --timeout (not exit 2 after it);
//     approved, they get the tool's explicit allow.
func TestHookEscalationPerToolAndMode(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	adminURL := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	srv, sock, stderr := startServe(t, bin, dir, "--admin", adminURL, "--config", approvalsConfig(t, dir))
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "admin API listening") })
	addr := "unix:" + sock
	dataDir := filepath.Join(dir, "data")

	type got struct {
		out, errOut string
		code        int
		took        time.Duration
	}
	runAll := func(cases []hookCase, timeout string, during func()) map[hookCase]got {
		var mu sync.Mutex
		res := map[hookCase]got{}
		var wg sync.WaitGroup
		for _, c := range cases {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				out, errOut, code := runHookCmd(t, bin, escalatingInput(c.tool, c.session(), c.mode), c.tool, "--connect", addr, "--timeout", timeout)
				mu.Lock()
				res[c] = got{out, errOut, code, time.Since(start)}
				mu.Unlock()
			}()
		}
		if during != nil {
			during()
		}
		wg.Wait()
		return res
	}

	// Claude Code's prompting modes: "ask", at once, with the rule's reason.
	asks := []hookCase{{"claude-code", "default"}, {"claude-code", "acceptEdits"}, {"claude-code", "plan"}}
	for c, g := range runAll(asks, "8s", nil) {
		if g.code != 0 || g.took > 4*time.Second ||
			!strings.HasPrefix(g.out, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"ahp: needs your approval: infrastructure change needs a human approval"`) {
			t.Errorf("%s %s: exit %d after %v, stdout %s, stderr %s", c.tool, c.mode, g.code, g.took, g.out, g.errOut)
		}
	}

	// The queue, nobody answers: a deny naming the approval, in time.
	queued := []hookCase{{"claude-code", "auto"}, {"claude-code", "bypassPermissions"}, {"claude-code", "dontAsk"},
		{"codex", "default"}, {"codex", "bypassPermissions"}, {"gemini", ""}}
	sawPending := map[string]bool{}
	res := runAll(queued, "5s", func() {
		// Every request waits in the approval queue meanwhile.
		deadline := time.Now().Add(4 * time.Second)
		for len(sawPending) < len(queued) && time.Now().Before(deadline) {
			for _, a := range pendingApprovals(t, bin, adminURL, dataDir) {
				sawPending[a.SessionID] = a.RuleID == "approvals.infrastructure_change"
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	for _, c := range queued {
		g := res[c]
		deny := `"permissionDecision":"deny","permissionDecisionReason":"ahp: approval needed (approvals.infrastructure_change, approval `
		if c.tool == "gemini" {
			deny = `{"decision":"deny","reason":"ahp: approval needed (approvals.infrastructure_change, approval `
		}
		if g.code != 0 || g.took >= 5*time.Second || !strings.Contains(g.out, deny) || !strings.Contains(g.out, "no approver answered in time") {
			t.Errorf("%s %s unanswered: exit %d after %v, stdout %s, stderr %s", c.tool, c.mode, g.code, g.took, g.out, g.errOut)
		}
		if !sawPending[c.session()] {
			t.Errorf("%s %s: no pending approval seen in the queue", c.tool, c.mode)
		}
	}

	// The queue, an approver says yes: the tool's explicit allow.
	approved := []hookCase{{"claude-code", "dontAsk"}, {"codex", "default"}, {"gemini", ""}}
	for i := range approved {
		approved[i].mode += "-approved"
	}
	res = runAll(approved, "30s", func() {
		done := map[string]bool{}
		waitFor(t, func() bool {
			for _, a := range pendingApprovals(t, bin, adminURL, dataDir) {
				if done[a.SessionID] || !strings.HasSuffix(a.SessionID, "-approved") {
					continue
				}
				out, err := exec.Command(bin, "approvals", "approve", a.ID, "--reason", "planned", "--admin", adminURL, "--data-dir", dataDir).CombinedOutput()
				if err != nil {
					t.Errorf("approve %s: %v %s", a.ID, err, out)
				}
				done[a.SessionID] = true
			}
			return len(done) == len(approved)
		})
	})
	want := map[string]string{
		"claude-code": `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ahp: approved by local-admin: planned"}}`,
		"codex":       `{}`,
		"gemini":      `{"decision":"allow"}`,
	}
	for _, c := range approved {
		if g := res[c]; g.code != 0 || g.out != want[c.tool] {
			t.Errorf("%s approved: exit %d, stdout %s, stderr %s", c.tool, g.code, g.out, g.errOut)
		}
	}

	// ahp send says how long it waits too: the held request is answered
	// block (exit 2) before --timeout, not abandoned with an error (exit 1).
	start := time.Now()
	cmd := exec.Command(bin, "send", "--connect", addr, "--timeout", "4s", "pre_action", `{"tool_name":"bash","arguments":{"command":"terraform apply"}}`)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || time.Since(start) > 4*time.Second || !strings.Contains(string(out), `"approval_status":"expired"`) {
		t.Errorf("ahp send --timeout 4s of a held request: %v after %v: %s", err, time.Since(start), out)
	}
}

type pendingApproval struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	RuleID    string `json:"rule_id"`
}

func pendingApprovals(t *testing.T, bin, adminURL, dataDir string) []pendingApproval {
	t.Helper()
	out, err := exec.Command(bin, "approvals", "list", "--json", "--admin", adminURL, "--data-dir", dataDir).Output()
	if err != nil {
		return nil
	}
	var all []pendingApproval
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var a pendingApproval
		if json.Unmarshal([]byte(line), &a) == nil && a.ID != "" {
			all = append(all, a)
		}
	}
	return all
}
