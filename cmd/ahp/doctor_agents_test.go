//go:build unix

package main

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/adapters/hooks"
)

// TestDoctorAgents: ahp doctor says, per agent whose settings it finds,
// whether it is supervised and why: hooks installed by ahp hook install in
// front of a running harness are (the test action comes back denied by
// it); a Codex hook without the trust Codex checks is not, nor is it once
// the trust is gone, nor a hook whose command does not exist, nor one
// that lets the action through, nor one whose matcher misses the shell
// tool; a managed Codex hook needs no trust; with the harness down no
// agent is.
func TestDoctorAgents(t *testing.T) {
	bin := e2eBinary(t)
	dir := t.TempDir()
	project, home, system := filepath.Join(dir, "proj"), filepath.Join(dir, "home"), filepath.Join(dir, "sys")
	for _, d := range []string{project, home, system} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srv, sock, _ := startServe(t, bin, dir)
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	codexHome := filepath.Join(home, ".codex")
	install := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"hook", "install"}, append(args, "--connect", "unix:"+sock, "--timeout", "5s", "--write")...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME="+codexHome)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("install %v: %v %s", args, err, out)
		}
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	agent, err := lookupAccount(me)
	if err != nil {
		t.Fatal(err)
	}
	p := agentPaths{project: project, home: home, codexHome: codexHome, system: system}
	doctor := func() (string, int) {
		var out strings.Builder
		n := doctorAgents(&doctorReport{w: &out}, p, agent, 10*time.Second)
		return out.String(), n
	}
	expect := func(out string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("report lacks %q:\n%s", w, out)
			}
		}
	}

	out, n := doctor()
	if n != 0 {
		t.Fatalf("no settings: %d unsupervised\n%s", n, out)
	}
	expect(out, "[ok]   claude-code: no settings found", "[ok]   codex: no settings found", "[ok]   gemini: no settings found")

	install("claude-code", "--dir", project)
	install("gemini", "--user")
	install("codex", "--user", "--trust")
	out, n = doctor()
	if n != 0 {
		t.Fatalf("installed: %d unsupervised\n%s", n, out)
	}
	expect(out, "[ok]   claude-code: supervised: "+filepath.Join(project, ".claude", "settings.json"),
		"[ok]   gemini: supervised: "+filepath.Join(home, ".gemini", "settings.json"),
		"[ok]   codex: supervised: "+filepath.Join(codexHome, "hooks.json"),
		"the harness denied the test action: ahp: blocked by the harness: recursive delete of / or the home directory")
	// The agent's user (here the same) can edit its own settings: said.
	expect(out, "[warn] codex: the agent's user "+me.Username+" can edit "+filepath.Join(codexHome, "hooks.json")+" and "+filepath.Join(codexHome, "config.toml")+" (its trust)")

	// Claude Code with disableAllHooks runs no hook at all.
	local := filepath.Join(project, ".claude", "settings.local.json")
	if err := os.WriteFile(local, []byte(`{"disableAllHooks": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, n = doctor()
	if n != 1 {
		t.Fatalf("disableAllHooks: %d unsupervised\n%s", n, out)
	}
	expect(out, "[FAIL] claude-code: NOT supervised", "disableAllHooks is true in "+local)
	if err := os.Remove(local); err != nil {
		t.Fatal(err)
	}

	// Checked as root for another user: the hooks run as that user, who
	// here can reach neither the project nor the ahp binary.
	if os.Geteuid() == 0 {
		if nobody, err := accountNamed("nobody"); err == nil {
			var report strings.Builder
			if n := doctorAgents(&doctorReport{w: &report}, p, nobody, 10*time.Second); n != 3 {
				t.Fatalf("as nobody: %d unsupervised\n%s", n, report.String())
			}
			if !strings.Contains(report.String(), "cannot run it as nobody") {
				t.Fatalf("as nobody: the hooks were not run as nobody\n%s", report.String())
			}
		}
	}

	// Codex itself disagrees (a Codex that computes trust another way):
	// its verdict wins. A stand-in for codex app-server answers hooks/list.
	fake := filepath.Join(dir, "fake-codex")
	key := hooks.CodexHookKey(filepath.Join(codexHome, "hooks.json"), "PreToolUse", 0, 0)
	script := "#!/bin/sh\nread a; echo '{\"id\":1,\"result\":{}}'; read b; read c\n" +
		"echo '{\"id\":2,\"result\":{\"data\":[{\"hooks\":[{\"key\":\"" + key + "\",\"enabled\":true,\"trustStatus\":\"modified\",\"currentHash\":\"sha256:other\"}]}]}}'\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p.codexBin = fake
	out, n = doctor()
	p.codexBin = ""
	if n != 1 {
		t.Fatalf("Codex disagrees: %d unsupervised\n%s", n, out)
	}
	expect(out, "[FAIL] codex: NOT supervised", "itself reports the hook", "as modified")

	// The trust gone (what the installer left before): Codex skips the
	// hook, doctor says so and how to fix it.
	config := filepath.Join(codexHome, "config.toml")
	trusted, _ := os.ReadFile(config)
	if err := os.WriteFile(config, []byte("model = \"m\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, n = doctor()
	if n != 1 {
		t.Fatalf("untrusted Codex: %d unsupervised\n%s", n, out)
	}
	expect(out, "[FAIL] codex: NOT supervised", "Codex skips the hook", "no trusted_hash", "--user --trust --write", "[ok]   claude-code: supervised")
	// The hook changed after it was trusted: also skipped by Codex.
	if err := os.WriteFile(config, trusted, 0o600); err != nil {
		t.Fatal(err)
	}
	hooksFile := filepath.Join(codexHome, "hooks.json")
	doc, _ := os.ReadFile(hooksFile)
	changed := strings.ReplaceAll(string(doc), "--timeout 5s", "--timeout 6s")
	if err := os.WriteFile(hooksFile, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	out, n = doctor()
	if n != 1 || !strings.Contains(out, "trusts another definition") {
		t.Fatalf("modified Codex hook: %d unsupervised\n%s", n, out)
	}
	// Managed: the same hooks in the system layer need no trust.
	if err := os.Remove(hooksFile); err != nil {
		t.Fatal(err)
	}
	managed := filepath.Join(system, "etc", "codex", "hooks.json")
	if err := os.MkdirAll(filepath.Dir(managed), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(managed, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, n = doctor()
	if n != 0 {
		t.Fatalf("managed Codex: %d unsupervised\n%s", n, out)
	}
	expect(out, "[ok]   codex: supervised: "+managed+" (managed)")

	// Gemini: a hook whose command is gone, one that allows everything,
	// one whose matcher misses the shell tool.
	gemini := filepath.Join(home, ".gemini", "settings.json")
	for _, c := range []struct{ settings, want string }{
		{`{"hooks":{"BeforeTool":[{"hooks":[{"type":"command","command":"/nonexistent/ahp hook gemini --connect unix:/x","timeout":5000}]}]}}`, "does not exist or cannot be executed (exit 127"},
		{`{"hooks":{"BeforeTool":[{"hooks":[{"type":"command","command":"echo '{}'","timeout":5000}]}]}}`, "let the test action"},
		{`{"hooks":{"BeforeTool":[{"matcher":"write_file","hooks":[{"type":"command","command":"ahp hook gemini","timeout":5000}]}]}}`, `has matcher "write_file", which does not cover run_shell_command`},
		{`{"hooks":{}}`, "no command hook at the pre-tool event"},
	} {
		if err := os.WriteFile(gemini, []byte(c.settings), 0o644); err != nil {
			t.Fatal(err)
		}
		out, n = doctor()
		if n != 1 {
			t.Fatalf("gemini %s: %d unsupervised\n%s", c.settings, n, out)
		}
		expect(out, "[FAIL] gemini: NOT supervised", c.want, "[ok]   claude-code: supervised")
	}

	// The harness down: the hooks fail closed, but nothing supervises.
	_ = srv.Process.Kill()
	_ = srv.Wait()
	install("gemini", "--user")
	out, n = doctor()
	if n != 3 {
		t.Fatalf("harness down: %d unsupervised\n%s", n, out)
	}
	expect(out, "[FAIL] claude-code: NOT supervised", "[FAIL] codex: NOT supervised", "[FAIL] gemini: NOT supervised", "fails closed")

	// Through the command: exit status 1, the verdict per agent.
	cmd := exec.Command(bin, "doctor", "--dir", project, "--data-dir", filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME="+codexHome)
	b, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(b), "[FAIL] claude-code: NOT supervised") {
		t.Fatalf("ahp doctor: %v\n%s", err, b)
	}
}
