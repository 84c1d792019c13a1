package effects

import "strings"

// pyMaxTreeDepth is how deeply nested a Python syntax tree may be before
// the code is an Unknown (limit) effect.
const pyMaxTreeDepth = 256

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

// named returns the named children.
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

// dump writes the tree as an S-expression (for tests and debugging).
func (n *pyNode) dump(b *strings.Builder) {
	if !n.named {
		return
	}
	b.WriteByte('(')
	if n.field != "" {
		b.WriteString(n.field + ":")
	}
	b.WriteString(n.kind)
	if len(n.kids) == 0 {
		b.WriteString(" " + n.text)
	}
	for _, k := range n.kids {
		if k.named {
			b.WriteByte(' ')
			k.dump(b)
		}
	}
	b.WriteByte(')')
}
