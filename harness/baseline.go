package harness

import (
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"

	"github.com/ahp-go/ahp/internal/jsonscan"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/server"
)

// ShellPattern is one destructive shell command the baseline blocks.
type ShellPattern struct {
	Name string
	Re   *regexp.Regexp
	// Hint is a substring every match contains; commands without it skip
	// the regular expression.
	Hint string
}

// DestructiveShell lists the shell commands the baseline blocks.
var DestructiveShell = []ShellPattern{
	{"recursive delete of / or ~", regexp.MustCompile(`\brm\s+(-[a-zA-Z]*\s+)*(-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)(\s+-[a-zA-Z-]+)*\s+(--\s+)?("|')?(/|~|\$HOME)/?\*?("|')?(\s|;|&|\||$)`), "rm"},
	{"dd if=", regexp.MustCompile(`\bdd\s+.*\bif=`), "if="},
	{"mkfs", regexp.MustCompile(`\bmkfs(\.[a-z0-9]+)?\b`), "mkfs"},
	{"write to /dev/sd*", regexp.MustCompile(`>\s*/dev/(sd[a-z]|nvme\d|hd[a-z]|xvd[a-z])`), "/dev/"},
	{"fork bomb", regexp.MustCompile(`:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`), ":"},
	{"curl|sh", regexp.MustCompile(`\bcurl\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b`), "curl"},
	{"wget|sh", regexp.MustCompile(`\bwget\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b`), "wget"},
}

// MatchDestructive returns the name of the first destructive pattern that
// command matches, or "".
func MatchDestructive(command string) string {
	for _, p := range DestructiveShell {
		if strings.Contains(command, p.Hint) && p.Re.MatchString(command) {
			return p.Name
		}
	}
	return ""
}

// Baseline is a fixed handler with no policy engine and no audit log, for
// measuring the protocol layer (`ahp serve --protocol-only`, the transport
// benchmarks) and for embedding where a full harness is too much: it
// blocks pre_action events whose arguments.command is a destructive shell
// command and allows everything else; typed events get the
// server.BaseHandler defaults; notifications are logged at debug level.
// The harness itself decides with the policy engine, whose
// destructive_shell pack covers these commands and more.
type Baseline struct {
	server.BaseHandler
	Log *slog.Logger
}

// HandleEvent blocks destructive shell commands.
func (b *Baseline) HandleEvent(_ context.Context, ev *protocol.Event) (protocol.Decision, error) {
	if ev.EventType != protocol.EventPreAction {
		return protocol.Allow(), nil
	}
	if cmd := commandOf(ev.Payload); cmd != "" {
		if name := MatchDestructive(cmd); name != "" {
			return protocol.Block("destructive shell command blocked: " + name), nil
		}
	}
	return protocol.Allow(), nil
}

// HandleNotification logs the event at debug level.
func (b *Baseline) HandleNotification(_ context.Context, ev *protocol.Event) {
	if b.Log != nil {
		b.Log.Debug("event", "event_type", string(ev.EventType), "session_id", ev.SessionID, "agent_id", ev.AgentID)
	}
}

// named reports whether member name k is name, also in other letter case
// (as Go's encoding/json, and so the policy, read it).
func named(k []byte, name string) bool {
	if string(k) == name {
		return true
	}
	_, ok := jsonscan.CaseVariant(k, name)
	return ok
}

// commandOf returns payload.arguments.command when it is a string (or an
// argv array, joined with spaces).
func commandOf(payload json.RawMessage) string {
	var args, cmd []byte
	_ = jsonscan.Object(payload, func(k, v []byte) error {
		if named(k, "arguments") {
			args = v
		}
		return nil
	})
	if args == nil {
		return ""
	}
	_ = jsonscan.ObjectValid(args, func(k, v []byte) error {
		if named(k, "command") {
			cmd = v
		}
		return nil
	})
	if s, ok := jsonscan.String(cmd); ok {
		return s
	}
	// Some agents send the command as an argv array.
	var argv []string
	if jsonscan.Kind(cmd) == '[' && json.Unmarshal(cmd, &argv) == nil {
		return strings.Join(argv, " ")
	}
	return ""
}
