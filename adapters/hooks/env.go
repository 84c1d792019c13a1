package hooks

import (
	"fmt"
	"os"
	"strings"
)

// WriteSessionEnv appends "export NAME='VALUE'" to a Claude Code
// environment file ($CLAUDE_ENV_FILE, given to SessionStart hooks), so
// that every Bash command of the session runs with NAME set. Values
// holding a single quote or a newline are refused.
func WriteSessionEnv(path, name, value string) error {
	if strings.ContainsAny(value, "'\n\r\x00") {
		return fmt.Errorf("session id %q cannot be exported safely", value)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "export %s='%s'\n", name, value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SessionEnv is the variable in which the session's id is exported to the
// tool calls. It must equal admin.SessionEnv (a test in cmd/ahp checks);
// it is repeated here so that the small ahp-hook executable does not link
// the admin package.
const SessionEnv = "AHP_SESSION_ID"

// ExportSession writes SessionEnv for a Claude Code SessionStart input to
// envFile ($CLAUDE_ENV_FILE); it does nothing for other events or when
// envFile is empty.
func ExportSession(raw []byte, envFile string) error {
	if envFile == "" {
		return nil
	}
	in, err := ParseInput(raw)
	if err != nil || KindOf(ClaudeCode, in.HookEventName) != KindSessionStart {
		return nil
	}
	return WriteSessionEnv(envFile, SessionEnv, SessionID(ClaudeCode, in))
}
