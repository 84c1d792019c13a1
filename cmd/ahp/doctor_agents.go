//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/ahp-go/ahp/adapters/hooks"
	"github.com/ahp-go/ahp/internal/textcut"
)

// doctorTestCommand is the synthetic action ahp doctor pipes through each
// installed hook: the destructive_shell pack blocks it. It is never run.
const doctorTestCommand = "rm -rf / --no-preserve-root # ahp doctor: a test action, never run"

// agentPaths are where ahp doctor looks for the agents' settings.
type agentPaths struct {
	project   string // the project's root
	home      string // the agent user's home directory
	codexHome string // Codex's home ($CODEX_HOME, else home/.codex)
	system    string // the root of the system-wide files ("/"; tests use another)
	codexBin  string // a Codex CLI to ask for its own verdict on trust ("": none)
}

// agentHookFile is one settings file that may hold an agent's hooks.
type agentHookFile struct {
	path    string
	layer   string // project, user, managed
	managed bool
}

func (p agentPaths) files(t hooks.Tool) []agentHookFile {
	sys := func(rel string) string { return filepath.Join(p.system, rel) }
	switch t {
	case hooks.ClaudeCode:
		return []agentHookFile{
			{path: filepath.Join(p.project, ".claude", "settings.json"), layer: "project"},
			{path: filepath.Join(p.project, ".claude", "settings.local.json"), layer: "project (local)"},
			{path: filepath.Join(p.home, ".claude", "settings.json"), layer: "user"},
			{path: sys("etc/claude-code/managed-settings.json"), layer: "managed", managed: true},
		}
	case hooks.Codex:
		return []agentHookFile{
			{path: filepath.Join(p.project, ".codex", "hooks.json"), layer: "project"},
			{path: filepath.Join(p.codexHome, "hooks.json"), layer: "user"},
			{path: sys(strings.TrimPrefix(hooks.CodexManagedHooksFile, "/")), layer: "managed", managed: true},
		}
	case hooks.Gemini:
		return []agentHookFile{
			{path: filepath.Join(p.project, ".gemini", "settings.json"), layer: "project"},
			{path: filepath.Join(p.home, ".gemini", "settings.json"), layer: "user"},
			{path: sys("etc/gemini-cli/settings.json"), layer: "system", managed: true},
		}
	}
	return nil
}

// shellToolName is the name each tool gives its shell tool, which the
// test action uses and hook matchers are checked against.
var shellToolName = map[hooks.Tool]string{hooks.ClaudeCode: "Bash", hooks.Codex: "Bash", hooks.Gemini: "run_shell_command"}

// testInput is the hook input each tool sends before a shell command, in
// its own shape (the fields the real tools send, real-agents.md).
func testInput(t hooks.Tool, cwd string) []byte {
	session := fmt.Sprintf("ahp-doctor-%d", os.Getpid())
	var v map[string]any
	switch t {
	case hooks.ClaudeCode:
		v = map[string]any{"session_id": session, "transcript_path": "", "cwd": cwd, "permission_mode": "default",
			"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "ahp-doctor",
			"tool_input": map[string]any{"command": doctorTestCommand, "description": "ahp doctor test action"}}
	case hooks.Codex:
		v = map[string]any{"session_id": session, "transcript_path": nil, "cwd": cwd, "hook_event_name": "PreToolUse",
			"model": "ahp-doctor", "permission_mode": "default", "turn_id": "ahp-doctor", "tool_name": "Bash",
			"tool_use_id": "ahp-doctor", "tool_input": map[string]any{"command": doctorTestCommand}}
	case hooks.Gemini:
		v = map[string]any{"session_id": session, "transcript_path": "", "cwd": cwd, "hook_event_name": "BeforeTool",
			"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "tool_name": "run_shell_command",
			"tool_input": map[string]any{"command": doctorTestCommand, "description": "ahp doctor test action"}}
	}
	b, _ := json.Marshal(v)
	return b
}

// configuredHook is one command hook at the tool's pre-tool event.
type configuredHook struct {
	file    agentHookFile
	command string
	timeout time.Duration // the tool's timeout for it; 0 when not set
	matcher string
	note    string // what else was checked, for the report
}

// preToolHooks reads the command hooks of the pre-tool event from a
// settings file of t.
func preToolHooks(t hooks.Tool, f agentHookFile, doc []byte) ([]configuredHook, error) {
	var settings struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string  `json:"type"`
				Command string  `json:"command"`
				Timeout float64 `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(doc, &settings); err != nil {
		return nil, err
	}
	event := "PreToolUse"
	unit := time.Second
	if t == hooks.Gemini {
		event, unit = "BeforeTool", time.Millisecond
	}
	var out []configuredHook
	for _, g := range settings.Hooks[event] {
		for _, h := range g.Hooks {
			if h.Type != "command" || strings.TrimSpace(h.Command) == "" {
				continue
			}
			out = append(out, configuredHook{file: f, command: h.Command, timeout: time.Duration(h.Timeout * float64(unit)), matcher: g.Matcher})
		}
	}
	return out, nil
}

// matchesShell reports whether a hook group's matcher lets the tool's
// shell tool through (no matcher, "*", the name, or a pattern matching it).
func matchesShell(t hooks.Tool, matcher string) bool {
	if matcher == "" || matcher == "*" || matcher == shellToolName[t] {
		return true
	}
	re, err := regexp.Compile("^(?:" + matcher + ")$")
	return err == nil && re.MatchString(shellToolName[t])
}

// hookVerdict is what piping the test action through one hook gave.
type hookVerdict struct {
	ok     bool
	detail string
}

// runTestAction pipes the test action through hook as the tool runs it
// (sh -c, input on stdin, in the project directory) and says whether the
// answer is a deny decided by a harness.
func runTestAction(t hooks.Tool, h configuredHook, p agentPaths, agent account, limit time.Duration) hookVerdict {
	timeout := limit
	if h.timeout > 0 && h.timeout < timeout {
		timeout = h.timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", h.command)
	cmd.Dir = p.project
	cmd.Stdin = bytes.NewReader(testInput(t, p.project))
	cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+p.project)
	if t == hooks.Gemini {
		cmd.Env = append(cmd.Env, "GEMINI_PROJECT_DIR="+p.project)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// As root checking another user's agents: run the hook as that user,
	// as the tool would.
	as := ""
	if os.Geteuid() == 0 && agent.uid != 0 {
		as = " as " + agent.name
		cred := &syscall.Credential{Uid: agent.uid, Gid: agent.gid}
		for g := range agent.gids {
			cred.Groups = append(cred.Groups, g)
		}
		cmd.SysProcAttr.Credential = cred
		cmd.Env = append(cmd.Env, "HOME="+p.home, "USER="+agent.name, "LOGNAME="+agent.name)
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	errText := strings.TrimSpace(cut(stderr.String(), 300))
	code := 0
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return hookVerdict{detail: fmt.Sprintf("no answer within %s (the tool gives up on a slow hook and runs the call; an escalation waiting for an approver also looks like this)", timeout)}
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		return hookVerdict{detail: "cannot run it" + as + " (in " + p.project + "): " + err.Error()}
	}
	switch code {
	case 0:
	case 126, 127:
		return hookVerdict{detail: fmt.Sprintf("the command does not exist or cannot be executed (exit %d: %s); the tool runs every call", code, errText)}
	case 2:
		if strings.Contains(errText, "failing closed") {
			return hookVerdict{detail: "it got no decision from a harness and fails closed (every tool call is blocked): " + errText}
		}
		return hookVerdict{detail: "it blocks with exit 2 without a harness's decision: " + errText}
	default:
		return hookVerdict{detail: fmt.Sprintf("exit %d, which the tool ignores (the call runs): %s", code, errText)}
	}
	var ans struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		Specific struct {
			Decision string `json:"permissionDecision"`
			Reason   string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &ans) != nil {
		return hookVerdict{detail: "its answer is not JSON (the tool runs the call): " + cut(stdout.String(), 200)}
	}
	switch {
	case t != hooks.Gemini && ans.Specific.Decision == "deny":
		return hookVerdict{ok: true, detail: "the harness denied the test action: " + ans.Specific.Reason}
	case ans.Decision == "block" || (t == hooks.Gemini && ans.Decision == "deny"):
		return hookVerdict{ok: true, detail: "the harness denied the test action: " + ans.Reason}
	}
	return hookVerdict{detail: fmt.Sprintf("it let the test action (%q) through: %s; check that the harness's destructive_shell pack is on, and that this command is the ahp hook", doctorTestCommand, strings.TrimSpace(cut(stdout.String(), 200)))}
}

// doctorAgents checks, for each coding agent with settings found, that
// at least one hook at its pre-tool event is one the tool really runs and
// that it brings the test action to a harness that denies it. It returns
// the number of agents found unsupervised.
func doctorAgents(r *doctorReport, p agentPaths, agent account, limit time.Duration) int {
	fmt.Fprintf(r.w, "\nagents (hooks at the pre-tool event; the test action %q goes through each):\n", doctorTestCommand)
	unsupervised := 0
	for _, t := range hooks.Tools {
		var found []string
		var hooksFound []configuredHook
		var problems []string
		var disabledBy []string
		for _, f := range p.files(t) {
			doc, err := os.ReadFile(f.path)
			if err != nil {
				continue
			}
			found = append(found, f.path)
			hs, err := preToolHooks(t, f, doc)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s is not valid JSON (the tool ignores it or fails): %v", f.path, err))
				continue
			}
			if t == hooks.ClaudeCode && claudeHooksDisabled(doc) {
				disabledBy = append(disabledBy, f.path)
			}
			if t == hooks.Codex && !f.managed {
				hs, problems = codexRunnable(f, doc, hs, p, problems)
				if p.codexBin != "" && len(hs) > 0 {
					hs, problems = codexConfirms(f, doc, hs, p, agent, limit, problems)
				}
			}
			hooksFound = append(hooksFound, hs...)
		}
		if len(found) == 0 {
			fmt.Fprintf(r.w, "[ok]   %s: no settings found (%s): not installed, not checked\n", t, strings.Join(filesOf(p.files(t)), ", "))
			continue
		}
		if len(disabledBy) > 0 {
			problems = append(problems, fmt.Sprintf("disableAllHooks is true in %s: Claude Code runs no hooks", strings.Join(disabledBy, ", ")))
			hooksFound = nil
		}
		var supervisedBy []string
		for _, h := range hooksFound {
			if !matchesShell(t, h.matcher) {
				problems = append(problems, fmt.Sprintf("%s: the hook %q has matcher %q, which does not cover %s", h.file.path, h.command, h.matcher, shellToolName[t]))
				continue
			}
			v := runTestAction(t, h, p, agent, limit)
			if !v.ok {
				problems = append(problems, fmt.Sprintf("%s: the hook %q: %s", h.file.path, h.command, v.detail))
				continue
			}
			detail := v.detail
			if h.note != "" {
				detail = h.note + "; " + detail
			}
			supervisedBy = append(supervisedBy, fmt.Sprintf("%s (%s): %s", h.file.path, h.file.layer, detail))
			if !h.file.managed {
				editable := []string{}
				if agent.can(h.file.path, 2) {
					editable = append(editable, h.file.path)
				}
				if cfg := filepath.Join(p.codexHome, "config.toml"); t == hooks.Codex && agent.can(cfg, 2) {
					editable = append(editable, cfg+" (its trust)")
				}
				if len(editable) > 0 {
					r.warn(fmt.Sprintf("install the hooks in the %s managed settings (%s), writable by root only, and run the agent as its own user", t, managedFile(p, t)),
						"%s: the agent's user %s can edit %s, and so switch the hook off", t, agent.name, strings.Join(editable, " and "))
				}
			}
		}
		if len(supervisedBy) > 0 {
			r.ok("%s: supervised: %s", t, strings.Join(supervisedBy, "; "))
			for _, pr := range problems {
				fmt.Fprintf(r.w, "       (also: %s)\n", pr)
			}
			continue
		}
		unsupervised++
		if len(hooksFound) == 0 && len(problems) == 0 {
			problems = append(problems, "no command hook at the pre-tool event in "+strings.Join(found, ", "))
		}
		r.fail(installAdvice(t), "%s: NOT supervised (settings: %s): %s", t, strings.Join(found, ", "), strings.Join(problems, "; "))
	}
	return unsupervised
}

// claudeHooksDisabled reports whether a Claude Code settings file turns
// every hook off (disableAllHooks). It is read wherever it is set: a false
// alarm is better than a false assurance.
func claudeHooksDisabled(doc []byte) bool {
	var s struct {
		DisableAllHooks bool `json:"disableAllHooks"`
	}
	return json.Unmarshal(doc, &s) == nil && s.DisableAllHooks
}

// codexRunnable keeps the Codex hooks of a user or project file that
// Codex runs: trusted in the user's config.toml (and, for a project file,
// in a project Codex trusts).
func codexRunnable(f agentHookFile, doc []byte, hs []configuredHook, p agentPaths, problems []string) ([]configuredHook, []string) {
	configPath := filepath.Join(p.codexHome, "config.toml")
	config, err := hooks.ReadSettings(configPath)
	if err != nil {
		return nil, append(problems, err.Error())
	}
	states, err := hooks.CodexHookStates(config)
	if err != nil {
		return nil, append(problems, fmt.Sprintf("%s: %v (Codex cannot read it)", configPath, err))
	}
	if f.layer == "project" && !codexProjectTrusted(config, p.project) {
		return nil, append(problems, fmt.Sprintf("%s: Codex loads project hooks only in a project it trusts ([projects.%q] trust_level = \"trusted\" in %s)", f.path, p.project, configPath))
	}
	located, err := hooks.CodexCommandHooks(f.path, doc)
	if err != nil {
		return nil, append(problems, err.Error())
	}
	trusted := map[string]bool{}
	for _, l := range located {
		if l.Event != "PreToolUse" {
			continue
		}
		if ok, why := hooks.CodexTrusted(states, l.CodexTrust); ok {
			trusted[l.Hook.Command] = true
		} else {
			problems = append(problems, fmt.Sprintf("%s: Codex skips the hook %q without a word: %s in %s", f.path, l.Hook.Command, why, configPath))
		}
	}
	var keep []configuredHook
	for _, h := range hs {
		if trusted[h.command] {
			keep = append(keep, h)
		}
	}
	return keep, problems
}

// codexConfirms keeps the hooks that the Codex CLI itself reports as
// trusted and enabled. When Codex cannot be asked, the hooks are kept on
// ahp's own computation and the report says so.
func codexConfirms(f agentHookFile, doc []byte, hs []configuredHook, p agentPaths, agent account, limit time.Duration, problems []string) ([]configuredHook, []string) {
	st, err := askCodex(p.codexBin, p, agent, limit)
	if err != nil {
		return hs, append(problems, "could not ask Codex itself, so the trust is ahp's computation: "+err.Error())
	}
	located, _ := hooks.CodexCommandHooks(f.path, doc)
	ok := map[string]bool{}
	for _, l := range located {
		if l.Event != "PreToolUse" {
			continue
		}
		s, found := st[l.Key]
		switch {
		case !found:
			problems = append(problems, fmt.Sprintf("%s: Codex (%s) does not load the hook %q at all", f.path, p.codexBin, l.Hook.Command))
		case !s.Enabled || (s.TrustStatus != "trusted" && s.TrustStatus != "managed"):
			problems = append(problems, fmt.Sprintf("%s: Codex (%s) itself reports the hook %q as %s (enabled %v, its hash %s): it skips it", f.path, p.codexBin, l.Hook.Command, s.TrustStatus, s.Enabled, s.CurrentHash))
		default:
			ok[l.Hook.Command] = true
		}
	}
	var keep []configuredHook
	for _, h := range hs {
		if ok[h.command] {
			h.note = "Codex itself (" + p.codexBin + ") reports it trusted"
			keep = append(keep, h)
		}
	}
	return keep, problems
}

// codexProjectTrusted reports whether Codex's config trusts the project
// at dir.
func codexProjectTrusted(config []byte, dir string) bool {
	var doc struct {
		Projects map[string]struct {
			TrustLevel string `toml:"trust_level"`
		} `toml:"projects"`
	}
	if err := toml.Unmarshal(config, &doc); err != nil {
		return false
	}
	return doc.Projects[dir].TrustLevel == "trusted"
}

func filesOf(fs []agentHookFile) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.path
	}
	return out
}

func managedFile(p agentPaths, t hooks.Tool) string {
	for _, f := range p.files(t) {
		if f.managed {
			return f.path
		}
	}
	return ""
}

// installAdvice says how to install hooks the tool really runs.
func installAdvice(t hooks.Tool) string {
	switch t {
	case hooks.Codex:
		return "start the harness, then: ahp hook install codex --user --trust --write --connect ADDRESS (or, as root, --managed instead of --user --trust), and run ahp doctor again"
	case hooks.Gemini:
		return "start the harness, then: ahp hook install gemini --write --connect ADDRESS (--user for every project), and run ahp doctor again"
	}
	return "start the harness, then: ahp hook install claude-code --write --connect ADDRESS (--user for every project), and run ahp doctor again"
}

// cut keeps the first n bytes of s (at a rune boundary), for messages.
func cut(s string, n int) string {
	head, left := textcut.Head(s, n)
	if left > 0 {
		return head + "..."
	}
	return head
}

// codexHookStatus is what Codex itself reports about one hook.
type codexHookStatus struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	SourcePath  string `json:"sourcePath"`
	Enabled     bool   `json:"enabled"`
	TrustStatus string `json:"trustStatus"`
	CurrentHash string `json:"currentHash"`
}

// askCodex asks the Codex CLI at bin which hooks it loads for the project
// and whether it trusts them: its app-server's hooks/list, run with the
// agent's Codex home (and as the agent's user when checking another user
// as root). It is the tool's own verdict, so a future Codex that computes
// trust differently is not taken for trusted.
func askCodex(bin string, p agentPaths, agent account, limit time.Duration) (map[string]codexHookStatus, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Dir = p.project
	cmd.Env = append(os.Environ(), "CODEX_HOME="+p.codexHome, "HOME="+p.home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Geteuid() == 0 && agent.uid != 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: agent.uid, Gid: agent.gid}
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		_ = in.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	cwds, _ := json.Marshal([]string{p.project})
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"ahp-doctor","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"hooks/list","params":{"cwds":` + string(cwds) + `}}`,
	} {
		if _, err := io.WriteString(in, m+"\n"); err != nil {
			return nil, err
		}
	}
	dec := json.NewDecoder(out)
	for {
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := dec.Decode(&msg); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("no answer from %s app-server within %s", bin, limit)
			}
			return nil, fmt.Errorf("%s app-server: %v", bin, err)
		}
		if msg.ID == nil || *msg.ID != 2 {
			continue
		}
		if len(msg.Error) > 0 {
			return nil, fmt.Errorf("%s app-server hooks/list: %s", bin, cut(string(msg.Error), 200))
		}
		var res struct {
			Data []struct {
				Hooks []codexHookStatus `json:"hooks"`
			} `json:"data"`
		}
		if err := json.Unmarshal(msg.Result, &res); err != nil {
			return nil, err
		}
		st := map[string]codexHookStatus{}
		for _, d := range res.Data {
			for _, h := range d.Hooks {
				st[h.Key] = h
			}
		}
		return st, nil
	}
}
