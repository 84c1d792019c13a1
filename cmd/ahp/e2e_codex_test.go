//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/adapters/hooks"
)

// codexBinary returns $AHP_CODEX, the Codex CLI the real-Codex tests drive
// (.ci/run installs @openai/codex@0.169.0 from npm and sets it). Without
// it the test is skipped, except in CI, where it fails.
func codexBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("AHP_CODEX"); p != "" {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI: the Codex CLI is not installed (.ci/run installs @openai/codex@0.169.0 and sets AHP_CODEX)")
	}
	t.Skip("set AHP_CODEX to a Codex CLI executable (npm install --prefix /tmp/codex @openai/codex@0.169.0; AHP_CODEX=/tmp/codex/node_modules/.bin/codex) to run this test")
	return ""
}

// scriptedCodexModel plays the Responses API for Codex: a request that
// carries no tool output is answered with one exec_command call running
// command, a later one ends the turn. It keeps the tool outputs Codex
// sent back.
type scriptedCodexModel struct {
	command string
	// onCall, when set, runs before the tool call is answered.
	onCall  func()
	mu      sync.Mutex
	calls   int
	outputs []string
}

func (m *scriptedCodexModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	var req struct {
		Input []struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	_ = json.Unmarshal(body, &req)
	m.mu.Lock()
	answered := false
	for _, in := range req.Input {
		if in.Type == "function_call_output" {
			answered = true
			m.outputs = append(m.outputs, string(in.Output))
		}
	}
	toolCall := !answered
	var onCall func()
	if toolCall {
		m.calls++
		onCall, m.onCall = m.onCall, nil
	}
	m.mu.Unlock()
	if onCall != nil {
		onCall()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
	}
	ev(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_1"}})
	var item map[string]any
	if toolCall {
		args, _ := json.Marshal(map[string]string{"cmd": m.command})
		item = map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec_command", "arguments": string(args)}
	} else {
		item = map[string]any{"type": "message", "id": "msg_1", "role": "assistant",
			"content": []map[string]any{{"type": "output_text", "text": "done", "annotations": []any{}}}}
	}
	ev(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	ev(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	ev(map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_1",
		"usage": map[string]any{"input_tokens": 1, "input_tokens_details": nil, "output_tokens": 1, "output_tokens_details": nil, "total_tokens": 2}}})
}

// codexSetup is a scratch Codex home pointed at a scripted model, a work
// directory and the commands to run ahp and codex there.
type codexSetup struct {
	t               *testing.T
	codex, ahp      string
	home, work, cfg string
	// wrap, when set, runs each command through it (a private mount
	// namespace for the managed layer).
	wrap func(args ...string) []string
	// harness is the harness's stderr, shown when a run fails.
	harness fmt.Stringer
}

func newCodexSetup(t *testing.T, codex, ahp, dir string) *codexSetup {
	s := &codexSetup{t: t, codex: codex, ahp: ahp, home: filepath.Join(dir, "codex-home"), work: filepath.Join(dir, "work")}
	for _, d := range []string{s.home, s.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.cfg = filepath.Join(s.home, "config.toml")
	return s
}

// writeConfig points Codex at a scripted model at url.
func (s *codexSetup) writeConfig(url string) {
	s.t.Helper()
	old, _ := os.ReadFile(s.cfg)
	// Only the provider's address changes from run to run; the rest of
	// the file (the trust ahp recorded) stays.
	lines := strings.Split(string(old), "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(l, "base_url = ") {
			kept = append(kept, l)
		}
	}
	text := strings.Join(kept, "\n")
	if !strings.Contains(text, "[model_providers.mock]") {
		text = "model_provider = \"mock\"\nmodel = \"gpt-5.1-codex\"\n\n[model_providers.mock]\nname = \"mock\"\nwire_api = \"responses\"\nenv_key = \"AHP_TEST_MODEL_KEY\"\n" + text
	}
	text = strings.Replace(text, "[model_providers.mock]\n", "[model_providers.mock]\nbase_url = \""+url+"/v1\"\n", 1)
	if err := os.WriteFile(s.cfg, []byte(text), 0o600); err != nil {
		s.t.Fatal(err)
	}
}

func (s *codexSetup) command(args ...string) *exec.Cmd {
	if s.wrap != nil {
		args = s.wrap(args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "CODEX_HOME="+s.home, "HOME="+filepath.Dir(s.home), "AHP_TEST_MODEL_KEY=test-key", "NO_COLOR=1")
	return cmd
}

// run has Codex (codex exec, no hook-trust bypass) run command once
// through the scripted model and returns the model.
func (s *codexSetup) run(command string) *scriptedCodexModel {
	s.t.Helper()
	return s.runWith(&scriptedCodexModel{command: command}, true)
}

// runWith runs Codex against the model m; with needCall, the model must
// have been asked for the tool call and been sent its output.
func (s *codexSetup) runWith(m *scriptedCodexModel, needCall bool) *scriptedCodexModel {
	s.t.Helper()
	model := httptest.NewServer(m)
	defer model.Close()
	s.writeConfig(model.URL)
	cmd := s.command(s.codex, "exec", "--skip-git-repo-check", "--sandbox", "danger-full-access", "-C", s.work, "run the command")
	cmd.Dir = s.work
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		s.t.Fatalf("codex did not finish: %s", out)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if needCall && (m.calls == 0 || len(m.outputs) == 0) {
		var h string
		if s.harness != nil {
			h = s.harness.String()
		}
		s.t.Fatalf("the scripted tool call was not made or not answered (err %v):\n%s\nharness: %s", err, out, h)
	}
	return m
}

const codexTestPolicy = `rules:
  - id: no-marker
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("blocked-ran")'
    outcome: {decision: block, reason: "the marker is off limits"}
  - id: ask-a-human
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("escalate-ran")'
    outcome: {decision: escalate, reason: "a human must agree"}
`

// checkSupervised runs the four cases against a Codex whose hooks are
// installed: an allowed command runs, a blocked one does not (and the
// model is told why), an escalated one that nobody approves does not,
// and with the harness stopped nothing runs.
func (s *codexSetup) checkSupervised(srv *exec.Cmd, stderr fmt.Stringer) {
	t := s.t
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	allowed := filepath.Join(s.work, "allowed-ran")
	s.run("touch " + allowed)
	if !exists(allowed) {
		t.Fatal("the allowed command did not run: the set-up does not execute tools")
	}
	blocked := filepath.Join(s.work, "blocked-ran")
	m := s.run("touch " + blocked)
	if exists(blocked) {
		t.Fatalf("the blocked command ran: Codex did not run the hook\nharness: %s", stderr.String())
	}
	if r := m.outputs[0]; !strings.Contains(r, "the marker is off limits") {
		t.Fatalf("the model was not told the reason: %s", r)
	}
	escalated := filepath.Join(s.work, "escalate-ran")
	m = s.run("touch " + escalated)
	if exists(escalated) {
		t.Fatal("the escalated command ran without an approval")
	}
	if r := m.outputs[0]; !strings.Contains(r, "approval needed") {
		t.Fatalf("the model was not told an approval is needed: %s", r)
	}
	// The harness stops after the prompt was let through and before the
	// tool call: the PreToolUse hook cannot reach it.
	down := filepath.Join(s.work, "harness-down-ran")
	m = s.runWith(&scriptedCodexModel{command: "touch " + down, onCall: func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
	}}, true)
	if exists(down) {
		t.Fatal("a command ran with the harness down")
	}
	if r := m.outputs[0]; !strings.Contains(r, "failing closed") {
		t.Fatalf("the model was not told the harness is unreachable: %s", r)
	}
	// With the harness down from the start, the prompt's hook already
	// fails closed: Codex does not even ask the model.
	s.runWith(&scriptedCodexModel{command: "touch " + down}, false)
	if exists(down) {
		t.Fatal("a command ran with the harness down from the start")
	}
}

// TestCodexHookForReal drives the real Codex CLI (0.169.0) offline with a
// scripted model on loopback, never with --dangerously-bypass-hook-trust:
// ahp hook install codex --user --trust --write must leave a Codex that
// runs the hooks, so that a blocked command, an escalated one nobody
// approves, and any command while the harness is down do not run. The
// control: the same hooks.json without the trust ahp records (what the
// installer wrote before) lets the blocked command run.
func TestCodexHookForReal(t *testing.T) {
	codex := codexBinary(t)
	bin := e2eBinary(t)
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(codexTestPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, sock, stderr := startServe(t, bin, dir, "--policy", policy)
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	s := newCodexSetup(t, codex, bin, dir)
	s.harness = stderr
	s.writeConfig("http://127.0.0.1:9")
	untrusted, _ := os.ReadFile(s.cfg)
	install := s.command(bin, "hook", "install", "codex", "--user", "--trust", "--write", "--connect", "unix:"+sock, "--timeout", "8s")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install: %v %s", err, out)
	}

	// Control first: without the trust, Codex skips the hook silently.
	trusted, _ := os.ReadFile(s.cfg)
	if err := os.WriteFile(s.cfg, untrusted, 0o600); err != nil {
		t.Fatal(err)
	}
	control := filepath.Join(s.work, "blocked-ran-untrusted")
	s.run("touch " + control)
	if _, err := os.Stat(control); err != nil {
		t.Fatal("control: an untrusted hook blocked the command; the test cannot tell trust from no trust")
	}
	// ahp doctor agrees with Codex: not supervised, then supervised.
	me, _ := user.Current()
	agent, _ := lookupAccount(me)
	paths := agentPaths{project: s.work, home: dir, codexHome: s.home, system: filepath.Join(dir, "sys")}
	var report strings.Builder
	if n := doctorAgents(&doctorReport{w: &report}, paths, agent, 10*time.Second); n != 1 || !strings.Contains(report.String(), "[FAIL] codex: NOT supervised") {
		t.Fatalf("doctor on the untrusted hooks Codex skipped:\n%s", report.String())
	}
	if err := os.WriteFile(s.cfg, trusted, 0o600); err != nil {
		t.Fatal(err)
	}
	report.Reset()
	paths.codexBin = codex // and Codex itself confirms it
	if n := doctorAgents(&doctorReport{w: &report}, paths, agent, 30*time.Second); n != 0 || !strings.Contains(report.String(), "[ok]   codex: supervised") ||
		!strings.Contains(report.String(), "Codex itself ("+codex+") reports it trusted") {
		t.Fatalf("doctor on the trusted hooks:\n%s", report.String())
	}
	s.checkSupervised(srv, stderr)
}

// TestCodexManagedHookForReal: ahp hook install codex --managed --write
// puts the hooks in Codex's system layer (/etc/codex/hooks.json), which the
// real Codex runs with no trust recorded anywhere, and which the user's
// config.toml cannot switch off (enabled = false is ignored). /etc is an
// overlay in a private mount namespace, so the machine's /etc is never
// touched; that needs root and unshare(1).
func TestCodexManagedHookForReal(t *testing.T) {
	codex := codexBinary(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: /etc/codex is replaced by an overlay in a private mount namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("needs unshare(1) (util-linux) for a private mount namespace")
	}
	bin := e2eBinary(t)
	dir := t.TempDir()
	upper, work := filepath.Join(dir, "etc-upper"), filepath.Join(dir, "etc-work")
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(codexTestPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, sock, stderr := startServe(t, bin, dir, "--policy", policy)
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	s := newCodexSetup(t, codex, bin, dir)
	s.harness = stderr
	s.wrap = func(args ...string) []string {
		return append([]string{unshare, "--mount", "--propagation", "private", "sh", "-c",
			`mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1,workdir=$2" /etc && shift 2 && exec "$@"`, "sh", upper, work}, args...)
	}
	// The user's configuration tries to switch the managed hook off.
	if err := os.WriteFile(s.cfg, []byte("[hooks.state.\"/etc/codex/hooks.json:pre_tool_use:0:0\"]\nenabled = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.writeConfig("http://127.0.0.1:9")
	install := s.command(bin, "hook", "install", "codex", "--managed", "--write", "--connect", "unix:"+sock, "--timeout", "8s")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(upper, "codex", "hooks.json")); err != nil {
		t.Fatalf("the managed hooks file is not in the overlay: %v", err)
	}
	if _, err := os.Stat(hooks.CodexManagedHooksFile); err == nil && !strings.HasPrefix(hooks.CodexManagedHooksFile, dir) {
		// The machine's own /etc/codex/hooks.json, if any, is not ours:
		// make sure the install did not write it.
		if b, _ := os.ReadFile(hooks.CodexManagedHooksFile); strings.Contains(string(b), sock) {
			t.Fatal("the install wrote the machine's /etc/codex/hooks.json")
		}
	}
	if b, _ := os.ReadFile(s.cfg); strings.Contains(string(b), "trusted_hash") {
		t.Fatalf("a managed install recorded user trust:\n%s", b)
	}
	s.checkSupervised(srv, stderr)
}
