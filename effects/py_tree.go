package effects

import "golang.org/x/text/unicode/norm"

// pyIdent is an identifier as Python reads it: NFKC-normalised (PEP 3131),
// so that "ｅｘｅｃ" is exec.
func pyIdent(t string) string {
	for i := 0; i < len(t); i++ {
		if t[i] >= 0x80 {
			return norm.NFKC.String(t)
		}
	}
	return t
}

// pyNode is a node of a Python syntax tree, copied out of the parser so
// that the analysis is plain Go: kind is the grammar's node type
// ("call", "identifier", "string", ...), field the name its parent gives
// it ("function", "arguments", ...), text its source.
type pyNode struct {
	kind  string
	field string
	text  string
	named bool
	bad   bool
	kids  []*pyNode
}

// child returns the first child with field name f, nil if none.
func (n *pyNode) child(f string) *pyNode {
	if n == nil {
		return nil
	}
	for _, k := range n.kids {
		if k.field == f {
			return k
		}
	}
	return nil
}

// namedKids returns the named children (comments left out).
func (n *pyNode) namedKids() []*pyNode {
	if n == nil {
		return nil
	}
	out := make([]*pyNode, 0, len(n.kids))
	for _, k := range n.kids {
		if k.named && k.kind != "comment" {
			out = append(out, k)
		}
	}
	return out
}
