package main

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/ahp-go/ahp/adapters/hooks"
)

// Action is one tool call sent to the harness: a case in one of its
// forms.
type Action struct {
	Case    *Case
	Via     string          // how it is sent: "bash", "python3-heredoc", "execute_code", "claude-code Write", ...
	Payload json.RawMessage // the pre_action payload
}

// expand turns a case into the tool calls an agent would make for it:
//
//   - sh: tool bash, arguments.command;
//   - py: the code run by python3 through bash as a quoted here-document,
//     and the same code given to a code tool (execute_code, language
//     python, code);
//   - write, edit, read: Claude Code's Write / Edit / Read and Gemini
//     CLI's write_file / replace / read_file, as `ahp hook` builds them
//     from each tool's hook input, with the path made absolute against
//     the case's cwd (both tools send absolute paths);
//   - tool: the agent's tool as given (a string argument starting with
//     ~/ is taken from home).
//
// home replaces a leading ~ in a file tool's path (those tools do not
// expand it; the model writes the home directory out).
func expand(c *Case, home string) ([]Action, error) {
	generic := func(via, tool string, args any) (Action, error) {
		a, err := json.Marshal(args)
		if err != nil {
			return Action{}, err
		}
		p := map[string]any{"action_type": "tool_call", "tool_name": tool, "arguments": json.RawMessage(a)}
		if c.Cwd != "" {
			p["cwd"] = c.Cwd
		}
		b, err := json.Marshal(p)
		return Action{Case: c, Via: via, Payload: b}, err
	}
	hook := func(t hooks.Tool, tool string, args any) (Action, error) {
		a, err := json.Marshal(args)
		if err != nil {
			return Action{}, err
		}
		event := "PreToolUse"
		if t == hooks.Gemini {
			event = "BeforeTool"
		}
		// The agent's home goes with the event, as ahp hook sends it.
		ev, err := hooks.Event(t, &hooks.Input{SessionID: "guard", Cwd: c.Cwd, Home: home, HookEventName: event, ToolName: tool, ToolInput: a}, time.Now())
		if err != nil {
			return Action{}, err
		}
		if ev == nil {
			return Action{}, fmt.Errorf("%s: hook event %s of %s is not handled", c.Where(), event, t)
		}
		return Action{Case: c, Via: string(t) + " " + tool, Payload: ev.Payload}, nil
	}
	var (
		out []Action
		err error
	)
	add := func(a Action, e error) {
		if e != nil && err == nil {
			err = e
		}
		out = append(out, a)
	}
	file := absPath(c.Path, c.Cwd, home)
	switch c.Form {
	case FormShell:
		add(generic("bash", "bash", map[string]string{"command": c.Text}))
	case FormPy:
		add(generic("python3-heredoc", "bash", map[string]string{"command": pythonHeredoc(c.Text)}))
		add(generic("execute_code", "execute_code", map[string]string{"language": "python", "code": c.Text}))
	case FormWrite:
		add(hook(hooks.ClaudeCode, "Write", map[string]string{"file_path": file, "content": c.Text}))
		add(hook(hooks.Gemini, "write_file", map[string]string{"file_path": file, "content": c.Text}))
	case FormEdit:
		add(hook(hooks.ClaudeCode, "Edit", map[string]string{"file_path": file, "old_string": c.Old, "new_string": c.Text}))
		add(hook(hooks.Gemini, "replace", map[string]string{"file_path": file, "old_string": c.Old, "new_string": c.Text}))
	case FormRead:
		add(hook(hooks.ClaudeCode, "Read", map[string]string{"file_path": file}))
		add(hook(hooks.Gemini, "read_file", map[string]string{"file_path": file}))
	case FormTool:
		t, perr := hooks.ParseTool(c.Agent)
		if perr != nil {
			return nil, fmt.Errorf("%s: %w", c.Where(), perr)
		}
		// A string of the arguments that starts with ~/ names the home,
		// as the model would write it out.
		args := strings.ReplaceAll(c.Text, `"~/`, `"`+strings.TrimSuffix(home, "/")+`/`)
		add(hook(t, c.Tool, json.RawMessage(args)))
	default:
		return nil, fmt.Errorf("%s: unknown form %q", c.Where(), c.Form)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Where(), err)
	}
	return out, nil
}

// pythonHeredoc is the shell command that runs code with python3 from a
// quoted here-document, with a tag the code does not contain as a line.
func pythonHeredoc(code string) string {
	tag := "EOF"
	for i := 0; strings.Contains("\n"+code+"\n", "\n"+tag+"\n"); i++ {
		tag = fmt.Sprintf("PY%d", i)
	}
	return "python3 <<'" + tag + "'\n" + code + "\n" + tag
}

// absPath makes a file tool's path absolute: ~ is the home directory, a
// relative path is taken from cwd.
func absPath(p, cwd, home string) string {
	switch {
	case p == "":
		return ""
	case p == "~":
		return home
	case strings.HasPrefix(p, "~/"):
		return path.Join(home, p[2:])
	case strings.HasPrefix(p, "/") || cwd == "":
		return p
	}
	return path.Join(cwd, p)
}

// expandHome replaces a leading ~ of a cwd with home.
func expandHome(p, home string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		return absPath(p, "", home)
	}
	return p
}
