package harness

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ahp-go/ahp/internal/jsonscan"
	"github.com/ahp-go/ahp/protocol"
)

// check answers a check query: what the policy would decide now.
func (c *queryCall) check() answer {
	var req protocol.CheckQuery
	if err := decodePayload(c.q.Payload, &req); err != nil {
		return answer{reason: "check: " + err.Error() + ` (expected {"event_type": "pre_action", "payload": {...}})`}
	}
	if req.EventType == "" {
		req.EventType = protocol.EventPreAction
	}
	if req.EventType != protocol.EventPreAction && req.EventType != protocol.EventPrePrompt {
		return answer{reason: fmt.Sprintf("check answers pre_action and pre_prompt events, not %q", clip(string(req.EventType), 64)),
			alternatives: []string{string(protocol.EventPreAction), string(protocol.EventPrePrompt)}}
	}
	if len(req.Payload) == 0 {
		req.Payload = json.RawMessage("{}")
	}
	ev := &protocol.Event{
		EventType: req.EventType, SessionID: c.q.SessionID, AgentID: c.q.AgentID,
		Timestamp: c.start.UTC().Format(time.RFC3339Nano), Depth: req.Depth, Payload: req.Payload,
		Context: req.Context, Metadata: req.Metadata,
	}
	a := c.whatIf(ev)
	return answer{value: a, reason: "what-if: nothing was decided, recorded as a decision, counted or sent for approval"}
}

// whatIf evaluates ev as HandleEvent would, without side effects. The
// decision is echoed through the redaction step, as everything the
// harness keeps or repeats of an event.
func (c *queryCall) whatIf(ev *protocol.Event) *protocol.CheckAnswer {
	h := c.h
	res := h.genericResult(ev, c.peer, true)
	sv := h.seal(ev, res.PayloadSecrets)
	c.se = &sv
	d := res.Decision
	if len(d.ModifiedPayload) > 0 {
		raw, _ := d.AppendJSON(nil)
		var rd protocol.Decision
		if json.Unmarshal(sv.decision(raw), &rd) == nil {
			d = rd
		}
	}
	a := &protocol.CheckAnswer{
		EventType: ev.EventType, Decision: d, RuleID: res.RuleID, Pack: res.Pack,
		PolicyVersion: h.opts.Engine.Version(),
	}
	if res.Decision.Kind == protocol.DecisionEscalate && res.Approval != nil {
		a.Approval = &protocol.ApprovalSpecInfo{TimeoutMs: res.Approval.Timeout.Milliseconds(),
			Fallback: res.Approval.Fallback, ApproverRole: res.Approval.ApproverRole}
		if a.Approval.TimeoutMs <= 0 {
			a.Approval.TimeoutMs = h.opts.ApprovalTimeout.Milliseconds()
		}
		if a.Approval.Fallback == "" {
			a.Approval.Fallback = h.opts.ApprovalFallback
		}
	}
	c.summary = map[string]any{"decision": string(res.Decision.Kind), "rule_id": res.RuleID}
	return a
}

// questionOf returns the "question" string of a free-text query payload.
func questionOf(raw json.RawMessage) (string, bool) {
	var q string
	found := false
	_ = jsonscan.Object(raw, func(k, v []byte) error {
		if string(k) == "question" {
			q, found = jsonscan.String(v)
		}
		return nil
	})
	return q, found
}

// freeText answers a free-text question with a check when it names a
// command (in backquotes, or a known command word and what follows it) or
// a tool ("the X tool", "tool X"), and says so.
func (c *queryCall) freeText(question string) answer {
	if len(question) > maxQuestionBytes {
		return answer{reason: fmt.Sprintf("question too long (%d bytes, limit %d)", len(question), maxQuestionBytes)}
	}
	var payload any
	var read string
	if cmd := commandIn(question); cmd != "" {
		payload = map[string]any{"tool_name": "bash", "arguments": map[string]string{"command": cmd}}
		read = fmt.Sprintf("a bash command %q", cmd)
	} else if tool := toolIn(question); tool != "" {
		payload = map[string]any{"tool_name": tool, "arguments": map[string]any{}}
		read = fmt.Sprintf("a call of tool %q without arguments", tool)
	} else {
		c.summary = map[string]any{"answered": false}
		return answer{reason: "free-text question: no command (write it in `backquotes`) or tool (\"the NAME tool\") found in it; ask with query_type check for an exact answer",
			alternatives: []string{protocol.QueryCheck}}
	}
	p, _ := json.Marshal(payload)
	ev := &protocol.Event{EventType: protocol.EventPreAction, SessionID: c.q.SessionID, AgentID: c.q.AgentID,
		Timestamp: c.start.UTC().Format(time.RFC3339Nano), Payload: p}
	a := c.whatIf(ev)
	a.InterpretedAs = &protocol.InterpretedEvent{EventType: ev.EventType, Payload: c.se.ev.Payload}
	c.summary["free_text"] = true
	return answer{value: a, reason: "best effort: the question was read as " + c.se.text(read) +
		" and answered as a check; send query_type check with the exact event for an exact answer",
		alternatives: []string{protocol.QueryCheck}}
}

// commandWords start a command in a free-text question.
var commandWords = map[string]bool{
	"rm": true, "rmdir": true, "mv": true, "cp": true, "dd": true, "mkfs": true, "chmod": true, "chown": true,
	"sudo": true, "su": true, "curl": true, "wget": true, "git": true, "kill": true, "pkill": true, "killall": true,
	"shutdown": true, "reboot": true, "docker": true, "kubectl": true, "helm": true, "terraform": true, "tofu": true,
	"pulumi": true, "npm": true, "pip": true, "cat": true, "find": true, "ssh": true, "scp": true, "systemctl": true,
	"psql": true, "mysql": true, "bash": true, "sh": true, "python": true, "python3": true, "node": true, "make": true,
	"go": true, "cargo": true, "apt": true, "apt-get": true, "brew": true, "truncate": true, "shred": true,
	"ahp": true, "crontab": true, "iptables": true, "nc": true,
}

// stopWords end a command read from a free-text question.
var stopWords = map[string]bool{
	"safe": true, "ok": true, "okay": true, "allowed": true, "permitted": true, "fine": true, "now": true,
	"here": true, "please": true, "right": true, "dangerous": true, "risky": true, "blocked": true,
}

// commandIn finds a command in a question: the first `quoted` text, else
// from a command word to the end of the sentence (stop words excluded).
func commandIn(q string) string {
	if i := strings.IndexByte(q, '`'); i >= 0 {
		if j := strings.IndexByte(q[i+1:], '`'); j > 0 {
			return strings.TrimSpace(q[i+1 : i+1+j])
		}
	}
	words := strings.Fields(q)
	for i, w := range words {
		if !commandWords[strings.ToLower(w)] {
			continue
		}
		var out []string
		for _, x := range words[i:] {
			end := strings.HasSuffix(x, "?")
			x = strings.TrimRight(x, "?")
			if stopWords[strings.ToLower(strings.Trim(x, ".,!"))] {
				break
			}
			if x != "" {
				out = append(out, x)
			}
			if end {
				break
			}
		}
		return strings.Join(out, " ")
	}
	return ""
}

// toolIn finds a tool name in a question: "the NAME tool" or "tool NAME".
func toolIn(q string) string {
	words := strings.Fields(q)
	clean := func(w string) string { return strings.Trim(w, "\"'`?.,!:;()") }
	for i, w := range words {
		if strings.ToLower(clean(w)) != "tool" {
			continue
		}
		if i > 0 && !isArticle(clean(words[i-1])) {
			return clean(words[i-1])
		}
		if i+1 < len(words) && !isArticle(clean(words[i+1])) {
			return clean(words[i+1])
		}
	}
	return ""
}

func isArticle(w string) bool {
	switch strings.ToLower(w) {
	case "", "the", "a", "an", "this", "that", "my", "your":
		return true
	}
	return false
}
