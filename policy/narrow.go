package policy

import (
	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
)

// A narrowing hands each exists() over event.effects only the effects its
// body could be true of. The body's need (needReader.predicate) is a
// necessary condition of the body for one element: an effect that does not
// meet it makes the body false (CEL's "false && x" is false even when x is
// an error), so leaving it out changes neither a true, a false nor an
// error result of the exists(). On a long script (hundreds of effects) a
// rule about, say, runs of curl then folds over the few such effects
// instead of every effect of the script.

// narrowing is what one rule's condition narrows: the id of the
// event.effects expression of each exists() whose body has a need, and
// that need.
type narrowing struct {
	params map[string]any
	byID   map[int64]*condNeed
	// paths are the path_match calls whose patterns are a pack parameter,
	// by call id (planned as a pathSetNode: pathset.go).
	paths map[int64][]string
	// cmds are the command_in calls whose commands are a pack parameter,
	// by call id (planned as a commandSetNode: commandset.go).
	cmds map[int64][][]string
}

// read finds the exists() over event.effects of a checked condition.
func (n *narrowing) read(a *cel.Ast) {
	if a == nil || a.NativeRep() == nil {
		return
	}
	r := needReader{params: n.params}
	celast.PostOrderVisit(a.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() == celast.CallKind {
			c := e.AsCall()
			if c.FunctionName() == "path_match" && !c.IsMemberFunction() && len(c.Args()) == 2 {
				if pats, ok := configStrings(c.Args()[1], n.params); ok {
					if n.paths == nil {
						n.paths = map[int64][]string{}
					}
					n.paths[e.ID()] = pats
				}
			}
			if c.FunctionName() == "command_in" && !c.IsMemberFunction() && len(c.Args()) == 3 {
				if v, ok := configValue(c.Args()[2], n.params); ok {
					if cmds, ok := configCommands(v); ok {
						if n.cmds == nil {
							n.cmds = map[int64][][]string{}
						}
						n.cmds[e.ID()] = cmds
					}
				}
			}
			return
		}
		if e.Kind() != celast.ComprehensionKind {
			return
		}
		comp := e.AsComprehension()
		if !isEventEffects(comp.IterRange()) || comp.HasIterVar2() || !isExists(comp) {
			return
		}
		need, ok := r.predicate(comp.LoopStep().AsCall().Args()[1], comp.IterVar())
		if !ok || len(need) == 0 {
			return
		}
		if n.byID == nil {
			n.byID = map[int64]*condNeed{}
		}
		n.byID[comp.IterRange().ID()] = &need
	}))
}

// needs returns the needs of the narrowing (buildNeeds numbers them).
func (n *narrowing) needs() []*condNeed {
	if n == nil {
		return nil
	}
	out := make([]*condNeed, 0, len(n.byID))
	for _, nd := range n.byID {
		out = append(out, nd)
	}
	return out
}

// decorate replaces each narrowed event.effects with a narrowNode, each
// path_match of patterns known at load with a pathSetNode, and each
// command_in of commands known at load with a commandSetNode.
func (n *narrowing) decorate(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	if call, ok := i.(interpreter.InterpretableCall); ok && call.Function() == "command_in" && len(call.Args()) == 3 {
		cmds, known := n.cmds[i.ID()]
		if !known {
			if c, isConst := call.Args()[2].(interpreter.InterpretableConst); isConst {
				cmds, known = constCommands(c.Value())
			}
		}
		if known {
			return &commandSetNode{id: i.ID(), prog: call.Args()[0], argv: call.Args()[1], set: compileCommandSet(cmds)}, nil
		}
		return i, nil
	}
	if call, ok := i.(interpreter.InterpretableCall); ok && call.Function() == "path_match" && len(call.Args()) == 2 {
		pats, known := n.paths[i.ID()]
		if !known {
			if c, isConst := call.Args()[1].(interpreter.InterpretableConst); isConst {
				pats, known = constStrings(c.Value())
			}
		}
		if known {
			return &pathSetNode{id: i.ID(), subject: call.Args()[0], set: compilePathSet(pats)}, nil
		}
		return i, nil
	}
	if need, ok := n.byID[i.ID()]; ok {
		return &narrowNode{InterpretableV2: i, need: need}, nil
	}
	return i, nil
}

// narrowNode evaluates event.effects as the list of the action's effects
// that meet need; anywhere it cannot reach the evaluation context, or with
// the filters off, it is event.effects itself.
type narrowNode struct {
	interpreter.InterpretableV2
	need *condNeed
}

// Exec implements interpreter.InterpretableV2.
func (n *narrowNode) Exec(f *interpreter.ExecutionFrame) ref.Val {
	if c := ctxOf(f); c != nil && !noKindFilter {
		return c.narrowed(*n.need)
	}
	return n.InterpretableV2.Exec(f)
}

// Eval implements interpreter.Interpretable.
func (n *narrowNode) Eval(a interpreter.Activation) ref.Val {
	if c := ctxOf(a); c != nil && !noKindFilter {
		return c.narrowed(*n.need)
	}
	return n.InterpretableV2.Eval(a)
}

// ctxOf finds the evaluation context behind the activation's event.
func ctxOf(a interpreter.Activation) *evalCtx {
	v, ok := a.ResolveName("event")
	if !ok {
		return nil
	}
	if ev, ok := v.(structVal[eventKind]); ok {
		return ev.c
	}
	return nil
}

// narrowed returns the CEL list of the action's effects that meet need.
func (c *evalCtx) narrowed(need condNeed) ref.Val {
	c.readFacts()
	es := c.effects()
	// The list is built at the end of the evaluation's room for them
	// (valBuf), which is only reused by the next evaluation: a list lives
	// no longer than the rule's evaluation that made it.
	vals := c.valBuf[len(c.valBuf):]
	if idx, all := c.candidates(need); !all {
		for _, i := range idx {
			if c.meets(int(i), need) {
				vals = append(vals, effectVal{&es[i]})
			}
		}
	} else {
		for i := range c.facts {
			if c.meets(i, need) {
				vals = append(vals, effectVal{&es[i]})
			}
		}
	}
	if room := cap(c.valBuf) - len(c.valBuf); len(vals) <= room {
		c.valBuf = c.valBuf[:len(c.valBuf)+len(vals)] // built in place
	} else {
		// append moved the list; the next ones get a larger room (the
		// lists made in the old one keep it alive while they need it).
		c.valBuf = make([]ref.Val, 0, 2*cap(c.valBuf)+len(vals))
	}
	return types.NewRefValList(effectAdapter{}, vals[:len(vals):len(vals)])
}
