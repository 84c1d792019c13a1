package policy

import (
	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"

	"github.com/ahp-go/ahp/effects"
)

// A condition filter is what a condition needs of the action to be true:
// event.effects.exists(e, e.kind == "delete" && ...) needs a delete, and
// exists(e, e.kind == "run" && e.program in ["mkfs", ...]) a run of one of
// those programs. Conditions are read once at load; at evaluation a rule
// whose needs the action does not meet is false without running CEL, which
// spares most of the effect packs' rules on an ordinary command.

// noKindFilter turns the filters off (tests compare with and without).
var noKindFilter = false

// effectKinds lists the kinds with their bit in a kindMask.
var effectKinds = []effects.Kind{effects.Run, effects.Read, effects.Write, effects.Create, effects.Delete,
	effects.Move, effects.Chmod, effects.Chown, effects.Connect, effects.Listen, effects.Send,
	effects.Download, effects.Signal, effects.Privilege, effects.Unknown}

// kindMask is a set of effect kinds.
type kindMask uint32

func kindBit(k string) (kindMask, bool) {
	for i, kk := range effectKinds {
		if string(kk) == k {
			return 1 << i, true
		}
	}
	return 0, false
}

// maskOf returns the kinds present in es.
func maskOf(es []effects.Effect) kindMask {
	var m kindMask
	for i := range es {
		if b, ok := kindBit(string(es[i].Kind)); ok {
			m |= b
		}
	}
	return m
}

// conditionKinds returns the kinds a checked condition needs one of, or 0
// when it cannot tell (the rule is always evaluated).
func conditionKinds(a *cel.Ast) kindMask {
	if a == nil || a.NativeRep() == nil {
		return 0
	}
	m, _ := kindNeeds.required(a.NativeRep().Expr())
	return m
}

// conditionPrograms returns the programs of which a condition needs an
// effect of one, or nil when it cannot tell.
func conditionPrograms(a *cel.Ast) map[string]bool {
	if a == nil || a.NativeRep() == nil {
		return nil
	}
	ps, ok := programNeeds.required(a.NativeRep().Expr())
	if !ok {
		return nil
	}
	return ps
}

// needs reads one kind of need (a set T of kinds or of programs) out of a
// condition: union joins two sets, leaf reads one field test of the
// element v (v.field == "x", v.field in [...]).
type needs[T any] struct {
	union func(a, b T) T
	leaf  func(fn string, args []celast.Expr, v string) (T, bool)
}

var (
	kindNeeds = needs[kindMask]{
		union: func(a, b kindMask) kindMask { return a | b },
		leaf: func(fn string, args []celast.Expr, v string) (kindMask, bool) {
			var m kindMask
			for _, s := range fieldLiterals(fn, args, v, "kind") {
				b, ok := kindBit(s)
				if !ok {
					return 0, false
				}
				m |= b
			}
			return m, m != 0
		},
	}
	programNeeds = needs[map[string]bool]{
		union: func(a, b map[string]bool) map[string]bool {
			out := make(map[string]bool, len(a)+len(b))
			for k := range a {
				out[k] = true
			}
			for k := range b {
				out[k] = true
			}
			return out
		},
		leaf: func(fn string, args []celast.Expr, v string) (map[string]bool, bool) {
			m := map[string]bool{}
			for _, s := range fieldLiterals(fn, args, v, "program") {
				m[s] = true
			}
			return m, len(m) > 0
		},
	}
)

// required reads e as "true only if an effect meeting this need exists".
func (n needs[T]) required(e celast.Expr) (T, bool) {
	var zero T
	switch e.Kind() {
	case celast.CallKind:
		c := e.AsCall()
		args := c.Args()
		switch c.FunctionName() {
		case operators.LogicalAnd:
			if m, ok := n.required(args[0]); ok {
				return m, true
			}
			return n.required(args[1])
		case operators.LogicalOr:
			m1, ok1 := n.required(args[0])
			m2, ok2 := n.required(args[1])
			if ok1 && ok2 {
				return n.union(m1, m2), true
			}
		}
	case celast.ComprehensionKind:
		comp := e.AsComprehension()
		if !isEventEffects(comp.IterRange()) {
			return zero, false
		}
		step := comp.LoopStep()
		if step.Kind() != celast.CallKind || step.AsCall().FunctionName() != operators.LogicalOr {
			return zero, false // not exists(): all() and the like are true on no effect
		}
		sargs := step.AsCall().Args()
		if sargs[0].Kind() != celast.IdentKind || sargs[0].AsIdent() != comp.AccuVar() {
			return zero, false
		}
		return n.predicate(sargs[1], comp.IterVar())
	}
	return zero, false
}

// predicate reads the body of an exists() over effects for what it needs
// of its element v.
func (n needs[T]) predicate(e celast.Expr, v string) (T, bool) {
	var zero T
	if e.Kind() != celast.CallKind {
		return zero, false
	}
	c := e.AsCall()
	args := c.Args()
	switch c.FunctionName() {
	case operators.LogicalAnd:
		if m, ok := n.predicate(args[0], v); ok {
			return m, true
		}
		return n.predicate(args[1], v)
	case operators.LogicalOr:
		m1, ok1 := n.predicate(args[0], v)
		m2, ok2 := n.predicate(args[1], v)
		if ok1 && ok2 {
			return n.union(m1, m2), true
		}
		return zero, false
	}
	return n.leaf(c.FunctionName(), args, v)
}

// fieldLiterals reads v.field == "x" (either way round) and v.field in
// ["x", ...] as the literals the field must equal; nil for anything else.
func fieldLiterals(fn string, args []celast.Expr, v, field string) []string {
	switch fn {
	case operators.Equals:
		for i := 0; i < 2; i++ {
			if isFieldOf(args[i], v, field) {
				if s, ok := stringLit(args[1-i]); ok {
					return []string{s}
				}
			}
		}
	case operators.In:
		if isFieldOf(args[0], v, field) && args[1].Kind() == celast.ListKind {
			var out []string
			for _, el := range args[1].AsList().Elements() {
				s, ok := stringLit(el)
				if !ok {
					return nil
				}
				out = append(out, s)
			}
			return out
		}
	}
	return nil
}

// isEventEffects reports whether e is event.effects.
func isEventEffects(e celast.Expr) bool {
	if e.Kind() != celast.SelectKind {
		return false
	}
	s := e.AsSelect()
	op := s.Operand()
	return s.FieldName() == "effects" && !s.IsTestOnly() && op.Kind() == celast.IdentKind && op.AsIdent() == "event"
}

// isFieldOf reports whether e is v.field.
func isFieldOf(e celast.Expr, v, field string) bool {
	if e.Kind() != celast.SelectKind {
		return false
	}
	s := e.AsSelect()
	return s.FieldName() == field && !s.IsTestOnly() && s.Operand().Kind() == celast.IdentKind && s.Operand().AsIdent() == v
}

func stringLit(e celast.Expr) (string, bool) {
	if e.Kind() != celast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}
