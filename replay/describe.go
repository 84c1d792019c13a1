package replay

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/ahp-go/ahp/internal/jsonscan"
	"github.com/ahp-go/ahp/protocol"
)

// maxDetailBytes bounds the tool, command and prompt kept in a Change.
const maxDetailBytes = 1024

// describe fills in the tool, command and prompt of c from ev (whose
// payload decoded, so it is valid JSON). The command is the "command",
// "cmd", "script" or "commands" argument, joined when it is a list.
func describe(ev *protocol.Event, c *Change) {
	var args []byte
	var prompts [3]string // prompt, message, query
	_ = jsonscan.ObjectValid(ev.Payload, func(k, v []byte) error {
		switch string(k) {
		case "tool_name":
			c.Tool, _ = jsonscan.String(v)
		case "arguments":
			args = v
		case "prompt":
			prompts[0], _ = jsonscan.String(v)
		case "message":
			prompts[1], _ = jsonscan.String(v)
		case "query":
			prompts[2], _ = jsonscan.String(v)
		}
		return nil
	})
	c.Tool = shorten(c.Tool, maxDetailBytes)
	for _, p := range prompts {
		if p != "" {
			c.Prompt = shorten(p, maxDetailBytes)
			break
		}
	}
	if jsonscan.Kind(args) != '{' {
		return
	}
	var cmds [4]string // command, cmd, script, commands
	_ = jsonscan.ObjectValid(args, func(k, v []byte) error {
		switch string(k) {
		case "command":
			cmds[0] = textOf(v, " ")
		case "cmd":
			cmds[1] = textOf(v, " ")
		case "script":
			cmds[2] = textOf(v, " ")
		case "commands":
			cmds[3] = textOf(v, "\n")
		}
		return nil
	})
	for _, s := range cmds {
		if s != "" {
			c.Command = shorten(s, maxDetailBytes)
			return
		}
	}
}

// textOf returns a JSON string, or a list of strings joined by sep.
func textOf(v []byte, sep string) string {
	if s, ok := jsonscan.String(v); ok {
		return s
	}
	var list []string
	if jsonscan.Kind(v) == '[' && json.Unmarshal(v, &list) == nil {
		return strings.Join(list, sep)
	}
	return ""
}

// shorten cuts s to at most n bytes on a rune boundary, marking the cut
// with "…".
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
