package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Scope says which settings file the installer writes.
type Scope int

// The scopes of a settings file.
const (
	ScopeProject Scope = iota // the project's settings (checked in with it)
	ScopeUser                 // the user's settings in the home directory
)

// SettingsPath returns the settings file of t for scope: project is the
// project's root, home the user's home directory.
func SettingsPath(t Tool, scope Scope, project, home string) string {
	dir := map[Tool]string{ClaudeCode: ".claude", Codex: ".codex", Gemini: ".gemini"}[t]
	file := map[Tool]string{ClaudeCode: "settings.json", Codex: "hooks.json", Gemini: "settings.json"}[t]
	base := project
	if scope == ScopeUser {
		base = home
	}
	return filepath.Join(base, dir, file)
}

// ErrInvalidSettings is wrapped by Merge when the existing file is not a
// JSON object of the expected shape; the file is then left untouched.
var ErrInvalidSettings = errors.New("settings file is not valid")

// hookEntry is one hook in the tools' settings; the three tools share the
// shape {"hooks": {EVENT: [{"matcher"?, "hooks": [{"type", "command",
// "timeout"}]}]}}. Claude Code and Codex count the timeout in seconds,
// Gemini CLI in milliseconds.
type hookEntry struct {
	Name    string `json:"name,omitempty"`
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int64  `json:"timeout"`
}

type hookGroup struct {
	Hooks []hookEntry `json:"hooks"`
}

// IsAdapterCommand reports whether a configured hook command is this
// adapter for tool t (an ahp or ahp-hook executable running "hook TOOL").
func IsAdapterCommand(t Tool, command string) bool {
	f := strings.Fields(command)
	for i := 0; i < len(f); i++ {
		base := filepath.Base(strings.Trim(f[i], `"'`))
		if base == "ahp-hook" && i+1 < len(f) && f[i+1] == string(t) {
			return true
		}
		if base == "ahp" && i+2 < len(f) && f[i+1] == "hook" && f[i+2] == string(t) {
			return true
		}
	}
	return false
}

// Merge adds the adapter's hook with command for every event of t to the
// settings document existing (empty for a new file) and returns the new
// document. Every other setting and hook is kept; a hook of this adapter
// already present is replaced in place, so that a second run with the same
// command changes nothing (changed is false).
func Merge(t Tool, existing []byte, command string, toolTimeout time.Duration) (out []byte, changed bool, err error) {
	doc := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(existing)) > 0 {
		if err := json.Unmarshal(existing, &doc); err != nil || doc == nil {
			return nil, false, fmt.Errorf("%w: %v", ErrInvalidSettings, orErr(err, "not a JSON object"))
		}
	}
	hooks := map[string]json.RawMessage{}
	if raw, ok := doc["hooks"]; ok {
		if err := json.Unmarshal(raw, &hooks); err != nil || hooks == nil {
			return nil, false, fmt.Errorf("%w: \"hooks\" is not an object", ErrInvalidSettings)
		}
	}
	timeout := int64(toolTimeout / time.Second)
	if t == Gemini {
		timeout = toolTimeout.Milliseconds()
	}
	entry := hookEntry{Type: "command", Command: command, Timeout: timeout}
	if t == Gemini {
		entry.Name = "ahp"
	}
	for _, event := range Events(t) {
		var groups []json.RawMessage
		if raw, ok := hooks[event]; ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return nil, false, fmt.Errorf("%w: hooks.%s is not a list", ErrInvalidSettings, event)
			}
		}
		found := false
		for i, g := range groups {
			var grp map[string]json.RawMessage
			if json.Unmarshal(g, &grp) != nil {
				continue
			}
			var entries []map[string]json.RawMessage
			if json.Unmarshal(grp["hooks"], &entries) != nil {
				continue
			}
			for j, e := range entries {
				var cmd string
				_ = json.Unmarshal(e["command"], &cmd)
				if !IsAdapterCommand(t, cmd) {
					continue
				}
				found = true
				b, _ := json.Marshal(entry)
				var mine map[string]json.RawMessage
				_ = json.Unmarshal(b, &mine)
				entries[j] = mine
			}
			if found {
				grp["hooks"], _ = json.Marshal(entries)
				groups[i], _ = json.Marshal(grp)
				break
			}
		}
		if !found {
			g, _ := json.Marshal(hookGroup{Hooks: []hookEntry{entry}})
			groups = append(groups, g)
		}
		hooks[event], _ = json.Marshal(groups)
	}
	doc["hooks"], _ = json.Marshal(hooks)
	out, err = json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, false, err
	}
	out = append(out, '\n')
	return out, !sameJSON(existing, out), nil
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func orErr(err error, def string) string {
	if err != nil {
		return err.Error()
	}
	return def
}

// Install merges the adapter's hooks into the settings file at path and
// writes it (atomically, keeping its mode) when write is true and something
// changed. It returns the merged document. An invalid file is never
// overwritten.
func Install(t Tool, path, command string, toolTimeout time.Duration, write bool) (doc []byte, changed bool, err error) {
	existing, err := ReadSettings(path)
	if err != nil {
		return nil, false, err
	}
	doc, changed, err = Merge(t, existing, command, toolTimeout)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w (left untouched)", path, err)
	}
	if !write || !changed {
		return doc, changed, nil
	}
	return doc, true, WriteFileAtomic(path, doc)
}

// ReadSettings reads a settings file; a missing one reads as empty.
func ReadSettings(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// WriteFileAtomic replaces the file at path with data through a temporary
// file in the same directory (created with its parents when missing),
// keeping the mode of the file it replaces (0644 for a new one).
func WriteFileAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ahp-hook-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
