package policy

import (
	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"

	"github.com/ahp-go/ahp/effects"
)

// A kind filter is the set of effect kinds of which a condition needs one
// to be true: event.effects.exists(e, e.kind == "delete" && ...) needs a
// delete. Conditions are checked once at load; at evaluation a rule whose
// kinds the action has none of is false without running CEL, which spares
// most of the effect packs' rules on an ordinary command.

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
	m, _ := requiredKinds(a.NativeRep().Expr())
	return m
}

// conditionPrograms returns the programs of which a condition needs a run
// effect of one (event.effects.exists(e, e.kind == "run" && e.program in
// [...] ...)), or nil when it cannot tell.
func conditionPrograms(a *cel.Ast) map[string]bool {
	if a == nil || a.NativeRep() == nil {
		return nil
	}
	ps, ok := requiredPrograms(a.NativeRep().Expr())
	if !ok {
		return nil
	}
	return ps
}

// requiredPrograms is requiredKinds for program names.
func requiredPrograms(e celast.Expr) (map[string]bool, bool) {
	switch e.Kind() {
	case celast.CallKind:
		c := e.AsCall()
		args := c.Args()
		switch c.FunctionName() {
		case operators.LogicalAnd:
			if m, ok := requiredPrograms(args[0]); ok {
				return m, true
			}
			return requiredPrograms(args[1])
		case operators.LogicalOr:
			m1, ok1 := requiredPrograms(args[0])
			m2, ok2 := requiredPrograms(args[1])
			if ok1 && ok2 {
				for k := range m2 {
					m1[k] = true
				}
				return m1, true
			}
		}
	case celast.ComprehensionKind:
		comp := e.AsComprehension()
		if !isEventEffects(comp.IterRange()) {
			return nil, false
		}
		step := comp.LoopStep()
		if step.Kind() != celast.CallKind || step.AsCall().FunctionName() != operators.LogicalOr {
			return nil, false
		}
		sargs := step.AsCall().Args()
		if sargs[0].Kind() != celast.IdentKind || sargs[0].AsIdent() != comp.AccuVar() {
			return nil, false
		}
		return predicatePrograms(sargs[1], comp.IterVar())
	}
	return nil, false
}

// predicatePrograms reads the body of an exists() over effects: it needs
// its element's program to be one of a set of literals.
func predicatePrograms(e celast.Expr, v string) (map[string]bool, bool) {
	if e.Kind() != celast.CallKind {
		return nil, false
	}
	c := e.AsCall()
	args := c.Args()
	switch c.FunctionName() {
	case operators.LogicalAnd:
		if m, ok := predicatePrograms(args[0], v); ok {
			return m, true
		}
		return predicatePrograms(args[1], v)
	case operators.LogicalOr:
		m1, ok1 := predicatePrograms(args[0], v)
		m2, ok2 := predicatePrograms(args[1], v)
		if ok1 && ok2 {
			for k := range m2 {
				m1[k] = true
			}
			return m1, true
		}
	case operators.Equals:
		for i := 0; i < 2; i++ {
			if isFieldOf(args[i], v, "program") {
				if s, ok := stringLit(args[1-i]); ok {
					return map[string]bool{s: true}, true
				}
			}
		}
	case operators.In:
		if isFieldOf(args[0], v, "program") && args[1].Kind() == celast.ListKind {
			m := map[string]bool{}
			for _, el := range args[1].AsList().Elements() {
				s, ok := stringLit(el)
				if !ok {
					return nil, false
				}
				m[s] = true
			}
			return m, len(m) > 0
		}
	}
	return nil, false
}

// requiredKinds reads e as "true only if an effect of these kinds exists".
func requiredKinds(e celast.Expr) (kindMask, bool) {
	switch e.Kind() {
	case celast.CallKind:
		c := e.AsCall()
		args := c.Args()
		switch c.FunctionName() {
		case operators.LogicalAnd:
			if m, ok := requiredKinds(args[0]); ok {
				return m, true
			}
			return requiredKinds(args[1])
		case operators.LogicalOr:
			m1, ok1 := requiredKinds(args[0])
			m2, ok2 := requiredKinds(args[1])
			if ok1 && ok2 {
				return m1 | m2, true
			}
		}
	case celast.ComprehensionKind:
		comp := e.AsComprehension()
		if !isEventEffects(comp.IterRange()) {
			return 0, false
		}
		step := comp.LoopStep()
		if step.Kind() != celast.CallKind || step.AsCall().FunctionName() != operators.LogicalOr {
			return 0, false // not exists(): all() and the like are true on no effect
		}
		sargs := step.AsCall().Args()
		if sargs[0].Kind() != celast.IdentKind || sargs[0].AsIdent() != comp.AccuVar() {
			return 0, false
		}
		return predicateKinds(sargs[1], comp.IterVar())
	}
	return 0, false
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

// predicateKinds reads the body of an exists() over effects: it needs its
// element's kind to be one of a set.
func predicateKinds(e celast.Expr, v string) (kindMask, bool) {
	if e.Kind() != celast.CallKind {
		return 0, false
	}
	c := e.AsCall()
	args := c.Args()
	switch c.FunctionName() {
	case operators.LogicalAnd:
		if m, ok := predicateKinds(args[0], v); ok {
			return m, true
		}
		return predicateKinds(args[1], v)
	case operators.LogicalOr:
		m1, ok1 := predicateKinds(args[0], v)
		m2, ok2 := predicateKinds(args[1], v)
		if ok1 && ok2 {
			return m1 | m2, true
		}
	case operators.Equals:
		for i := 0; i < 2; i++ {
			if isKindOf(args[i], v) {
				if s, ok := stringLit(args[1-i]); ok {
					return kindBit(s)
				}
			}
		}
	case operators.In:
		if isKindOf(args[0], v) && args[1].Kind() == celast.ListKind {
			var m kindMask
			for _, el := range args[1].AsList().Elements() {
				s, ok := stringLit(el)
				if !ok {
					return 0, false
				}
				b, ok := kindBit(s)
				if !ok {
					return 0, false
				}
				m |= b
			}
			return m, m != 0
		}
	}
	return 0, false
}

// isKindOf reports whether e is v.kind.
func isKindOf(e celast.Expr, v string) bool { return isFieldOf(e, v, "kind") }

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
