package hooks

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const existingClaude = `{
  "permissions": {"allow": ["Bash(npm test)"]},
  "model": "opus",
  "hooks": {
    "PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 30}]}],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  }
}`

func TestInstallMerge(t *testing.T) {
	for _, tool := range Tools {
		t.Run(string(tool), func(t *testing.T) {
			dir := t.TempDir()
			path := SettingsPath(tool, ScopeProject, dir, "/nonexistent-home")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(existingClaude), 0o640); err != nil {
				t.Fatal(err)
			}
			cmd := "/usr/local/bin/ahp hook " + string(tool) + " --connect unix:/run/ahp.sock"
			doc, changed, err := Install(tool, path, cmd, 120*time.Second, true)
			if err != nil || !changed {
				t.Fatalf("install: changed=%v err=%v", changed, err)
			}
			onDisk, _ := os.ReadFile(path)
			if string(onDisk) != string(doc) {
				t.Fatal("written file differs from the returned document")
			}
			var got struct {
				Permissions map[string][]string `json:"permissions"`
				Model       string              `json:"model"`
				Hooks       map[string][]struct {
					Matcher string      `json:"matcher"`
					Hooks   []hookEntry `json:"hooks"`
				} `json:"hooks"`
			}
			if err := json.Unmarshal(onDisk, &got); err != nil {
				t.Fatal(err)
			}
			// Existing settings and hooks are kept.
			if got.Model != "opus" || got.Permissions["allow"][0] != "Bash(npm test)" {
				t.Fatalf("settings lost: %s", onDisk)
			}
			if n := got.Hooks["Notification"]; len(n) != 1 || n[0].Hooks[0].Command != "notify-send done" {
				t.Fatalf("Notification hook lost: %s", onDisk)
			}
			// Every handled event gets the adapter, with the tool's timeout unit.
			wantTimeout := int64(120)
			if tool == Gemini {
				wantTimeout = 120000
			}
			for _, ev := range Events(tool) {
				n := 0
				for _, g := range got.Hooks[ev] {
					for _, h := range g.Hooks {
						if h.Command == cmd {
							n++
							if h.Timeout != wantTimeout || h.Type != "command" {
								t.Fatalf("%s: %+v", ev, h)
							}
						}
					}
				}
				if n != 1 {
					t.Fatalf("%s: adapter present %d times: %s", ev, n, onDisk)
				}
			}
			if tool == ClaudeCode && (len(got.Hooks["PreToolUse"]) != 2 || got.Hooks["PreToolUse"][0].Hooks[0].Command != "./lint.sh") {
				t.Fatalf("existing PreToolUse hook not kept first: %s", onDisk)
			}
			st, _ := os.Stat(path)
			if st.Mode().Perm() != 0o640 {
				t.Fatalf("mode %v, want 0640 kept", st.Mode().Perm())
			}
			// A second run changes nothing.
			if _, changed, err := Install(tool, path, cmd, 120*time.Second, true); err != nil || changed {
				t.Fatalf("second run: changed=%v err=%v", changed, err)
			}
			again, _ := os.ReadFile(path)
			if string(again) != string(onDisk) {
				t.Fatal("second run rewrote the file")
			}
			// A new address replaces the adapter's hook instead of adding one.
			cmd2 := strings.Replace(cmd, "/run/ahp.sock", "/tmp/other.sock", 1)
			doc2, changed, err := Install(tool, path, cmd2, 120*time.Second, true)
			if err != nil || !changed || strings.Contains(string(doc2), "/run/ahp.sock") || strings.Count(string(doc2), cmd2) != len(Events(tool)) {
				t.Fatalf("replace: changed=%v err=%v\n%s", changed, err, doc2)
			}
		})
	}
}

func TestInstallNewAndInvalid(t *testing.T) {
	dir := t.TempDir()
	// No file yet: created with only the adapter's hooks; without --write
	// nothing is written.
	path := SettingsPath(Gemini, ScopeUser, "/nonexistent-project", dir)
	if path != filepath.Join(dir, ".gemini", "settings.json") {
		t.Fatalf("path %s", path)
	}
	doc, changed, err := Install(Gemini, path, "ahp hook gemini --connect unix:/x", time.Minute, false)
	if err != nil || !changed || !json.Valid(doc) {
		t.Fatalf("print: %v %v", changed, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("written without --write")
	}
	// Invalid JSON: a clear error, the file untouched.
	bad := filepath.Join(dir, "settings.json")
	for _, content := range []string{`{"hooks": {`, `[1,2]`, `{"hooks": []}`, `{"hooks": {"PreToolUse": {}}}`} {
		if err := os.WriteFile(bad, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := Install(ClaudeCode, bad, "ahp hook claude-code --connect unix:/x", time.Minute, true)
		if !errors.Is(err, ErrInvalidSettings) || !strings.Contains(err.Error(), "left untouched") {
			t.Fatalf("%s: err %v", content, err)
		}
		if b, _ := os.ReadFile(bad); string(b) != content {
			t.Fatalf("invalid file changed: %s", b)
		}
	}
}

func TestIsAdapterCommand(t *testing.T) {
	for cmd, want := range map[string]bool{
		"ahp hook codex --connect unix:/x":              true,
		"/opt/bin/ahp hook codex":                       true,
		"'/opt/my dir/ahp' hook codex":                  true,
		"ahp-hook codex --connect x":                    true,
		"ahp hook gemini":                               false,
		"ahp send --connect x pre_action {}":            false,
		"AHP_CONNECT=x /usr/bin/ahp hook codex":         true,
		"python3 hooks.py --hook PreToolUse # ahp hook": false,
	} {
		if got := IsAdapterCommand(Codex, cmd); got != want {
			t.Errorf("%q: %v, want %v", cmd, got, want)
		}
	}
}

func TestWriteSessionEnv(t *testing.T) {
	p := filepath.Join(t.TempDir(), "env")
	if err := WriteSessionEnv(p, "AHP_SESSION_ID", "3f1c2a9e"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "export AHP_SESSION_ID='3f1c2a9e'\n" {
		t.Fatalf("got %q", b)
	}
	if err := WriteSessionEnv(p, "AHP_SESSION_ID", "x'; rm -rf ~; '"); err == nil {
		t.Fatal("quote accepted")
	}
}
