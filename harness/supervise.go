package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ahp-go/ahp/descriptor"
	"github.com/ahp-go/ahp/internal/jsonscan"
	"github.com/ahp-go/ahp/protocol"
)

// maxTrackedRuns bounds the turn counters a DescriptorSupervisor keeps.
const maxTrackedRuns = 100000

// maxRunContextBytes bounds a run context a DescriptorSupervisor remembers
// for a session; a larger one is used for its own event only.
const maxRunContextBytes = 64 << 10

// RunContextKey is the member of an event's metadata that carries the
// descriptor run context, the object whose boolean paths gate handoffs.
const RunContextKey = "run_context"

// DescriptorSupervisor enforces an Agent Harness Descriptor on events: the
// AHP agent_id names the descriptor agent (exact match); a pre_action
// calling a tool the agent does not declare is blocked; a handoff to an
// agent it may not hand off to is blocked; pre_prompt events beyond the
// descriptor's max_turns in one run are blocked.
//
// A handoff is a pre_action whose action_type or tool_name is "handoff"
// (target in arguments.target_agent, arguments.agent or arguments.to), or
// whose tool_name is "transfer_to_<agent>".
//
// A gated handoff (handoffs: [{agent: ID, where: {context: PATH}}]) is
// allowed only when the gate holds, exactly true, in the run's context. The
// run context is the object an agent sends as metadata.run_context, on the
// event itself or earlier in the session on any event (a run_lifecycle
// notification, say); when the agent never sent one, it is the context the
// descriptor's field defaults build. A gate that is false, missing or not a
// boolean blocks the handoff, with the reason: this fails closed, where
// allowing the handoff "as declared" would let an unknown context open it.
type DescriptorSupervisor struct {
	d *descriptor.Descriptor

	mu       sync.Mutex
	runs     map[string]string          // session id -> current run id
	turns    map[string]int             // session id + run id -> pre_prompt count
	contexts map[string]json.RawMessage // session id -> last run_context reported
}

// NewDescriptorSupervisor returns a supervisor for d.
func NewDescriptorSupervisor(d *descriptor.Descriptor) *DescriptorSupervisor {
	return &DescriptorSupervisor{d: d, runs: make(map[string]string), turns: make(map[string]int), contexts: make(map[string]json.RawMessage)}
}

// Descriptor returns the descriptor being enforced.
func (s *DescriptorSupervisor) Descriptor() *descriptor.Descriptor { return s.d }

// Observe notes the current run of a session from run_lifecycle events,
// and the run context any event reports in metadata.run_context.
func (s *DescriptorSupervisor) Observe(ev *protocol.Event) {
	s.rememberContext(ev)
	if ev.EventType != protocol.EventRunLifecycle {
		return
	}
	run := stringMember(ev.Payload, "run_id")
	if run == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.runs) >= maxTrackedRuns {
		clear(s.runs)
	}
	s.runs[ev.SessionID] = run
}

// Check returns why ev breaks the descriptor, or "" when it does not. A
// pre_prompt counts as a turn of its run.
func (s *DescriptorSupervisor) Check(ev *protocol.Event) string { return s.check(ev, true) }

// Preview is Check without side effects: a pre_prompt is judged as the
// next turn of its run but not counted (ahp/query "check").
func (s *DescriptorSupervisor) Preview(ev *protocol.Event) string { return s.check(ev, false) }

func (s *DescriptorSupervisor) check(ev *protocol.Event, count bool) string {
	if ev.EventType != protocol.EventPreAction && ev.EventType != protocol.EventPrePrompt {
		return ""
	}
	agent, ok := s.d.Agent(ev.AgentID)
	if !ok {
		return fmt.Sprintf("agent %q is not declared in descriptor %s (declared: %s)", ev.AgentID, s.name(), strings.Join(s.d.AgentIDs(), ", "))
	}
	if ev.EventType == protocol.EventPrePrompt {
		return s.countTurn(ev, count)
	}
	tool := stringMember(ev.Payload, "tool_name")
	actionType := stringMember(ev.Payload, "action_type")
	if target, isHandoff := handoffTarget(tool, actionType, ev.Payload); isHandoff {
		switch target {
		case "":
			return fmt.Sprintf("agent %q: handoff without a target agent", agent.ID())
		case errTwoTargets:
			return fmt.Sprintf("agent %q: handoff naming two different target agents (%s)", agent.ID(), strings.Join(handoffTargetKeys, ", "))
		}
		if _, declared := s.d.Agent(target); !declared || !agent.CanHandoffTo(target) {
			return fmt.Sprintf("agent %q may not hand off to %q (declared handoffs: %s)", agent.ID(), target, listOrNone(agent.Handoffs()))
		}
		return s.checkGate(ev, agent, target)
	}
	if tool == "" {
		return ""
	}
	if !agent.HasTool(tool) {
		return fmt.Sprintf("agent %q does not declare tool %q (declared tools: %s)", agent.ID(), tool, listOrNone(agent.Tools()))
	}
	return ""
}

// checkGate evaluates the gate of a declared handoff, if it has one.
func (s *DescriptorSupervisor) checkGate(ev *protocol.Event, agent *descriptor.Agent, target string) string {
	var gate string
	for _, h := range agent.HandoffRules() {
		if h.Agent == target {
			gate = h.Where
		}
	}
	if gate == "" {
		return ""
	}
	raw, fromEvent := runContextOf(ev)
	source := "the event's run context"
	if !fromEvent {
		s.mu.Lock()
		raw = s.contexts[ev.SessionID]
		s.mu.Unlock()
		source = "the session's last reported run context"
	}
	var ctx map[string]any
	if raw == nil {
		source = "the descriptor's context defaults (no run context reported)"
	} else if err := decodeRunContext(raw, &ctx); err != nil {
		return fmt.Sprintf("agent %q handoff to %q is gated by context path %q: metadata.%s must be an object (%v)", agent.ID(), target, gate, RunContextKey, err)
	}
	if ctx == nil {
		defaults, err := s.d.NewContext(descriptor.ContextInput{})
		if err != nil {
			return fmt.Sprintf("agent %q handoff to %q is gated by context path %q, and the default context cannot be built: %v", agent.ID(), target, gate, err)
		}
		ctx = defaults
	}
	open, err := s.d.HandoffAllowed(agent.ID(), target, ctx)
	switch {
	case err != nil:
		return fmt.Sprintf("agent %q may hand off to %q only when a boolean gate holds: %v (in %s)", agent.ID(), target, err, source)
	case !open:
		return fmt.Sprintf("agent %q may hand off to %q only when context path %q is true; it is false in %s", agent.ID(), target, gate, source)
	}
	return ""
}

// rememberContext keeps the run context an event reports, per session.
func (s *DescriptorSupervisor) rememberContext(ev *protocol.Event) {
	raw, ok := runContextOf(ev)
	if !ok || len(raw) > maxRunContextBytes {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, known := s.contexts[ev.SessionID]; !known && len(s.contexts) >= maxTrackedRuns {
		clear(s.contexts)
	}
	s.contexts[ev.SessionID] = raw
}

// runContextOf returns metadata.run_context of ev, if present and not null.
func runContextOf(ev *protocol.Event) (json.RawMessage, bool) {
	if len(ev.Metadata) == 0 {
		return nil, false
	}
	var md map[string]json.RawMessage
	if json.Unmarshal(ev.Metadata, &md) != nil {
		return nil, false
	}
	raw, ok := md[RunContextKey]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, false
	}
	return raw, true
}

// decodeRunContext decodes a reported run context, which must be an object.
func decodeRunContext(raw json.RawMessage, ctx *map[string]any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("got %T", v)
	}
	*ctx = m
	return nil
}

// countTurn counts a pre_prompt (when count is set) and refuses it beyond
// max_turns.
func (s *DescriptorSupervisor) countTurn(ev *protocol.Event, count bool) string {
	max := s.d.MaxTurns()
	if max <= 0 {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	run := s.runs[ev.SessionID]
	key := ev.SessionID + "\x00" + run
	if count && len(s.turns) >= maxTrackedRuns {
		clear(s.turns)
	}
	n := s.turns[key] + 1
	if count {
		s.turns[key] = n
	}
	if n > max {
		where := "session " + ev.SessionID
		if run != "" {
			where = "run " + run
		}
		return fmt.Sprintf("max_turns %d reached in %s (turn %d)", max, where, n)
	}
	return ""
}

func (s *DescriptorSupervisor) name() string {
	if n := s.d.Name(); n != "" {
		return fmt.Sprintf("%q", n)
	}
	return s.d.Hash()
}

// handoffTargetKeys are the argument names under which a handoff names
// its target agent.
var handoffTargetKeys = []string{"target_agent", "agent", "to"}

// errTwoTargets is handoffTarget's answer for a handoff that names two
// different target agents: which one the tool follows depends on how it
// reads its arguments, so the handoff has no single reading.
const errTwoTargets = "\x00two targets"

// handoffTarget recognizes a handoff and returns its target agent: the
// value of a target argument, found also under a name that differs only
// in letter case (a Go tool decoding its arguments with encoding/json
// reads it so). A handoff naming two different targets returns
// errTwoTargets.
func handoffTarget(tool, actionType string, payload []byte) (string, bool) {
	if t, ok := strings.CutPrefix(tool, "transfer_to_"); ok {
		return t, true
	}
	if tool != "handoff" && actionType != "handoff" {
		return "", false
	}
	var target string
	_ = jsonscan.Object(payload, func(k, v []byte) error {
		if !named(k, "arguments") {
			return nil
		}
		return jsonscan.ObjectValid(v, func(ak, av []byte) error {
			if !slices.Contains(handoffTargetKeys, string(ak)) {
				if _, ok := jsonscan.CaseVariant(ak, handoffTargetKeys...); !ok {
					return nil
				}
			}
			s, ok := jsonscan.String(av)
			switch {
			case !ok:
			case target == "":
				target = s
			case s != target:
				target = errTwoTargets
			}
			return nil
		})
	})
	return target, true
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
