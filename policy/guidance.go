package policy

import (
	"fmt"
	"strings"
	"sync"
	"unicode"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	"go.yaml.in/yaml/v3"

	"github.com/ahp-go/ahp/protocol"
)

// Guidance is an operator's advice for planning and reasoning events: the
// "guidance:" section of a policy file. An entry whose condition holds
// answers planning with its strategy and subtasks and reasoning with its
// hints (docs/cognitive.md).
//
//	guidance:
//	  - id: db-migration
//	    when: '"migration" in event.words'
//	    strategy: step_by_step
//	    subtasks: [back up, dry-run, apply, verify]
//	    hints: [never edit an applied migration]
type Guidance struct {
	ID          string
	Description string
	File        string
	Line        int
	// Strategy is the planning strategy to select when offered ("" for
	// none).
	Strategy string
	Subtasks []string
	Hints    []string

	when     cel.Program // nil: always
	whenText string
}

// GuidanceInput is what a guidance condition sees, as the CEL map
// "event": event.type, event.task (planning's task_description),
// event.problem (reasoning's problem_statement), event.reasoning_type,
// event.strategies (offered), event.words (the lower-case words of the
// task and the problem), event.agent, event.session and event.depth.
type GuidanceInput struct {
	EventType     protocol.EventType
	Task          string
	Problem       string
	ReasoningType string
	Strategies    []string
	AgentID       string
	SessionID     string
	Depth         uint32
}

// GuidanceInputFor builds the input of a planning or reasoning event; ok is
// false for other event types or a payload that does not decode.
func GuidanceInputFor(ev *protocol.Event) (GuidanceInput, bool) {
	in := GuidanceInput{EventType: ev.EventType, AgentID: ev.AgentID, SessionID: ev.SessionID, Depth: ev.Depth}
	switch ev.EventType {
	case protocol.EventPlanning:
		var p protocol.PlanningPayload
		if p.UnmarshalJSON(ev.Payload) != nil {
			return in, false
		}
		in.Task = p.TaskDescription
		for _, s := range p.AvailableStrategies {
			in.Strategies = append(in.Strategies, s.String())
		}
	case protocol.EventReasoning:
		var p protocol.ReasoningPayload
		if p.UnmarshalJSON(ev.Payload) != nil {
			return in, false
		}
		in.Problem, in.ReasoningType = p.ProblemStatement, p.ReasoningType.String()
	default:
		return in, false
	}
	return in, true
}

// Bounds on guidance.
const (
	maxGuidanceWords = 512  // words of event.words
	maxGuidanceText  = 8192 // bytes of task and problem read
	maxGuidanceItems = 32   // subtasks or hints of one entry
)

// guidanceEnv is the CEL environment of guidance conditions.
var guidanceEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(ext.Strings(), ext.Lists(), ext.Sets(),
		cel.Variable("event", cel.MapType(cel.StringType, cel.DynType)))
})

// Guidance returns the entries whose condition holds for in, in the order
// of the policy files. An entry whose condition fails to evaluate is left
// out and its error returned with the others (guidance advises; it never
// blocks).
func (s *Set) Guidance(in GuidanceInput) ([]*Guidance, []error) {
	if len(s.guidance) == 0 {
		return nil, nil
	}
	task, problem := cutBytes(in.Task, maxGuidanceText), cutBytes(in.Problem, maxGuidanceText)
	words := strings.FieldsFunc(strings.ToLower(task+" "+problem), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-'
	})
	if len(words) > maxGuidanceWords {
		words = words[:maxGuidanceWords]
	}
	strategies := in.Strategies
	if strategies == nil {
		strategies = []string{}
	}
	act := map[string]any{"event": map[string]any{
		"type": string(in.EventType), "task": task, "problem": problem, "reasoning_type": in.ReasoningType,
		"strategies": strategies, "words": words, "agent": in.AgentID, "session": in.SessionID,
		"depth": int64(in.Depth),
	}}
	var out []*Guidance
	var errs []error
	for _, g := range s.guidance {
		if g.when == nil {
			out = append(out, g)
			continue
		}
		v, _, err := g.when.Eval(act)
		if err != nil {
			errs = append(errs, fmt.Errorf("guidance %s: %w", g.ID, err))
			continue
		}
		if b, ok := v.(types.Bool); ok && bool(b) {
			out = append(out, g)
		} else if !ok {
			errs = append(errs, fmt.Errorf("guidance %s: condition returned %s, not bool", g.ID, v.Type().TypeName()))
		}
	}
	return out, errs
}

// GuidanceIDs returns the ids of the set's guidance entries, in order.
func (s *Set) GuidanceIDs() []string {
	out := make([]string, len(s.guidance))
	for i, g := range s.guidance {
		out[i] = g.ID
	}
	return out
}

func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// parseGuidance reads and compiles the guidance section of one file.
func parseGuidance(name string, n *yaml.Node, ps *problems) []*Guidance {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		ps.add(name, n.Line, "", "guidance: expected a list")
		return nil
	}
	env, err := guidanceEnv()
	if err != nil {
		ps.add(name, n.Line, "", "guidance: %v", err)
		return nil
	}
	var out []*Guidance
	for _, e := range n.Content {
		if e.Kind != yaml.MappingNode {
			ps.add(name, e.Line, "", "a guidance entry must be a mapping")
			continue
		}
		g := &Guidance{File: name, Line: e.Line}
		for i := 0; i+1 < len(e.Content); i += 2 {
			if e.Content[i].Value == "id" {
				g.ID, _ = scalarString(e.Content[i+1])
			}
		}
		before := len(ps.list)
		f := mapping(name, e, "guidance "+g.ID, ps, "id", "description", "when", "strategy", "subtasks", "hints")
		if !ruleIDRe.MatchString(g.ID) {
			ps.add(name, e.Line, "", "guidance %s: missing or invalid id: use letters, digits and _ . : - (at most 128)", g.ID)
		}
		if v := f["description"]; v != nil {
			g.Description, _ = scalarString(v)
		}
		if v := f["strategy"]; v != nil {
			var err error
			if g.Strategy, err = scalarString(v); err != nil || g.Strategy == "" {
				ps.add(name, v.Line, "", "guidance %s: strategy: expected a strategy name (step_by_step, tree_of_thoughts, graph_planning, none or a custom name)", g.ID)
			}
		}
		for _, k := range []string{"subtasks", "hints"} {
			v := f[k]
			if v == nil {
				continue
			}
			list, err := stringList(v)
			if err != nil || len(list) > maxGuidanceItems {
				ps.add(name, v.Line, "", "guidance %s: %s: expected a list of at most %d strings", g.ID, k, maxGuidanceItems)
				continue
			}
			if k == "subtasks" {
				g.Subtasks = list
			} else {
				g.Hints = list
			}
		}
		if g.Strategy == "" && g.Subtasks == nil && g.Hints == nil {
			ps.add(name, e.Line, "", "guidance %s: give a strategy, subtasks or hints", g.ID)
		}
		if v := f["when"]; v != nil {
			g.whenText = v.Value
			ast, iss := env.Compile(v.Value)
			switch {
			case iss != nil && iss.Err() != nil:
				ps.add(name, v.Line, "", "guidance %s: when: %v", g.ID, iss.Err())
			case ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType:
				ps.add(name, v.Line, "", "guidance %s: when: returns %s, not bool", g.ID, ast.OutputType())
			default:
				if g.when, err = env.Program(ast); err != nil {
					ps.add(name, v.Line, "", "guidance %s: when: %v", g.ID, err)
				}
			}
		}
		if len(ps.list) == before {
			out = append(out, g)
		}
	}
	return out
}
