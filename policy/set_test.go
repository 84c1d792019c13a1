package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

func TestPriorityThenDenyOverrides(t *testing.T) {
	set := mustCompile(t, noPacks(), `
rules:
  - id: low-block
    priority: 1
    outcome: {decision: block, reason: low}
  - id: high-allow
    priority: 10
    condition: event.tool == "read"
    outcome: {decision: allow}
  - id: high-defer
    priority: 10
    condition: event.tool == "write"
    outcome: {decision: defer, retry_after_ms: 100}
  - id: high-block
    priority: 10
    condition: event.tool == "write" && payload.arguments.path.startsWith("/etc")
    outcome: {decision: block, reason: etc}
  - id: high-escalate
    priority: 10
    condition: event.tool == "write"
    outcome: {decision: escalate, reason: esc}
`)
	cases := []struct {
		name string
		ev   *protocol.Event
		kind protocol.DecisionKind
		rule string
	}{
		// A higher priority allow beats a lower priority block.
		{"higher priority wins", action("read", map[string]any{"path": "x"}), protocol.DecisionAllow, "high-allow"},
		// Same priority: escalate beats defer.
		{"deny overrides: escalate over defer", action("write", map[string]any{"path": "x"}), protocol.DecisionEscalate, "high-escalate"},
		// Same priority: block beats escalate and defer.
		{"deny overrides: block over all", action("write", map[string]any{"path": "/etc/passwd"}), protocol.DecisionBlock, "high-block"},
		// Nothing at priority 10 matches: the lower level decides.
		{"falls through to lower priority", action("exec", nil), protocol.DecisionBlock, "low-block"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := eval(set, c.ev)
			if r.Decision.Kind != c.kind || r.RuleID != c.rule || !r.Matched {
				t.Fatalf("got %s by %q (matched %t), want %s by %q", r.Decision.Kind, r.RuleID, r.Matched, c.kind, c.rule)
			}
		})
	}
}

func TestTieGoesToFirstLoaded(t *testing.T) {
	set := mustCompile(t, noPacks(), `
rules:
  - id: first
    outcome: {decision: block, reason: first}
  - id: second
    outcome: {decision: block, reason: second}
`)
	if r := eval(set, bash("ls")); r.RuleID != "first" || r.Decision.Reason != "first" {
		t.Fatalf("got rule %q", r.RuleID)
	}
}

func TestDefaultOutcome(t *testing.T) {
	set := mustCompile(t, noPacks(), "rules:\n  - id: never\n    condition: 'false'\n    outcome: {decision: block, reason: x}\n")
	r := eval(set, bash("ls"))
	if r.Decision.Kind != protocol.DecisionAllow || r.Matched || r.RuleID != "" {
		t.Fatalf("default: %+v", r)
	}
	var meta map[string]string
	if err := json.Unmarshal(r.Decision.Metadata, &meta); err != nil {
		t.Fatal(err)
	}
	if _, ok := meta["rule_id"]; ok || meta["policy_version"] != set.Version() {
		t.Fatalf("default metadata %s", r.Decision.Metadata)
	}

	opts := noPacks()
	opts.Default = protocol.DecisionBlock
	set = mustCompile(t, opts, "rules:\n  - id: reads\n    target: {tools: [read]}\n    outcome: {decision: allow}\n")
	if r := eval(set, action("read", nil)); r.Decision.Kind != protocol.DecisionAllow {
		t.Fatalf("allow-listed tool: %+v", r)
	}
	r = eval(set, action("write", nil))
	if r.Decision.Kind != protocol.DecisionBlock || r.Decision.Reason == "" || r.Matched {
		t.Fatalf("default block: %+v", r)
	}
	opts.Default = "maybe"
	if ps := loadProblems(t, opts, "rules: []\n"); !strings.Contains(ps[0].Message, "default decision") {
		t.Fatalf("bad default accepted: %v", ps)
	}
}

func TestMetadataNamesRuleAndVersion(t *testing.T) {
	set := mustCompile(t, noPacks(), "rules:\n  - id: no-ls\n    condition: event.command == 'ls'\n    outcome: {decision: block, reason: no}\n")
	if !strings.HasPrefix(set.Version(), "sha256:") || len(set.Version()) != len("sha256:")+64 {
		t.Fatalf("version %q", set.Version())
	}
	r := eval(set, bash("ls"))
	b, err := json.Marshal(r.Decision)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"decision":"block","reason":"no","metadata":{"rule_id":"no-ls","policy_version":"` + set.Version() + `"}}`
	if string(b) != want {
		t.Fatalf("wire decision\n got %s\nwant %s", b, want)
	}
	// The version changes with the sources and with the parameters.
	other := mustCompile(t, noPacks(), "rules:\n  - id: no-ls\n    condition: event.command == 'ls -l'\n    outcome: {decision: block, reason: no}\n")
	opts := noPacks()
	opts.Params = map[string]any{"x": 1}
	withParam := mustCompile(t, opts, "rules:\n  - id: no-ls\n    condition: event.command == 'ls'\n    outcome: {decision: block, reason: no}\n")
	if other.Version() == set.Version() || withParam.Version() == set.Version() {
		t.Fatal("version did not change")
	}
}

func TestRuntimeErrorFailsClosed(t *testing.T) {
	set := mustCompile(t, noPacks(), `
rules:
  - id: allow-everything
    outcome: {decision: allow}
  - id: reads-missing-field
    priority: 5
    condition: payload.arguments.path.startsWith("/secret")
    outcome: {decision: allow}
`)
	// The payload has no arguments.path: the condition cannot be evaluated.
	r := eval(set, action("read", map[string]any{}))
	if r.Decision.Kind != protocol.DecisionBlock || r.RuleID != "reads-missing-field" || r.Err == nil {
		t.Fatalf("got %+v", r)
	}
	if !strings.Contains(r.Decision.Reason, "reads-missing-field") || !strings.Contains(r.Decision.Reason, "fail closed") {
		t.Fatalf("reason does not name the rule: %q", r.Decision.Reason)
	}
	// With the field present the rule evaluates normally.
	if r := eval(set, action("read", map[string]any{"path": "/secret/x"})); r.Decision.Kind != protocol.DecisionAllow || r.Err != nil {
		t.Fatalf("got %+v", r)
	}
	// A payload that is not valid JSON fails closed too.
	if r := eval(set, event(protocol.EventPreAction, `{"tool_name": "read", "arguments": {"path": }`)); r.Decision.Kind != protocol.DecisionBlock {
		t.Fatalf("bad JSON: %+v", r)
	}
}

func TestDynConditionMustBeBool(t *testing.T) {
	set := mustCompile(t, noPacks(), "rules:\n  - id: dyn\n    condition: payload.flag\n    outcome: {decision: block, reason: flagged}\n")
	if r := eval(set, event(protocol.EventPrePrompt, `{"flag": true}`)); r.Decision.Reason != "flagged" {
		t.Fatalf("true flag: %+v", r)
	}
	if r := eval(set, event(protocol.EventPrePrompt, `{"flag": false}`)); r.Matched {
		t.Fatalf("false flag: %+v", r)
	}
	r := eval(set, event(protocol.EventPrePrompt, `{"flag": "yes"}`))
	if r.Decision.Kind != protocol.DecisionBlock || r.Err == nil || !strings.Contains(r.Err.Error(), "not bool") {
		t.Fatalf("string flag: %+v", r)
	}
}

func TestNoEvent(t *testing.T) {
	set := mustCompile(t, noPacks(), "rules: []\n")
	if r := set.Evaluate(nil); r.Decision.Kind != protocol.DecisionBlock {
		t.Fatalf("nil input: %+v", r)
	}
	if r := set.Evaluate(&Input{}); r.Decision.Kind != protocol.DecisionBlock {
		t.Fatalf("nil event: %+v", r)
	}
}

func TestModifyOutcome(t *testing.T) {
	set := mustCompile(t, noPacks(), `
rules:
  - id: force-dry-run
    target: {event_types: [pre_action], tools: [terraform]}
    condition: '!payload.arguments.args.exists(a, a == "-dry-run")'
    outcome:
      decision: modify
      modified_payload: |
        {"tool_name": payload.tool_name,
         "arguments": {"args": payload.arguments.args + ["-dry-run"], "dir": payload.arguments.dir}}
  - id: bad-modify
    target: {event_types: [pre_action], tools: [broken]}
    outcome: {decision: modify, modified_payload: 'payload.missing'}
`)
	r := eval(set, action("terraform", map[string]any{"args": []string{"apply"}, "dir": "infra"}))
	if r.Decision.Kind != protocol.DecisionModify || r.RuleID != "force-dry-run" {
		t.Fatalf("got %+v", r)
	}
	want := `{"arguments":{"args":["apply","-dry-run"],"dir":"infra"},"tool_name":"terraform"}`
	if string(r.Decision.ModifiedPayload) != want {
		t.Fatalf("modified payload\n got %s\nwant %s", r.Decision.ModifiedPayload, want)
	}
	if r := eval(set, action("terraform", map[string]any{"args": []string{"apply", "-dry-run"}, "dir": "infra"})); r.Matched {
		t.Fatalf("already dry-run: %+v", r)
	}
	r = eval(set, action("broken", nil))
	if r.Decision.Kind != protocol.DecisionBlock || !strings.Contains(r.Decision.Reason, "bad-modify") {
		t.Fatalf("failing modify: %+v", r)
	}
}

func TestModifyPassesUntouchedObjectsThrough(t *testing.T) {
	set := mustCompile(t, noPacks(), `
rules:
  - id: wrap
    outcome: {decision: modify, modified_payload: '{"original": payload, "n": 1.5, "ok": true, "none": null, "who": principal}'}
`)
	r := set.Evaluate(&Input{Event: event(protocol.EventPrePrompt, `{"text": "caf\u00e9 \"q\"", "nested": {"a": [1, 2.5e3, -7]}}`),
		Principal: Principal{ID: "bob", Roles: []string{"dev"}}})
	var got map[string]any
	if err := json.Unmarshal(r.Decision.ModifiedPayload, &got); err != nil {
		t.Fatalf("invalid JSON %s: %v", r.Decision.ModifiedPayload, err)
	}
	orig := got["original"].(map[string]any)
	who, _ := got["who"].(map[string]any)
	if orig["text"] != `café "q"` || got["n"] != 1.5 || got["ok"] != true || got["none"] != nil || who["id"] != "bob" {
		t.Fatalf("got %s", r.Decision.ModifiedPayload)
	}
}

func TestDeferOutcome(t *testing.T) {
	set := mustCompile(t, noPacks(), `
rules:
  - id: slow-down
    condition: session.actions > 100
    outcome: {decision: defer, retry_after_ms: 2500, reason: "too many actions"}
`)
	in := &Input{Event: bash("ls"), Session: SessionState{Actions: 101}}
	r := set.Evaluate(in)
	if r.Decision.Kind != protocol.DecisionDefer || r.Decision.RetryAfterMs != 2500 || r.Decision.Reason != "too many actions" {
		t.Fatalf("got %+v", r)
	}
	b, _ := json.Marshal(r.Decision)
	if string(b) != `{"decision":"defer","retry_after_ms":2500,"reason":"too many actions"}` {
		t.Fatalf("wire: %s", b)
	}
	in.Session.Actions = 100
	if r := set.Evaluate(in); r.Matched {
		t.Fatalf("under the limit: %+v", r)
	}
}

func TestEscalateAwaitApproval(t *testing.T) {
	set := mustCompile(t, noPacks(), `
rules:
  - id: prod
    condition: event.command.contains("prod")
    outcome:
      decision: escalate
      reason: production change
      await_approval: {timeout: 90s, fallback: allow, approver_role: sre}
  - id: notify
    condition: event.command.contains("staging")
    outcome: {decision: escalate, reason: staging change, escalation_target: "#deploys"}
`)
	r := eval(set, bash("deploy prod"))
	if r.Decision.Kind != protocol.DecisionEscalate || r.Approval == nil {
		t.Fatalf("got %+v", r)
	}
	if *r.Approval != (ApprovalSpec{Timeout: 90e9, Fallback: protocol.DecisionAllow, ApproverRole: "sre"}) {
		t.Fatalf("approval %+v", *r.Approval)
	}
	if r.Decision.EscalationTarget != "sre" || r.Decision.Reason != "production change" {
		t.Fatalf("decision %+v", r.Decision)
	}
	r = eval(set, bash("deploy staging"))
	if r.Approval != nil || r.Decision.EscalationTarget != "#deploys" {
		t.Fatalf("plain escalate: %+v", r)
	}
	if ps := loadProblems(t, noPacks(), `
rules:
  - id: e
    outcome: {decision: escalate, reason: r, await_approval: {timeout: soon, fallback: maybe}}
`); len(ps) != 2 || ps[0].Line != 4 || ps[0].RuleID != "e" {
		t.Fatalf("problems: %v", ps)
	}
}

func TestVariables(t *testing.T) {
	opts := noPacks()
	opts.Params = map[string]any{"team": "core"}
	set := mustCompile(t, opts, `
rules:
  - id: all-vars
    condition: |
      event.event_type == "pre_action" && event.session_id == "s-9" && event.agent_id == "coder" &&
      event.timestamp.startsWith("2026") && event.depth == 2 && event.tool == "bash" &&
      event.command == "make" && event.transport == "websocket" && event.metadata.trace == "t1" &&
      principal.id == "alice" && "dev" in principal.roles &&
      session.actions == 3 && session.tokens == 4000 && session.errors == 1 &&
      "read" in session.recent_tools && session.run_status == "executing" &&
      context.current_task == "build" && context.session_stats.total_actions == 7 &&
      config.team == "core"
    outcome: {decision: block, reason: all}
`)
	ev := bash("make")
	ev.SessionID, ev.AgentID, ev.Depth = "s-9", "coder", 2
	ev.Metadata = json.RawMessage(`{"trace":"t1"}`)
	ev.Context = &protocol.EventContext{CurrentTask: "build", SessionStats: &protocol.SessionStats{TotalActions: 7}}
	in := &Input{
		Event: ev, Transport: "websocket",
		Principal: Principal{ID: "alice", Roles: []string{"dev"}},
		Session:   SessionState{Actions: 3, Tokens: 4000, Errors: 1, RecentTools: []string{"read"}, RunStatus: "executing"},
	}
	if r := set.Evaluate(in); r.Decision.Reason != "all" || r.Err != nil {
		t.Fatalf("got %+v", r)
	}
	in.Session.Tokens = 4001
	if r := set.Evaluate(in); r.Matched {
		t.Fatalf("changed tokens still matched: %+v", r)
	}
	// Absent context and metadata read as empty maps.
	set = mustCompile(t, noPacks(), `
rules:
  - id: empty
    condition: size(context) == 0 && size(event.metadata) == 0 && !has(context.current_task)
    outcome: {decision: block, reason: empty}
`)
	if r := eval(set, bash("ls")); r.RuleID != "empty" {
		t.Fatalf("empty maps: %+v", r)
	}
}

func TestPresenceAndOptionals(t *testing.T) {
	set := mustCompile(t, noPacks(), `
rules:
  - id: has-timeout
    condition: has(payload.arguments) && has(payload.arguments.timeout) && payload.arguments.timeout > 60
    outcome: {decision: block, reason: long}
  - id: empty-tool
    condition: '!has(event.tool)'
    outcome: {decision: block, reason: no tool}
  - id: optional
    condition: payload.?arguments.?mode.orValue("safe") == "yolo"
    outcome: {decision: block, reason: yolo}
`)
	if r := eval(set, action("x", map[string]any{"timeout": 61})); r.RuleID != "has-timeout" {
		t.Fatalf("timeout: %+v", r)
	}
	if r := eval(set, action("x", map[string]any{})); r.Matched {
		t.Fatalf("no timeout: %+v", r)
	}
	if r := eval(set, event(protocol.EventPrePrompt, `{"prompt":"hi"}`)); r.RuleID != "empty-tool" {
		t.Fatalf("no tool: %+v", r)
	}
	if r := eval(set, action("x", map[string]any{"mode": "yolo"})); r.RuleID != "optional" {
		t.Fatalf("optional: %+v", r)
	}
}
