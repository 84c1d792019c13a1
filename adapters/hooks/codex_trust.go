package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// CodexHookState is a hook's entry under [hooks.state] in Codex's
// config.toml.
type CodexHookState struct {
	TrustedHash string
	Enabled     *bool
}

// CodexHookStates reads the [hooks.state] entries of a Codex config.toml
// (empty input: none). Entries of another shape are skipped, as Codex
// skips them.
func CodexHookStates(config []byte) (map[string]CodexHookState, error) {
	doc, err := decodeTOML(config)
	if err != nil {
		return nil, err
	}
	out := map[string]CodexHookState{}
	hooks, _ := doc["hooks"].(map[string]any)
	state, _ := hooks["state"].(map[string]any)
	for key, v := range state {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		var s CodexHookState
		if h, ok := m["trusted_hash"].(string); ok {
			s.TrustedHash = h
		} else if m["trusted_hash"] != nil {
			continue
		}
		if e, ok := m["enabled"].(bool); ok {
			s.Enabled = &e
		} else if m["enabled"] != nil {
			continue
		}
		out[strings.TrimSpace(key)] = s
	}
	return out, nil
}

// CodexTrusted reports whether Codex runs the hook t given the states of
// config.toml: its trusted_hash is t's hash and it is not disabled. why
// says what is missing otherwise.
func CodexTrusted(states map[string]CodexHookState, t CodexTrust) (ok bool, why string) {
	s, found := states[t.Key]
	switch {
	case !found || s.TrustedHash == "":
		return false, fmt.Sprintf("no trusted_hash for %q under [hooks.state]", t.Key)
	case s.TrustedHash != t.Hash:
		return false, fmt.Sprintf("[hooks.state.%q] trusts another definition (trusted_hash %s, the hook is now %s): it was changed since it was trusted", t.Key, s.TrustedHash, t.Hash)
	case s.Enabled != nil && !*s.Enabled:
		return false, fmt.Sprintf("[hooks.state.%q] has enabled = false", t.Key)
	}
	return true, ""
}

func decodeTOML(b []byte) (map[string]any, error) {
	doc := map[string]any{}
	if len(bytes.TrimSpace(b)) == 0 {
		return doc, nil
	}
	if err := toml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSettings, err)
	}
	return doc, nil
}

// ErrTrustNotWritable is wrapped by TrustCodexHooks when the trust cannot
// be added to config.toml without rewriting parts of it that are not
// [hooks.state] tables of their own; the error says what to add by hand.
var ErrTrustNotWritable = errors.New("cannot record the trust in config.toml")

// TrustCodexHooks returns the Codex config.toml config with a trusted_hash
// for each entry of trust under [hooks.state] (and enabled = false turned
// into true), changing nothing else: an existing [hooks.state."KEY"] table
// is edited in place, a missing one appended. The result is checked by
// reading it back: every other value must be as before.
func TrustCodexHooks(config []byte, trust []CodexTrust) (out []byte, changed bool, err error) {
	before, err := decodeTOML(config)
	if err != nil {
		return nil, false, err
	}
	states, err := CodexHookStates(config)
	if err != nil {
		return nil, false, err
	}
	var todo []CodexTrust
	for _, t := range trust {
		if ok, _ := CodexTrusted(states, t); !ok {
			todo = append(todo, t)
		}
	}
	if len(todo) == 0 {
		return config, false, nil
	}
	lines := strings.SplitAfter(string(config), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var appended []string
	for _, t := range todo {
		assign := "trusted_hash = " + tomlString(t.Hash) + "\n"
		h := findStateTable(lines, t.Key)
		if h < 0 {
			appended = append(appended, "[hooks.state."+tomlString(t.Key)+"]\n", assign)
			continue
		}
		end := h + 1
		for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end]), "[") {
			end++
		}
		hashAt := -1
		for i := h + 1; i < end; i++ {
			switch keyOfLine(lines[i]) {
			case "trusted_hash":
				hashAt = i
			case "enabled":
				lines[i] = "enabled = true\n"
			}
		}
		if hashAt >= 0 {
			lines[hashAt] = assign
		} else {
			lines = append(lines[:h+1], append([]string{assign}, lines[h+1:]...)...)
		}
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
	}
	if len(appended) > 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("# Hooks of ahp (ahp hook install codex --trust): Codex runs a hook only\n# while its definition matches the trusted_hash recorded here.\n")
		for _, l := range appended {
			b.WriteString(l)
		}
	}
	out = []byte(b.String())
	after, err := decodeTOML(out)
	if err == nil {
		want := expectTrusted(before, todo)
		if !reflect.DeepEqual(after, want) {
			err = errors.New("the edited file does not read back as expected")
		}
	}
	if err != nil {
		var manual strings.Builder
		for _, t := range todo {
			fmt.Fprintf(&manual, "\n  [hooks.state.%s]\n  trusted_hash = %s", tomlString(t.Key), tomlString(t.Hash))
		}
		return nil, false, fmt.Errorf("%w (%v); add these entries under [hooks.state] yourself:%s", ErrTrustNotWritable, err, manual.String())
	}
	return out, true, nil
}

// expectTrusted returns a copy of doc with the trust of todo recorded.
func expectTrusted(doc map[string]any, todo []CodexTrust) map[string]any {
	want := deepCopy(doc).(map[string]any)
	hooks, ok := want["hooks"].(map[string]any)
	if !ok {
		hooks = map[string]any{}
		want["hooks"] = hooks
	}
	state, ok := hooks["state"].(map[string]any)
	if !ok {
		state = map[string]any{}
		hooks["state"] = state
	}
	for _, t := range todo {
		entry, ok := state[t.Key].(map[string]any)
		if !ok {
			entry = map[string]any{}
			state[t.Key] = entry
		}
		entry["trusted_hash"] = t.Hash
		if _, has := entry["enabled"]; has {
			entry["enabled"] = true
		}
	}
	return want
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}

// findStateTable returns the index of the line that opens the table
// [hooks.state."key"] (however its key is quoted), or -1.
func findStateTable(lines []string, key string) int {
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "[") || strings.HasPrefix(t, "[[") {
			continue
		}
		var doc map[string]any
		if toml.Unmarshal([]byte(t+"\n"), &doc) != nil || len(doc) != 1 {
			continue
		}
		hooks, _ := doc["hooks"].(map[string]any)
		if len(hooks) != 1 {
			continue
		}
		state, _ := hooks["state"].(map[string]any)
		if len(state) != 1 {
			continue
		}
		if entry, ok := state[key].(map[string]any); ok && len(entry) == 0 {
			return i
		}
	}
	return -1
}

// keyOfLine returns the key of a line that is one simple key = value
// pair, or "".
func keyOfLine(line string) string {
	var doc map[string]any
	if toml.Unmarshal([]byte(strings.TrimSpace(line)+"\n"), &doc) != nil || len(doc) != 1 {
		return ""
	}
	for k, v := range doc {
		if _, table := v.(map[string]any); !table {
			return k
		}
	}
	return ""
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
