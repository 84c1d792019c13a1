package policy

import (
	"slices"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
)

// A command_in whose commands are known when the policy loads (a pack
// parameter, command_in(e.program, e.argv, config.credential_printers), or
// a list literal) is planned as a commandSetNode: the commands are grouped
// by program once, so a call looks up its program and compares argument
// words only for that program's commands, instead of converting every
// command of the list to Go strings on every call (a long script's run
// effects made this one function the most expensive of the default packs).

// commandSet maps a program to the other words of each of its commands.
type commandSet map[string][][]string

// compileCommandSet groups cmds (each a program then words) by program; an
// empty command, which matches nothing, is left out.
func compileCommandSet(cmds [][]string) commandSet {
	out := commandSet{}
	for _, c := range cmds {
		if len(c) == 0 {
			continue
		}
		out[c[0]] = append(out[c[0]], c[1:])
	}
	return out
}

// match is command_in(prog, argv, the set's commands).
func (cs commandSet) match(prog string, argv []string) bool { return anyCommand(cs[prog], argv) }

// anyCommand reports whether one of cmds (the words after a program) has
// every one of its words among argv.
func anyCommand(cmds [][]string, argv []string) bool {
	for _, words := range cmds {
		if allIn(words, argv) {
			return true
		}
	}
	return false
}

// allIn reports whether every one of words is among argv.
func allIn(words, argv []string) bool {
	for _, w := range words {
		if !slices.Contains(argv, w) {
			return false
		}
	}
	return true
}

// configCommands returns a parameter's value as commands when it is a list
// whose every element command_in reads as a list of words (a list of
// strings, a string, or null), the way celCommandIn reads it.
func configCommands(v any) ([][]string, bool) {
	l := needList(v)
	if l == nil {
		return nil, false
	}
	out := make([][]string, 0, len(l))
	for _, x := range l {
		switch w := x.(type) {
		case nil:
			out = append(out, nil)
		case string:
			out = append(out, []string{w})
		default:
			ws, ok := configStringsOf(w)
			if !ok {
				return nil, false
			}
			out = append(out, ws)
		}
	}
	return out, true
}

// configStringsOf returns v as strings when it is a list of strings.
func configStringsOf(v any) ([]string, bool) {
	l := needList(v)
	if l == nil {
		return nil, false
	}
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// constCommands returns the commands of a constant CEL list, read the way
// celCommandIn reads them.
func constCommands(v ref.Val) ([][]string, bool) {
	els, ok := constList(v)
	if !ok {
		return nil, false
	}
	out := make([][]string, 0, len(els))
	for _, el := range els {
		ws, bad := celStringList(el)
		if bad != nil {
			return nil, false
		}
		out = append(out, ws)
	}
	return out, true
}

// commandSetNode evaluates command_in(program, argv, commands known at load).
type commandSetNode struct {
	id         int64
	prog, argv interpreter.InterpretableV2
	set        commandSet
}

// ID implements interpreter.Interpretable.
func (n *commandSetNode) ID() int64 { return n.id }

// Eval implements interpreter.Interpretable.
func (n *commandSetNode) Eval(a interpreter.Activation) ref.Val {
	p := n.prog.Eval(a)
	if types.IsUnknownOrError(p) {
		return p
	}
	return n.match(p, n.argv.Eval(a))
}

// Exec implements interpreter.InterpretableV2.
func (n *commandSetNode) Exec(f *interpreter.ExecutionFrame) ref.Val {
	p := n.prog.Exec(f)
	if types.IsUnknownOrError(p) {
		return p
	}
	return n.match(p, n.argv.Exec(f))
}

// match is the call on the program's and argv's values (p already checked
// for unknowns and errors, as CEL checks arguments in order).
func (n *commandSetNode) match(p, v ref.Val) ref.Val {
	if types.IsUnknownOrError(v) {
		return v
	}
	prog, ok := p.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(p)
	}
	// A program no command names needs no look at its arguments, as
	// long as they are of a type command_in takes.
	cmds, named := n.set[string(prog)]
	if ss, ok := v.Value().([]string); ok {
		if !named {
			return types.False
		}
		return types.Bool(anyCommand(cmds, ss))
	}
	argv, bad := celStringList(v)
	if bad != nil {
		return bad
	}
	return types.Bool(n.set.match(string(prog), argv))
}
