package policy

import (
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"
)

// A path_match whose patterns are known when the policy loads (a list
// literal, or a pack parameter: path_match(e.path, config.credential_paths))
// is planned as a pathSetNode: the patterns are split once, and a pattern
// is only tried on a path that holds each of its literal elements (".ssh"
// of "**/.ssh/id_*"), which most paths of a long script do not.

// pathSet is a compiled list of path_match patterns.
type pathSet []pathPattern

// pathPattern is one pattern split into elements, with the elements that
// hold no glob (each must be an element of a matching path).
type pathPattern struct {
	elems []string
	lits  []string
}

// compilePathSet splits pats; the empty pattern, which matches nothing, is
// left out.
func compilePathSet(pats []string) pathSet {
	out := make(pathSet, 0, len(pats))
	for _, p := range pats {
		if p == "" {
			continue
		}
		pp := pathPattern{elems: strings.Split(p, "/")}
		for _, e := range pp.elems {
			if e != "" && e != "**" && !strings.ContainsAny(e, `*?[\`) {
				pp.lits = append(pp.lits, e)
			}
		}
		out = append(out, pp)
	}
	return out
}

// match is path_match(p, the set's patterns).
func (ps pathSet) match(p string) bool {
	if p == "" {
		return false
	}
next:
	for i := range ps {
		for _, l := range ps[i].lits {
			if !strings.Contains(p, l) {
				continue next
			}
		}
		if matchElemsIn(ps[i].elems, p, false) {
			return true
		}
	}
	return false
}

// constStrings returns the strings of a constant CEL list of strings.
func constStrings(v ref.Val) ([]string, bool) {
	els, ok := constList(v)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(els))
	for _, el := range els {
		s, ok := el.(types.String)
		if !ok {
			return nil, false
		}
		out = append(out, string(s))
	}
	return out, true
}

// constList returns the elements of a constant CEL list.
func constList(v ref.Val) ([]ref.Val, bool) {
	l, ok := v.(traits.Lister)
	if !ok {
		return nil, false
	}
	n, ok := l.Size().(types.Int)
	if !ok {
		return nil, false
	}
	out := make([]ref.Val, 0, int(n))
	for i := types.Int(0); i < n; i++ {
		out = append(out, l.Get(i))
	}
	return out, true
}

// pathSetNode evaluates path_match(subject, patterns known at load).
type pathSetNode struct {
	id      int64
	subject interpreter.InterpretableV2
	set     pathSet
}

// ID implements interpreter.Interpretable.
func (n *pathSetNode) ID() int64 { return n.id }

// Eval implements interpreter.Interpretable.
func (n *pathSetNode) Eval(a interpreter.Activation) ref.Val { return n.match(n.subject.Eval(a)) }

// Exec implements interpreter.InterpretableV2.
func (n *pathSetNode) Exec(f *interpreter.ExecutionFrame) ref.Val { return n.match(n.subject.Exec(f)) }

func (n *pathSetNode) match(v ref.Val) ref.Val {
	s, bad := stringArg(v)
	if bad != nil {
		return bad
	}
	return types.Bool(n.set.match(string(s)))
}
