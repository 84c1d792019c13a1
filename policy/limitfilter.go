package policy

import (
	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
)

// The self_protection pack blocks an event whose reading stopped at a
// limit with one rule per limit: self_protection_limit(payload, config) ==
// "size", == "nesting", and so on. On an ordinary event no limit is
// reached, and each of those rules is false. Like the effect filters
// (kindfilter.go), a condition that can only be true when a limit was
// reached is marked at load; at evaluation, when the event's reading
// reached none (the same self_protection_limit the rule would call, read
// once per evaluation), the rule is false without running its CEL.

// needsLimit reports whether a checked condition can only be true when
// self_protection_limit(payload, config) names a limit: it is, or has as
// one side of a &&, an equality of that call with a non-empty string
// constant (either way round). "false && error" and "error && false" are
// both false in CEL, so one false side of a && makes the whole false.
func needsLimit(a *cel.Ast) bool {
	if a == nil || a.NativeRep() == nil {
		return false
	}
	return limitRequired(a.NativeRep().Expr())
}

func limitRequired(e celast.Expr) bool {
	if e.Kind() != celast.CallKind {
		return false
	}
	c := e.AsCall()
	args := c.Args()
	switch c.FunctionName() {
	case operators.LogicalAnd:
		return limitRequired(args[0]) || limitRequired(args[1])
	case operators.Equals:
		return isLimitCall(args[0]) && isNonEmptyString(args[1]) ||
			isLimitCall(args[1]) && isNonEmptyString(args[0])
	}
	return false
}

// isLimitCall reports whether e is self_protection_limit(payload, config)
// on the evaluation's own payload and configuration.
func isLimitCall(e celast.Expr) bool {
	if e.Kind() != celast.CallKind {
		return false
	}
	c := e.AsCall()
	if c.FunctionName() != "self_protection_limit" || c.IsMemberFunction() || len(c.Args()) != 2 {
		return false
	}
	return isIdent(c.Args()[0], "payload") && isIdent(c.Args()[1], "config")
}

func isNonEmptyString(e celast.Expr) bool {
	if e.Kind() != celast.LiteralKind {
		return false
	}
	s, ok := e.AsLiteral().(types.String)
	return ok && s != ""
}

// limitReached is what self_protection_limit(payload, config) returns for
// this evaluation ("" when the reading reached no limit).
func (c *evalCtx) limitReached() string {
	return readAction(c.payloadVal(), guardFor(c.set.config)).limitReached()
}
