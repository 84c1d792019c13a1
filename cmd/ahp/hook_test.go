package main

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/ahp-go/ahp/adapters/hooks"
	"github.com/ahp-go/ahp/admin"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runHookCmd runs ahp hook with stdin and returns stdout, stderr and the
// exit code.
func runHookCmd(t *testing.T, bin, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"hook"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out.String()), strings.TrimSpace(errb.String()), code
}

const (
	claudeRmRoot = `{"session_id":"s-claude","transcript_path":"/t.jsonl","cwd":"/work","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"tool_use_id":"toolu_1"}`
	claudeLs     = `{"session_id":"s-claude","transcript_path":"/t.jsonl","cwd":"/work","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_2"}`
	geminiRmRoot = `{"session_id":"s-gemini","transcript_path":"/t.json","cwd":"/work","hook_event_name":"BeforeTool","timestamp":"2026-11-23T10:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"rm -rf /","description":"clean"}}`
	codexRmRoot  = `{"session_id":"s-codex","transcript_path":null,"cwd":"/work","hook_event_name":"PreToolUse","model":"m","permission_mode":"default","turn_id":"t","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"tool_use_id":"c1"}`
)

// TestHookCommand runs ahp hook against ahp serve (the built-in packs
// block rm -rf /), then with the harness gone: fail closed.
func TestHookCommand(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	port := freePort(t)
	srv, sock, stderr := startServe(t, bin, dir, "--listen", fmt.Sprintf("http://127.0.0.1:%d", port))
	addr := "unix:" + sock

	out, _, code := runHookCmd(t, bin, claudeRmRoot, "claude-code", "--connect", addr)
	if code != 0 || !strings.HasPrefix(out, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"ahp: blocked by the harness: `) {
		t.Fatalf("claude rm -rf /: exit %d %s", code, out)
	}
	if out, _, code := runHookCmd(t, bin, claudeLs, "claude-code", "--connect", addr); code != 0 || out != `{}` {
		t.Fatalf("claude ls: exit %d %s", code, out)
	}
	if out, _, code := runHookCmd(t, bin, geminiRmRoot, "gemini", "--connect", addr); code != 0 || !strings.HasPrefix(out, `{"decision":"deny","reason":"ahp: blocked by the harness: `) {
		t.Fatalf("gemini: exit %d %s", code, out)
	}
	if out, _, code := runHookCmd(t, bin, codexRmRoot, "codex", "--connect", addr); code != 0 || !strings.Contains(out, `"permissionDecision":"deny"`) {
		t.Fatalf("codex: exit %d %s", code, out)
	}

	// The HTTP hook endpoint of ahp serve gives the same answer.
	resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/hooks/codex", port), "application/json", strings.NewReader(codexRmRoot))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"permissionDecision":"deny"`) {
		t.Fatalf("HTTP hook: %d %s\n%s", resp.StatusCode, body, stderr.String())
	}

	// Claude Code's SessionStart exports the session id for its Bash commands.
	envFile := filepath.Join(dir, "claude.env")
	cmd := exec.Command(bin, "hook", "claude-code", "--connect", addr)
	cmd.Env = append(os.Environ(), "CLAUDE_ENV_FILE="+envFile)
	cmd.Stdin = strings.NewReader(`{"session_id":"s-claude","hook_event_name":"SessionStart","source":"startup","cwd":"/work"}`)
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != `{}` {
		t.Fatalf("session start: %v %s", err, out)
	}
	if b, _ := os.ReadFile(envFile); string(b) != "export AHP_SESSION_ID='s-claude'\n" {
		t.Fatalf("env file: %q", b)
	}

	// The harness goes away: every tool's hook blocks, with exit code 2.
	_ = srv.Process.Kill()
	_ = srv.Wait()
	for _, c := range []struct{ tool, in string }{{"claude-code", claudeLs}, {"gemini", geminiRmRoot}, {"codex", codexRmRoot}} {
		start := time.Now()
		out, errOut, code := runHookCmd(t, bin, c.in, c.tool, "--connect", addr, "--timeout", "2s")
		if code != 2 || out != "" || !strings.Contains(errOut, "failing closed") || time.Since(start) > 5*time.Second {
			t.Fatalf("%s with the harness down: exit %d stdout %q stderr %q", c.tool, code, out, errOut)
		}
	}
	// No address at all: also a block.
	if _, errOut, code := runHookCmd(t, bin, claudeLs, "claude-code"); code != 2 || !strings.Contains(errOut, "failing closed") {
		t.Fatalf("no address: exit %d %s", code, errOut)
	}
}

// TestHookInstallCommand checks ahp hook install: print, write, rerun.
func TestHookInstallCommand(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	codexHome := filepath.Join(dir, "codex-home")
	run := func(args ...string) (string, int) {
		cmd := exec.Command(bin, append([]string{"hook", "install"}, args...)...)
		cmd.Env = append(os.Environ(), "CODEX_HOME="+codexHome)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), ee.ExitCode()
		}
		return out.String(), 0
	}
	if out, code := run("codex", "--dir", dir, "--connect", "unix:/run/ahp.sock"); code != 0 || !strings.Contains(out, `hook codex --connect unix:/run/ahp.sock --timeout 1m50s`) || !strings.Contains(out, "trust") {
		t.Fatalf("print: %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".codex", "hooks.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("written without --write")
	}
	if out, code := run("claude-code", "--dir", dir, "--connect", "unix:/run/ahp.sock", "--write"); code != 0 || !strings.Contains(out, "wrote") {
		t.Fatalf("write: %d %s", code, out)
	}
	if out, code := run("claude-code", "--dir", dir, "--connect", "unix:/run/ahp.sock", "--write"); code != 0 || !strings.Contains(out, "nothing changed") {
		t.Fatalf("rerun: %d %s", code, out)
	}
	// Codex hooks that Codex would skip are never written: a project
	// install and a user install without --trust fail, say what to do,
	// and leave no file.
	for _, args := range [][]string{{"--dir", dir}, {"--user"}} {
		out, code := run(append([]string{"codex", "--connect", "unix:/run/ahp.sock", "--write"}, args...)...)
		if code != 1 || !strings.Contains(out, "--user --trust --write") || !strings.Contains(out, "--managed --write") || !strings.Contains(out, "nothing written") {
			t.Fatalf("codex %v: %d %s", args, code, out)
		}
	}
	for _, p := range []string{filepath.Join(dir, ".codex", "hooks.json"), filepath.Join(codexHome, "hooks.json"), filepath.Join(codexHome, "config.toml")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s written by a refused install", p)
		}
	}
	if out, code := run("codex", "--user", "--managed", "--connect", "unix:/x", "--write"); code != 1 || !strings.Contains(out, "without --user") {
		t.Fatalf("--managed --user: %d %s", code, out)
	}
	if out, code := run("gemini", "--trust", "--connect", "unix:/x", "--write"); code != 1 || !strings.Contains(out, "Codex only") {
		t.Fatalf("gemini --trust: %d %s", code, out)
	}
	// --user --trust: $CODEX_HOME/hooks.json, and config.toml trusts
	// exactly the definitions written (the hashes Codex computes).
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte("# mine\nmodel = \"m\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := run("codex", "--user", "--trust", "--connect", "unix:/run/ahp.sock", "--write"); code != 0 || !strings.Contains(out, "recorded in") {
		t.Fatalf("--user --trust: %d %s", code, out)
	}
	hooksFile := filepath.Join(codexHome, "hooks.json")
	doc, err := os.ReadFile(hooksFile)
	if err != nil {
		t.Fatal(err)
	}
	config, _ := os.ReadFile(filepath.Join(codexHome, "config.toml"))
	if !strings.HasPrefix(string(config), "# mine\nmodel = \"m\"\n") {
		t.Fatalf("config.toml lost its content:\n%s", config)
	}
	if st, _ := os.Stat(filepath.Join(codexHome, "config.toml")); st.Mode().Perm() != 0o600 {
		t.Fatalf("config.toml mode %v", st.Mode())
	}
	states, err := hooks.CodexHookStates(config)
	if err != nil {
		t.Fatal(err)
	}
	trust, err := hooks.CodexAdapterHooks(hooksFile, doc)
	if err != nil || len(trust) != len(hooks.Events(hooks.Codex)) {
		t.Fatalf("trust entries: %v %v", err, trust)
	}
	for _, tr := range trust {
		if ok, why := hooks.CodexTrusted(states, tr); !ok {
			t.Errorf("%s: %s", tr.Key, why)
		}
	}
	if out, code := run("codex", "--user", "--trust", "--connect", "unix:/run/ahp.sock", "--write"); code != 0 || !strings.Contains(out, "nothing changed") || !strings.Contains(out, "already trusts") {
		t.Fatalf("rerun --trust: %d %s", code, out)
	}
	// A new address changes the definitions: the trust follows them.
	if out, code := run("codex", "--user", "--trust", "--connect", "unix:/run/other.sock", "--write"); code != 0 || !strings.Contains(out, "recorded in") {
		t.Fatalf("new address: %d %s", code, out)
	}
	doc, _ = os.ReadFile(hooksFile)
	config, _ = os.ReadFile(filepath.Join(codexHome, "config.toml"))
	states, _ = hooks.CodexHookStates(config)
	trust, _ = hooks.CodexAdapterHooks(hooksFile, doc)
	for _, tr := range trust {
		if ok, why := hooks.CodexTrusted(states, tr); !ok {
			t.Errorf("after a new address, %s: %s", tr.Key, why)
		}
	}
	bad := filepath.Join(dir, ".gemini")
	_ = os.MkdirAll(bad, 0o755)
	_ = os.WriteFile(filepath.Join(bad, "settings.json"), []byte("{oops"), 0o644)
	if out, code := run("gemini", "--dir", dir, "--connect", "unix:/x", "--write"); code != 1 || !strings.Contains(out, "left untouched") {
		t.Fatalf("invalid: %d %s", code, out)
	}
}

// The small ahp-hook executable repeats admin.SessionEnv so as not to link
// the admin package; both must name the same variable.
func TestHookSessionEnvName(t *testing.T) {
	if hooks.SessionEnv != admin.SessionEnv {
		t.Fatalf("hooks.SessionEnv %q != admin.SessionEnv %q", hooks.SessionEnv, admin.SessionEnv)
	}
}
