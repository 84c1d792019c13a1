package policy

import (
	"fmt"
	"regexp"
	"sync/atomic"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
)

// compileMatches is a planner decorator that compiles the pattern of every
// s.matches('constant') call once, when the program is built, and replaces
// the call with a node that evaluates without allocating and skips the
// regular expression when the text lacks the literals every match needs
// (see prefilter). A bad pattern is a load error. Patterns are RE2 (Go
// regexp), as CEL specifies.
func compileMatches(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	call, ok := i.(interpreter.InterpretableCall)
	if !ok || call.Function() != "matches" || len(call.Args()) != 2 {
		return i, nil
	}
	pat, ok := call.Args()[1].(interpreter.InterpretableConst)
	if !ok {
		// A pattern known only when the rule runs: a pack's parameter
		// (e.program.matches(config.filesystem_makers)) is the same string
		// on every call, so the node keeps the last one compiled.
		return &dynMatchNode{id: call.ID(), subject: call.Args()[0], pattern: call.Args()[1]}, nil
	}
	s, ok := pat.Value().(types.String)
	if !ok {
		return i, nil
	}
	re, err := regexp.Compile(string(s))
	if err != nil {
		return nil, fmt.Errorf("matches: bad pattern %q: %w", string(s), err)
	}
	return &matchNode{id: call.ID(), subject: call.Args()[0], re: re, pre: newPrefilter(string(s))}, nil
}

// matchNode evaluates subject.matches(re) with a precompiled pattern.
type matchNode struct {
	id      int64
	subject interpreter.InterpretableV2
	re      *regexp.Regexp
	pre     prefilter
}

// ID implements interpreter.Interpretable.
func (n *matchNode) ID() int64 { return n.id }

// Eval implements interpreter.Interpretable.
func (n *matchNode) Eval(a interpreter.Activation) ref.Val { return n.match(n.subject.Eval(a)) }

// Exec implements interpreter.InterpretableV2.
func (n *matchNode) Exec(f *interpreter.ExecutionFrame) ref.Val {
	return n.match(n.subject.Exec(f))
}

// stringArg returns v as a string, or what a call given v instead returns:
// v itself when it is unknown or an error, else a no-such-overload error.
func stringArg(v ref.Val) (types.String, ref.Val) {
	s, ok := v.(types.String)
	if ok {
		return s, nil
	}
	if types.IsUnknownOrError(v) {
		return "", v
	}
	return "", types.MaybeNoSuchOverloadErr(v)
}

func (n *matchNode) match(v ref.Val) ref.Val {
	s, bad := stringArg(v)
	if bad != nil {
		return bad
	}
	if !n.pre.mayMatch(string(s)) {
		return types.False
	}
	return types.Bool(n.re.MatchString(string(s)))
}

// dynMatchNode evaluates subject.matches(pattern) where the pattern is an
// expression, not a constant. It keeps the last pattern it compiled, so a
// parameter's pattern, read for every effect of every event, is compiled
// once instead of on each call; a bad pattern is an error value, as in
// CEL's own matches.
type dynMatchNode struct {
	id      int64
	subject interpreter.InterpretableV2
	pattern interpreter.InterpretableV2
	last    atomic.Pointer[compiledPattern]
}

// compiledPattern is a pattern's text and its compiled form.
type compiledPattern struct {
	src string
	re  *regexp.Regexp
	pre prefilter
}

// ID implements interpreter.Interpretable.
func (n *dynMatchNode) ID() int64 { return n.id }

// Eval implements interpreter.Interpretable.
func (n *dynMatchNode) Eval(a interpreter.Activation) ref.Val {
	return n.match(n.subject.Eval(a), n.pattern.Eval(a))
}

// Exec implements interpreter.InterpretableV2.
func (n *dynMatchNode) Exec(f *interpreter.ExecutionFrame) ref.Val {
	return n.match(n.subject.Exec(f), n.pattern.Exec(f))
}

func (n *dynMatchNode) match(v, p ref.Val) ref.Val {
	s, bad := stringArg(v)
	if bad != nil {
		return bad
	}
	ps, bad := stringArg(p)
	if bad != nil {
		return bad
	}
	c := n.last.Load()
	if c == nil || c.src != string(ps) {
		re, err := regexp.Compile(string(ps))
		if err != nil {
			return types.WrapErr(err)
		}
		c = &compiledPattern{src: string(ps), re: re, pre: newPrefilter(string(ps))}
		n.last.Store(c)
	}
	if !c.pre.mayMatch(string(s)) {
		return types.False
	}
	return types.Bool(c.re.MatchString(string(s)))
}
