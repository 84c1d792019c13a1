package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

const cognitivePolicy = `
rules:
  - id: no-force-push
    target: {event_types: [pre_action]}
    condition: 'event.command.contains("push --force")'
    outcome: {decision: block, reason: "force-pushing to main rewrites shared history"}
guidance:
  - id: db-migration
    description: how this team migrates databases
    when: '"migration" in event.words || event.problem.contains("migration")'
    strategy: step_by_step
    subtasks: [back up, dry-run, apply, verify]
    hints: [never edit an applied migration]
`

// cognitiveServe starts ahp serve with cognitivePolicy and extra config,
// and returns a function running the ahp binary in its directory.
func cognitiveServe(t *testing.T, extraConfig string) (run func(args ...string) (string, int), dir string) {
	t.Helper()
	bin := e2eBinary(t)
	dir = t.TempDir()
	sock := filepath.Join(dir, "ahp.sock")
	if err := os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte(cognitivePolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := "listen: [\"unix:" + sock + "\"]\nadmin: \"off\"\ndata_dir: " + filepath.Join(dir, "data") +
		"\npolicy: {files: [\"" + filepath.Join(dir, "policy.yaml") + "\"]}\n" + extraConfig
	if err := os.WriteFile(filepath.Join(dir, "ahp.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := exec.Command(bin, "serve", "--config", filepath.Join(dir, "ahp.yaml"))
	srv.Dir = dir
	stderr := &syncBuffer{}
	srv.Stderr = stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
		if t.Failed() {
			t.Logf("ahp serve stderr:\n%s", stderr.String())
		}
	})
	waitFor(t, func() bool { return accepting(sock) })
	run = func(args ...string) (string, int) {
		t.Helper()
		if args[0] == "send" {
			args = append([]string{"send", "--connect", "unix:" + sock}, args[1:]...)
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), code
	}
	return run, dir
}

// Issue 18, point 3, through ahp serve: a policy block in session A is
// recalled by session B of the same workspace when B asks about it, named
// as a policy memory of session A; a session in another workspace recalls
// nothing; ahp memory list shows where each memory came from.
func TestServeMemoryFillsItself(t *testing.T) {
	run, dir := cognitiveServe(t, "")
	if out, code := run("send", "--session", "A", "intent_detection", `{"session_id":"A","prompt":"push my fix to main","workspace":"/repo/app"}`); code != 0 {
		t.Fatalf("intent: %d %s", code, out)
	}
	if out, code := run("send", "--session", "A", "pre_action", `{"tool_name":"bash","arguments":{"command":"git push --force origin main"}}`); code != 2 {
		t.Fatalf("force push: %d %s", code, out)
	}
	recallB := `{"session_id":"B","query":"can I force push to main?","memory_type":"all","max_results":5,"working_directory":"/repo/app"}`
	var out string
	waitFor(t, func() bool { // memories are written in the background
		out, _ = run("send", "--session", "B", "memory_recall", recallB)
		return strings.Contains(out, "rewrites shared history")
	})
	var d struct {
		Decision      string `json:"decision"`
		InjectedFacts []struct {
			Content, Source string
		} `json:"injected_facts"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Decision != "allow" || len(d.InjectedFacts) != 1 ||
		!strings.HasPrefix(d.InjectedFacts[0].Source, "policy (block, session A, policy rule no-force-push)") {
		t.Fatalf("session B recalled %s (%v); want only the policy block of session A", out, err)
	}
	other := `{"session_id":"C","query":"can I force push to main?","memory_type":"all","max_results":5,"working_directory":"/elsewhere"}`
	if out, code := run("send", "--session", "C", "memory_recall", other); code != 0 || !strings.Contains(out, `"injected_facts":[]`) {
		t.Fatalf("another workspace recalled: %d %s", code, out)
	}
	list, code := run("memory", "list", "--data-dir", filepath.Join(dir, "data"))
	if code != 0 || !strings.Contains(list, "policy") || !strings.Contains(list, "block") ||
		!strings.Contains(list, "agent") || !strings.Contains(list, "prompt") || !strings.Contains(list, "/repo/app") {
		t.Fatalf("ahp memory list:\n%s", list)
	}
}

// Issue 18, point 4, through ahp serve: the guidance of the policy file
// answers planning with a strategy and subtasks and reasoning with hints;
// ahp check accepts the file and ahp test checks guidance expectations.
// With intent.llm set, intent_detection is answered by the LLM and the
// audit record says so.
func TestServeGuidanceAndLLM(t *testing.T) {
	var calls atomic.Int32
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{
			"content": `{"intent":"locate","confidence":0.9,"target_hints":{"target_type":"symbol","target_name":"authenticate"}}`}}}})
	}))
	defer llm.Close()
	run, dir := cognitiveServe(t, fmt.Sprintf("intent: {llm: {url: %q, model: test, timeout_ms: 2000}}\n", llm.URL+"/v1"))

	out, code := run("send", "planning", `{"session_id":"s","task_description":"Write the database migration for invoices","available_strategies":["tree_of_thoughts","step_by_step"]}`)
	want := `"selected_strategy":"step_by_step","planning_template":{"guidance":["db-migration"],"subtasks":["back up","dry-run","apply","verify"],"hints":["never edit an applied migration"]}`
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("planning: %d %s\nwant %s", code, out, want)
	}
	out, code = run("send", "reasoning", `{"session_id":"s","reasoning_type":"chain_of_thought","problem_statement":"migration 0007 fails on a fresh database"}`)
	if code != 0 || !strings.Contains(out, `"hints":["never edit an applied migration"]`) {
		t.Fatalf("reasoning: %d %s", code, out)
	}
	out, code = run("send", "intent_detection", `{"session_id":"s","prompt":"the thing that checks passwords","workspace":"/repo"}`)
	if code != 0 || !strings.Contains(out, `"detected_intent":"locate"`) || !strings.Contains(out, `"target_name":"authenticate"`) || calls.Load() != 1 {
		t.Fatalf("intent via LLM: %d %s (%d calls)", code, out, calls.Load())
	}
	audit, _ := run("audit", "query", "--data-dir", filepath.Join(dir, "data"), "--event-type", "intent_detection", "--json")
	if !strings.Contains(audit, `\"classifier\":\"llm\"`) && !strings.Contains(audit, `"classifier":"llm"`) {
		t.Fatalf("audit does not name the classifier:\n%s", audit)
	}
	// Replay with a policy whose guidance changed shows the change.
	changed := strings.Replace(cognitivePolicy, "id: db-migration", "id: db-migration-v2", 1)
	if err := os.WriteFile(filepath.Join(dir, "policy2.yaml"), []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	rp, _ := run("replay", "--policy", filepath.Join(dir, "policy2.yaml"), "--data-dir", filepath.Join(dir, "data"))
	if !strings.Contains(rp, "guidance changes (planning and reasoning), same decision: 2") ||
		!strings.Contains(rp, "guidance db-migration  →  new: allow (default) guidance db-migration-v2") {
		t.Fatalf("ahp replay does not show the changed guidance:\n%s", rp)
	}
	if out, code := run("check", filepath.Join(dir, "policy.yaml")); code != 0 {
		t.Fatalf("ahp check: %d %s", code, out)
	}
	tests := `cases:
  - name: migrations get the team's plan
    event: {event_type: planning, payload: {session_id: s, task_description: add a migration, available_strategies: [step_by_step]}}
    expect: {decision: allow, guidance: [db-migration]}
  - name: a typo fix gets none
    event: {event_type: planning, payload: {session_id: s, task_description: fix a typo, available_strategies: []}}
    expect: {decision: allow, guidance: []}
`
	if err := os.WriteFile(filepath.Join(dir, "policy_test.yaml"), []byte(tests), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := run("test", filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "policy_test.yaml")); code != 0 || !strings.Contains(out, "2 passed") {
		t.Fatalf("ahp test: %d %s", code, out)
	}
}
