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
