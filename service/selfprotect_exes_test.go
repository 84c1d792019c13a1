package service

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
)

// hookFixture lays out a project and a home whose agents' settings run
// hooks: Claude Code the ahp binary by absolute path and a project script
// through $CLAUDE_PROJECT_DIR, Gemini CLI a bare ahp-hook found on PATH,
// Codex (user settings) a Python script.
func hookFixture(t *testing.T) (proj, home string, want []string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, home = filepath.Join(root, "proj"), filepath.Join(root, "home")
	bin := filepath.Join(root, "bin")
	write := func(p, s string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(bin, "ahp"), "#!/bin/sh\n", 0o755)
	write(filepath.Join(bin, "ahp-hook"), "#!/bin/sh\n", 0o755)
	write(filepath.Join(proj, ".claude", "hooks", "guard.sh"), "#!/bin/sh\n", 0o755)
	write(filepath.Join(home, ".codex", "check.py"), "", 0o644)
	write(filepath.Join(proj, ".claude", "settings.json"), `{"permissions":{"allow":["Bash"]},"hooks":{"PreToolUse":[{"matcher":"*","hooks":[
		{"type":"command","command":"\"`+filepath.Join(bin, "ahp")+`\" hook claude-code --connect unix:/tmp/ahp.sock --timeout 50s"},
		{"type":"command","command":"$CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh"}]}]}}`, 0o644)
	write(filepath.Join(proj, ".gemini", "settings.json"), `{"hooks":{"BeforeTool":[{"hooks":[{"type":"command","command":"ahp-hook gemini --connect unix:x"}]}]}}`, 0o644)
	write(filepath.Join(home, ".codex", "hooks.json"), `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"FOO=1 python3 -u ~/.codex/check.py --x"}]}]}}`, 0o644)
	write(filepath.Join(proj, ".claude", "settings.local.json"), `not json`, 0o644)
	t.Setenv("PATH", bin)
	return proj, home, []string{
		filepath.Join(bin, "ahp"),
		filepath.Join(proj, ".claude", "hooks", "guard.sh"),
		filepath.Join(bin, "ahp-hook"),
		filepath.Join(home, ".codex", "check.py"),
	}
}

func TestHookExecutables(t *testing.T) {
	proj, home, want := hookFixture(t)
	exes, names := HookExecutables(proj, home)
	for _, w := range want {
		if !slices.Contains(exes, w) {
			t.Errorf("%s not found in %v", w, exes)
		}
	}
	if len(exes) != len(want) {
		t.Errorf("executables = %v, want %v", exes, want)
	}
	if !slices.Contains(names, "ahp") || !slices.Contains(names, "ahp-hook") || slices.Contains(names, "guard.sh") || slices.Contains(names, "check.py") {
		t.Errorf("adapter names = %v", names)
	}
}

// Through the policy the harness builds: the executables its hooks run
// cannot be replaced, written or deleted by an agent, and can still be run.
func TestSelfProtectionGuardsHookExecutables(t *testing.T) {
	proj, home, want := hookFixture(t)
	t.Chdir(proj)
	t.Setenv("HOME", home)
	c := config.Default()
	c.DataDir = filepath.Join(proj, "ahp-data")
	popts := policyOptions(slog.New(slog.DiscardHandler), c, "", ThisProcess())
	set, err := policy.Compile(policy.Options{Params: popts.Params, Instance: popts.Instance})
	if err != nil {
		t.Fatal(err)
	}
	eval := func(payload string) (string, protocol.DecisionKind) {
		r := set.Evaluate(&policy.Input{Event: &protocol.Event{EventType: protocol.EventPreAction, Payload: []byte(payload)}})
		return r.RuleID, r.Decision.Kind
	}
	for _, exe := range want {
		for _, cmd := range []string{"rm -f " + exe + " && cp /bin/true " + exe, "echo 'exit 0' > " + exe, "mv /tmp/x " + exe} {
			if rule, kind := eval(`{"tool_name":"Bash","tool_input":{"command":` + quote(cmd) + `}}`); rule != "self_protection.harness_files" || kind != protocol.DecisionBlock {
				t.Errorf("%s: %s %s", cmd, rule, kind)
			}
		}
		if rule, _ := eval(`{"tool_name":"Write","tool_input":{"file_path":` + quote(exe) + `,"content":"exit 0"}}`); rule != "self_protection.harness_files" {
			t.Errorf("Write %s: %q", exe, rule)
		}
	}
	ahp := want[0]
	if rule, kind := eval(`{"tool_name":"Bash","tool_input":{"command":` + quote(ahp+" version") + `}}`); kind != protocol.DecisionAllow {
		t.Errorf("running ahp version: %s %s", rule, kind)
	}
	if rule, _ := eval(`{"tool_name":"Bash","tool_input":{"command":` + quote(ahp+" --token '' approvals approve 1") + `}}`); rule != "self_protection.admin_command" {
		t.Errorf("ahp approvals: %q", rule)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Hook commands are read by a real shell parser (package effects): a
// program behind sh -c, env or nohup, a quoted project variable, and an
// interpreter's script are found.
func TestHookProgramShapes(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "ahp-hook"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	proj, home := filepath.Join(dir, "proj"), filepath.Join(dir, "home")
	for cmd, want := range map[string]string{
		`sh -c "ahp-hook gemini --connect unix:x"`:          filepath.Join(bin, "ahp-hook"),
		`nohup env -i ahp-hook codex`:                       filepath.Join(bin, "ahp-hook"),
		`"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh --x`:  filepath.Join(proj, ".claude", "hooks", "guard.sh"),
		`bash -e "${CLAUDE_PROJECT_DIR}/hooks/check.sh"`:    filepath.Join(proj, "hooks", "check.sh"),
		`FOO=1 python3 -u ~/.codex/check.py`:                filepath.Join(home, ".codex", "check.py"),
		`cd "$CLAUDE_PROJECT_DIR" && ./tools/hook.sh; true`: filepath.Join(proj, "tools", "hook.sh"),
	} {
		got, _ := hookProgram(cmd, proj, home)
		if got != want {
			t.Errorf("hookProgram(%s) = %q, want %q", cmd, got, want)
		}
	}
	if _, adapter := hookProgram(`sh -c "ahp-hook gemini"`, proj, home); !adapter {
		t.Error("ahp-hook gemini behind sh -c is not recognised as the adapter")
	}
}
