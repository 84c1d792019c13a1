package harness

import (
	"fmt"
	"strings"
	"sync"

	"github.com/ahp-go/ahp/descriptor"
	"github.com/ahp-go/ahp/internal/jsonscan"
	"github.com/ahp-go/ahp/protocol"
)

// maxTrackedRuns bounds the turn counters a DescriptorSupervisor keeps.
const maxTrackedRuns = 100000

// DescriptorSupervisor enforces an Agent Harness Descriptor on events: the
// AHP agent_id names the descriptor agent (exact match); a pre_action
// calling a tool the agent does not declare is blocked; a handoff to an
// agent it may not hand off to is blocked; pre_prompt events beyond the
// descriptor's max_turns in one run are blocked.
//
// A handoff is a pre_action whose action_type or tool_name is "handoff"
// (target in arguments.target_agent, arguments.agent or arguments.to), or
// whose tool_name is "transfer_to_<agent>".
type DescriptorSupervisor struct {
	d *descriptor.Descriptor

	mu    sync.Mutex
	runs  map[string]string // session id -> current run id
	turns map[string]int    // session id + run id -> pre_prompt count
}

// NewDescriptorSupervisor returns a supervisor for d.
func NewDescriptorSupervisor(d *descriptor.Descriptor) *DescriptorSupervisor {
	return &DescriptorSupervisor{d: d, runs: make(map[string]string), turns: make(map[string]int)}
}

// Descriptor returns the descriptor being enforced.
func (s *DescriptorSupervisor) Descriptor() *descriptor.Descriptor { return s.d }

// Observe notes the current run of a session from run_lifecycle events.
func (s *DescriptorSupervisor) Observe(ev *protocol.Event) {
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

// Check returns why ev breaks the descriptor, or "" when it does not.
func (s *DescriptorSupervisor) Check(ev *protocol.Event) string {
	if ev.EventType != protocol.EventPreAction && ev.EventType != protocol.EventPrePrompt {
		return ""
	}
	agent, ok := s.d.Agent(ev.AgentID)
	if !ok {
		return fmt.Sprintf("agent %q is not declared in descriptor %s (declared: %s)", ev.AgentID, s.name(), strings.Join(s.d.AgentIDs(), ", "))
	}
	if ev.EventType == protocol.EventPrePrompt {
		return s.countTurn(ev)
	}
	tool := stringMember(ev.Payload, "tool_name")
	actionType := stringMember(ev.Payload, "action_type")
	if target, isHandoff := handoffTarget(tool, actionType, ev.Payload); isHandoff {
		if target == "" {
			return fmt.Sprintf("agent %q: handoff without a target agent", agent.ID())
		}
		if _, declared := s.d.Agent(target); !declared || !agent.CanHandoffTo(target) {
			return fmt.Sprintf("agent %q may not hand off to %q (declared handoffs: %s)", agent.ID(), target, listOrNone(agent.Handoffs()))
		}
		return ""
	}
	if tool == "" {
		return ""
	}
	if !agent.HasTool(tool) {
		return fmt.Sprintf("agent %q does not declare tool %q (declared tools: %s)", agent.ID(), tool, listOrNone(agent.Tools()))
	}
	return ""
}

// countTurn counts a pre_prompt and refuses it beyond max_turns.
func (s *DescriptorSupervisor) countTurn(ev *protocol.Event) string {
	max := s.d.MaxTurns()
	if max <= 0 {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	run := s.runs[ev.SessionID]
	key := ev.SessionID + "\x00" + run
	if len(s.turns) >= maxTrackedRuns {
		clear(s.turns)
	}
	s.turns[key]++
	if n := s.turns[key]; n > max {
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

// handoffTarget recognizes a handoff and returns its target agent.
func handoffTarget(tool, actionType string, payload []byte) (string, bool) {
	if t, ok := strings.CutPrefix(tool, "transfer_to_"); ok {
		return t, true
	}
	if tool != "handoff" && actionType != "handoff" {
		return "", false
	}
	var target string
	_ = jsonscan.Object(payload, func(k, v []byte) error {
		if string(k) != "arguments" {
			return nil
		}
		return jsonscan.ObjectValid(v, func(ak, av []byte) error {
			switch string(ak) {
			case "target_agent", "agent", "to":
				if s, ok := jsonscan.String(av); ok && target == "" {
					target = s
				}
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
