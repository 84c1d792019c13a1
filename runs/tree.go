package runs

import (
	"io"
	"strings"
	"unicode"
)

// node is one line of a printed tree and the lines below it.
type node struct {
	text string
	kids []*node
}

func (n *node) add(text string) *node {
	k := &node{text: text}
	n.kids = append(n.kids, k)
	return k
}

// render writes n and its descendants with box-drawing connectors.
func (n *node) render(w io.Writer) error {
	var b strings.Builder
	b.WriteString(n.text)
	b.WriteByte('\n')
	for i, k := range n.kids {
		k.renderInto(&b, "", i == len(n.kids)-1)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (n *node) renderInto(b *strings.Builder, prefix string, last bool) {
	b.WriteString(prefix)
	if last {
		b.WriteString("└─ ")
		prefix += "   "
	} else {
		b.WriteString("├─ ")
		prefix += "│  "
	}
	b.WriteString(n.text)
	b.WriteByte('\n')
	for i, k := range n.kids {
		k.renderInto(b, prefix, i == len(n.kids)-1)
	}
}

// clean makes agent-supplied text safe to print on a terminal: control
// characters (newlines and escape sequences included) and bidirectional
// overrides become spaces, and the result is clipped to n bytes.
func clean(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) {
			return ' '
		}
		return r
	}, s)
	return clip(strings.TrimSpace(s), n)
}
