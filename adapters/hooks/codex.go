package hooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"unicode/utf8"
)

// Codex runs a hook from a user or project file (hooks.json, or [hooks] in
// config.toml) only when the user's config.toml holds, under
// [hooks.state."KEY"], a trusted_hash equal to the hash of the hook's
// current definition; any other hook is skipped without a word. Hooks of
// its system layer (/etc/codex: hooks.json, config.toml, requirements.toml)
// are "managed": they run without trust and cannot be disabled from the
// user's configuration. Measured on Codex CLI 0.169.0 (its app-server's
// hooks/list reports the same keys and hashes as computed here).

// CodexManagedHooksFile is the hooks file of Codex's system layer, which
// Codex runs without asking for trust (Linux and macOS).
const CodexManagedHooksFile = "/etc/codex/hooks.json"

// CodexHome returns Codex's home directory: $CODEX_HOME, else
// home/.codex.
func CodexHome(home string) string {
	if h := os.Getenv("CODEX_HOME"); h != "" {
		if abs, err := filepath.Abs(h); err == nil {
			return abs
		}
		return h
	}
	return filepath.Join(home, ".codex")
}

// codexEventLabels are the names Codex gives its hook events in trust keys
// and hashes.
var codexEventLabels = map[string]string{
	"PreToolUse":        "pre_tool_use",
	"PermissionRequest": "permission_request",
	"PostToolUse":       "post_tool_use",
	"PreCompact":        "pre_compact",
	"PostCompact":       "post_compact",
	"SessionStart":      "session_start",
	"UserPromptSubmit":  "user_prompt_submit",
	"Stop":              "stop",
}

// codexContextEvents are the events whose hooks may set
// additionalContextLimit; Codex ignores it elsewhere.
var codexContextEvents = map[string]bool{"PreToolUse": true, "PostToolUse": true, "SessionStart": true, "UserPromptSubmit": true}

// codexDefaultContextLimit is the additionalContextLimit Codex leaves out
// of the hash (its default).
const codexDefaultContextLimit = 2500

// CodexHookKey is the key of a hook's entry under [hooks.state] in
// Codex's config.toml: the absolute path of the file that declares it, the
// event, the index of its matcher group in the event's list and its index
// in the group.
func CodexHookKey(file, event string, group, handler int) string {
	return fmt.Sprintf("%s:%s:%d:%d", file, codexEventLabels[event], group, handler)
}

// CodexCommandHook is one command hook as Codex reads it from hooks.json.
type CodexCommandHook struct {
	Event                  string  // PreToolUse, ...
	Matcher                *string // the group's matcher, nil when absent
	Command                string
	Timeout                *uint64 // seconds; nil: Codex's default (600)
	Async                  bool
	StatusMessage          *string
	AdditionalContextLimit *uint64
}

// Hash returns the trusted_hash Codex expects for h: the SHA-256 of its
// normalised definition (event label, matcher, the one handler with its
// timeout filled in) written as JSON with sorted keys and no spaces,
// prefixed "sha256:".
func (h CodexCommandHook) Hash() string {
	timeout := uint64(600)
	if h.Timeout != nil {
		timeout = max(*h.Timeout, 1)
	}
	var b bytes.Buffer
	b.WriteString(`{"event_name":`)
	serdeString(&b, codexEventLabels[h.Event])
	b.WriteString(`,"hooks":[{`)
	if h.AdditionalContextLimit != nil && codexContextEvents[h.Event] && *h.AdditionalContextLimit != codexDefaultContextLimit {
		b.WriteString(`"additionalContextLimit":` + strconv.FormatUint(*h.AdditionalContextLimit, 10) + ",")
	}
	b.WriteString(`"async":` + strconv.FormatBool(h.Async) + `,"command":`)
	serdeString(&b, h.Command)
	if h.StatusMessage != nil {
		b.WriteString(`,"statusMessage":`)
		serdeString(&b, *h.StatusMessage)
	}
	b.WriteString(`,"timeout":` + strconv.FormatUint(timeout, 10) + `,"type":"command"}]`)
	// UserPromptSubmit and Stop take no matcher: Codex drops it.
	if h.Matcher != nil && h.Event != "UserPromptSubmit" && h.Event != "Stop" {
		b.WriteString(`,"matcher":`)
		serdeString(&b, *h.Matcher)
	}
	b.WriteString("}")
	sum := sha256.Sum256(b.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// serdeString writes s as a JSON string escaped as Rust's serde_json does
// (Go's encoder escapes more: <, >, &, U+2028, U+2029).
func serdeString(b *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			r = utf8.RuneError // Codex reads files as UTF-8; keep Go's reading
		}
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xf])
		default:
			b.WriteRune(r)
		}
		i += size
	}
	b.WriteByte('"')
}

// CodexTrust is the trust entry of one hook: its [hooks.state] key and
// the hash of its definition.
type CodexTrust struct {
	Key   string
	Hash  string
	Event string
}

// codexFile is the part of a Codex hooks.json that trust depends on.
type codexFile struct {
	Hooks map[string][]struct {
		Matcher *string                      `json:"matcher"`
		Hooks   []map[string]json.RawMessage `json:"hooks"`
	} `json:"hooks"`
}

// CodexAdapterHooks returns the trust entries of this adapter's command
// hooks in the Codex hooks.json document doc, which Codex reads from the
// absolute path file.
func CodexAdapterHooks(file string, doc []byte) ([]CodexTrust, error) {
	hooks, err := CodexCommandHooks(file, doc)
	if err != nil {
		return nil, err
	}
	var out []CodexTrust
	for _, h := range hooks {
		if IsAdapterCommand(Codex, h.Hook.Command) {
			out = append(out, h.CodexTrust)
		}
	}
	return out, nil
}

// CodexTrustFor returns the trust entries of the command hooks of doc
// (read from file) whose command is command: the hooks an installer just
// wrote, whatever the command is.
func CodexTrustFor(file string, doc []byte, command string) ([]CodexTrust, error) {
	hooks, err := CodexCommandHooks(file, doc)
	if err != nil {
		return nil, err
	}
	var out []CodexTrust
	for _, h := range hooks {
		if h.Hook.Command == command {
			out = append(out, h.CodexTrust)
		}
	}
	return out, nil
}

// CodexLocatedHook is a command hook with its trust entry.
type CodexLocatedHook struct {
	CodexTrust
	Hook CodexCommandHook
}

// CodexCommandHooks returns every command hook of the Codex hooks.json
// document doc read from file, with its trust key and hash, in a stable
// order.
func CodexCommandHooks(file string, doc []byte) ([]CodexLocatedHook, error) {
	var f codexFile
	if err := json.Unmarshal(doc, &f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSettings, err)
	}
	events := make([]string, 0, len(f.Hooks))
	for e := range f.Hooks {
		if _, ok := codexEventLabels[e]; ok {
			events = append(events, e)
		}
	}
	sort.Strings(events)
	var out []CodexLocatedHook
	for _, event := range events {
		for gi, g := range f.Hooks[event] {
			for hi, raw := range g.Hooks {
				var typ, command string
				_ = json.Unmarshal(raw["type"], &typ)
				if typ != "command" || json.Unmarshal(raw["command"], &command) != nil {
					continue
				}
				h := CodexCommandHook{Event: event, Matcher: g.Matcher, Command: command}
				var n uint64
				if v, ok := raw["timeout"]; ok && string(v) != "null" {
					if json.Unmarshal(v, &n) == nil {
						h.Timeout = &n
					}
				}
				_ = json.Unmarshal(raw["async"], &h.Async)
				if v, ok := raw["statusMessage"]; ok && string(v) != "null" {
					var s string
					if json.Unmarshal(v, &s) == nil {
						h.StatusMessage = &s
					}
				}
				if v, ok := raw["additionalContextLimit"]; ok && string(v) != "null" {
					var l uint64
					if json.Unmarshal(v, &l) == nil {
						h.AdditionalContextLimit = &l
					}
				}
				out = append(out, CodexLocatedHook{
					CodexTrust: CodexTrust{Key: CodexHookKey(file, event, gi, hi), Hash: h.Hash(), Event: event},
					Hook:       h,
				})
			}
		}
	}
	return out, nil
}
