//go:build cgo

package effects

import (
	"sync"

	ts "github.com/tree-sitter/go-tree-sitter"
	tspython "github.com/tree-sitter/tree-sitter-python/bindings/go"
)

// pyParserName names the Python parser of this build in reasons.
const pyParserName = "tree-sitter-python"

var (
	pyLang    = ts.NewLanguage(tspython.Language())
	pyParsers = sync.Pool{New: func() any {
		p := ts.NewParser()
		if err := p.SetLanguage(pyLang); err != nil {
			return nil
		}
		return p
	}}
)

// parsePython parses src with tree-sitter-python and copies the tree into
// pyNodes, so that the analysis itself needs no cgo. It returns nil and a
// reason when no tree could be had; a tree with syntax errors is returned
// with hasError set on the nodes tree-sitter could not read.
func parsePython(src []byte) (*pyNode, string) {
	p, _ := pyParsers.Get().(*ts.Parser)
	if p == nil {
		return nil, "the Python parser could not be set up"
	}
	defer pyParsers.Put(p)
	tree := p.Parse(src, nil)
	if tree == nil {
		return nil, "the Python parser returned no tree"
	}
	defer tree.Close()
	c := tree.Walk()
	defer c.Close()
	root := &pyNode{}
	if !copyPyTree(c, string(src), root, 0) {
		return nil, "Python code nested too deeply"
	}
	return root, ""
}

// copyPyTree copies the node under the cursor and its descendants into n.
func copyPyTree(c *ts.TreeCursor, src string, n *pyNode, depth int) bool {
	if depth > pyMaxTreeDepth {
		return false
	}
	node := c.Node()
	n.kind = node.Kind()
	n.named = node.IsNamed()
	n.bad = node.IsError() || node.IsMissing()
	start, end := node.StartByte(), node.EndByte()
	if end > uint(len(src)) || start > end {
		start, end = 0, 0
	}
	n.text = src[start:end] // a substring: no copy
	if !c.GotoFirstChild() {
		return true
	}
	for {
		k := &pyNode{field: c.FieldName()}
		if !copyPyTree(c, src, k, depth+1) {
			return false
		}
		n.kids = append(n.kids, k)
		if !c.GotoNextSibling() {
			break
		}
	}
	c.GotoParent()
	return true
}
