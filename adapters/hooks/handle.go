package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ahp-go/ahp/internal/textcut"
	"github.com/ahp-go/ahp/protocol"
)

// Result is the answer to one hook call.
type Result struct {
	// Stdout is the JSON answer in the tool's format. When Exit is 2 it is
	// the same deny as JSON, for transports without exit codes (HTTP hooks).
	Stdout []byte
	// Exit is the process exit code: 0, or 2 to block with Reason.
	Exit int
	// Reason explains a deny; with Exit 0 and an allow it may hold a
	// warning (a notification that could not be sent).
	Reason string
	// Outcome summarizes the answer: none, allow, modify, deny, ask,
	// approved.
	Outcome string
}

// Options tune Handle.
type Options struct {
	// Now returns the current time (time.Now when nil).
	Now func() time.Time
	// Margin is kept free before the context's deadline when waiting for a
	// human, so that the answer leaves before the tool's own timeout kills
	// the hook (1 s when 0).
	Margin time.Duration
	// Home and User are the agent user's home directory and name. When
	// set, pre_action payloads carry them as "home" and "user", so that
	// the harness reads "~" and $HOME as the agent's shell does (the hook
	// runs as the agent's user; AgentEnv reads them from its environment).
	Home, User string
}

// AgentEnv returns the home directory and user name of the process, for
// Options.Home and Options.User: $HOME (or the system's idea of it) and
// $USER (or $LOGNAME); an empty string when unknown.
func AgentEnv() (home, user string) {
	home, _ = os.UserHomeDir()
	if !filepath.IsAbs(home) {
		home = ""
	}
	user = os.Getenv("USER")
	if user == "" {
		user = os.Getenv("LOGNAME")
	}
	return home, user
}

// askModes are the Claude Code permission modes in which "ask" shows the
// user a prompt (and, in a headless run, refuses the call). In the other
// modes (auto, bypassPermissions, dontAsk, and any new one) "ask" has been
// reported to let the call run, so an escalation waits in the harness's
// approval queue instead.
var askModes = map[string]bool{"default": true, "acceptEdits": true, "plan": true}

// Handle answers one hook call: raw is the tool's hook input. It never
// returns an allow that the harness (or a human) did not give: every
// failure is a deny.
func Handle(ctx context.Context, t Tool, raw []byte, h Harness, opts Options) Result {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	in, err := ParseInput(raw)
	if err != nil {
		return failClosed(t, KindPreTool, preEventName(t), "ahp: cannot read the hook input, failing closed: "+err.Error())
	}
	kind := KindOf(t, in.HookEventName)
	in.Home, in.User = opts.Home, opts.User
	ev, err := Event(t, in, now())
	if err != nil {
		return failClosed(t, kind, in.HookEventName, "ahp: cannot build the event, failing closed: "+err.Error())
	}
	if ev == nil {
		return Result{Stdout: noOpinion, Outcome: "none"}
	}
	if ev.EventType.Blocking() {
		hintEscalation(ctx, t, kind, in, ev, opts, now())
	}
	if !ev.EventType.Blocking() {
		if err := h.Notify(ctx, ev); err != nil {
			// The action is already done (or this is the session's
			// bookkeeping): nothing to block, but say what was lost.
			return Result{Stdout: noOpinion, Outcome: "none", Reason: "ahp: " + string(ev.EventType) + " not recorded: " + err.Error()}
		}
		return Result{Stdout: noOpinion, Outcome: "none"}
	}
	d, err := h.Decide(ctx, ev)
	if err != nil {
		return failClosed(t, kind, in.HookEventName, "ahp: no decision from the harness, failing closed: "+err.Error())
	}
	return answer(ctx, t, kind, in, ev, d, h, opts)
}

func answer(ctx context.Context, t Tool, kind Kind, in *Input, ev *protocol.Event, d protocol.Decision, h Harness, opts Options) Result {
	name := in.HookEventName
	deny := func(reason string) Result {
		return Result{Stdout: denyAnswer(t, kind, name, reason), Reason: reason, Outcome: "deny"}
	}
	switch d.Kind {
	case protocol.DecisionAllow:
		if len(d.ModifiedPayload) == 0 || bytes.Equal(bytes.TrimSpace(d.ModifiedPayload), []byte("null")) {
			if held := heldApproval(d); held.Status == "approved" {
				// A human approved the request the harness held: say
				// allow, so that no permission rule of the tool's own
				// (dontAsk, auto) refuses it after all.
				r := "ahp: approved by " + orDefault(held.By, "an approver") + ": " + orDefault(held.Reason, "no reason given")
				return Result{Stdout: approvedAnswer(t, kind, name, r), Reason: r, Outcome: "approved"}
			}
			// No objection: the tool's own permission rules still apply.
			return Result{Stdout: noOpinion, Outcome: "allow"}
		}
		return modify(t, kind, in, d.ModifiedPayload)
	case protocol.DecisionModify:
		return modify(t, kind, in, d.ModifiedPayload)
	case protocol.DecisionBlock:
		if held := heldApproval(d); held.Status == "expired" {
			return deny("ahp: approval needed (" + held.Rule + ", approval " + held.ID + "): no approver answered in time; ask one to answer it with `ahp approvals` and retry")
		}
		return deny("ahp: blocked by the harness: " + orDefault(d.Reason, "no reason given"))
	case protocol.DecisionDefer:
		return deny(fmt.Sprintf("ahp: deferred by the harness: %s; retry in %d ms", orDefault(d.Reason, "not now"), d.RetryAfterMs))
	case protocol.DecisionEscalate:
		return escalate(ctx, t, kind, in, ev, d, h, opts)
	}
	return failClosed(t, kind, name, fmt.Sprintf("ahp: the harness answered %q, which cannot be mapped; failing closed", d.Kind))
}

// modify answers a modify decision: the modified payload's arguments
// replace the tool input. What a hook cannot express is denied.
func modify(t Tool, kind Kind, in *Input, payload json.RawMessage) Result {
	name := in.HookEventName
	fail := func(why string) Result {
		return failClosed(t, kind, name, "ahp: the harness modified the "+why+"; failing closed")
	}
	if kind != KindPreTool {
		return fail("prompt, which " + string(t) + " hooks cannot do")
	}
	var p struct {
		ToolName  *string         `json:"tool_name"`
		Arguments json.RawMessage `json:"arguments"`
		ToolInput json.RawMessage `json:"tool_input"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return fail("action into something that is not an object")
	}
	if p.ToolName != nil && *p.ToolName != in.ToolName {
		return fail("tool name (" + in.ToolName + " to " + *p.ToolName + "), which hooks cannot do")
	}
	args := p.Arguments
	if len(args) == 0 {
		args = p.ToolInput
	}
	var obj map[string]json.RawMessage
	if len(args) == 0 || json.Unmarshal(args, &obj) != nil || obj == nil {
		return fail("action without an arguments object")
	}
	if t == Gemini {
		// Gemini CLI merges tool_input into the model's arguments: a
		// removed argument would survive.
		var orig map[string]json.RawMessage
		_ = json.Unmarshal(in.ToolInput, &orig)
		for k := range orig {
			if _, ok := obj[k]; !ok {
				return fail("arguments by removing " + k + ", which Gemini CLI would keep (it merges arguments)")
			}
		}
	}
	compact := new(bytes.Buffer)
	_ = json.Compact(compact, args)
	return Result{Stdout: modifyAnswer(t, name, compact.Bytes()), Outcome: "modify"}
}

// escalate asks a human: through the tool's own prompt where it really
// prompts, otherwise through the harness's approval queue until the
// deadline. No answer in time is a deny.
func escalate(ctx context.Context, t Tool, kind Kind, in *Input, ev *protocol.Event, d protocol.Decision, h Harness, opts Options) Result {
	name := in.HookEventName
	reason := orDefault(d.Reason, "the harness asks for a human decision")
	if t == ClaudeCode && kind == KindPreTool && askModes[in.PermissionMode] {
		r := "ahp: needs your approval: " + reason
		return Result{Stdout: askAnswer(name, r), Reason: r, Outcome: "ask"}
	}
	wctx := ctx
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(ctx, dl.Add(-margin(opts)))
		defer cancel()
	}
	what := "the prompt"
	if kind == KindPreTool {
		what = in.ToolName + " " + shown(readable(ev.Payload), maxShownPayload)
	}
	payload, _ := json.Marshal(protocol.ConfirmationPayload{
		SessionID:        ev.SessionID,
		ConfirmationType: protocol.ConfirmationType{Name: "safety_confirm"},
		Message:          fmt.Sprintf("%s wants to run %s: %s", t, what, reason),
		Options:          []string{"approve", "reject"},
	})
	cev := *ev
	cev.EventType = protocol.EventConfirmation
	cev.Payload = payload
	cd, err := h.Confirm(wctx, &cev)
	deny := func(r string) Result {
		return Result{Stdout: denyAnswer(t, kind, name, r), Reason: r, Outcome: "deny"}
	}
	switch {
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timed out")):
		return deny("ahp: approval needed (" + reason + "): no approver answered in time; ask one to answer it with `ahp approvals` and retry")
	case err != nil:
		return deny("ahp: approval needed (" + reason + ") but the approval queue could not be reached: " + err.Error())
	case cd.Decision == "approve":
		r := "ahp: approved by a human: " + reason
		return Result{Stdout: approvedAnswer(t, kind, name, r), Reason: r, Outcome: "approved"}
	case cd.Decision == "reject":
		return deny("ahp: rejected by an approver: " + orDefault(cd.Reason, "no reason given"))
	}
	return deny("ahp: approval needed (" + reason + "): no approver answered in time; ask one to answer it with `ahp approvals` and retry")
}

// failClosed denies with exit code 2 and the reason on stderr.
func failClosed(t Tool, kind Kind, event, reason string) Result {
	return Result{Stdout: denyAnswer(t, kind, event, reason), Exit: 2, Reason: reason, Outcome: "deny"}
}

func preEventName(t Tool) string {
	if t == Gemini {
		return "BeforeTool"
	}
	return "PreToolUse"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// readable returns a JSON payload for a human: its escapes of <, > and &
// (\u0026, as encoding/json writes "&&") written as the characters.
// Numbers stay as written; member order may change.
func readable(raw json.RawMessage) string {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return string(raw)
	}
	b, err := marshalPlain(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// maxShownPayload bounds the part of an action an approval prompt shows;
// an approver must see the whole of what runs in all but outlandish cases.
const maxShownPayload = 64 << 10

// shown returns s for an approval prompt: whole when it fits in n bytes,
// else its first n bytes (cut at a rune boundary) and how much is left out.
func shown(s string, n int) string {
	head, left := textcut.Head(s, n)
	if left == 0 {
		return head
	}
	return head + fmt.Sprintf("… [%d more bytes not shown; the whole action is in the audit record]", left)
}
