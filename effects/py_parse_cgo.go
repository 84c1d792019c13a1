//go:build cgo

package effects

/*
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>

// The tree-sitter C API (tree_sitter/api.h of tree-sitter 0.25, which
// github.com/tree-sitter/go-tree-sitter compiles and links): the few
// declarations the walker below needs. TSNode and TSTreeCursor are
// declared as the header declares them.
typedef uint16_t TSSymbol;
typedef uint16_t TSFieldId;
typedef struct TSParser TSParser;
typedef struct TSTree TSTree;
typedef struct TSLanguage TSLanguage;
typedef struct TSNode { uint32_t context[4]; const void *id; const TSTree *tree; } TSNode;
typedef struct TSTreeCursor { const void *tree; const void *id; uint32_t context[3]; } TSTreeCursor;
TSParser *ts_parser_new(void);
void ts_parser_delete(TSParser *self);
bool ts_parser_set_language(TSParser *self, const TSLanguage *language);
TSTree *ts_parser_parse_string(TSParser *self, const TSTree *old_tree, const char *string, uint32_t length);
void ts_tree_delete(TSTree *self);
TSNode ts_tree_root_node(const TSTree *self);
TSSymbol ts_node_symbol(TSNode self);
uint32_t ts_node_start_byte(TSNode self);
uint32_t ts_node_end_byte(TSNode self);
bool ts_node_has_error(TSNode self);
TSTreeCursor ts_tree_cursor_new(TSNode node);
void ts_tree_cursor_delete(TSTreeCursor *self);
TSNode ts_tree_cursor_current_node(const TSTreeCursor *self);
TSFieldId ts_tree_cursor_current_field_id(const TSTreeCursor *self);
bool ts_tree_cursor_goto_parent(TSTreeCursor *self);
bool ts_tree_cursor_goto_next_sibling(TSTreeCursor *self);
bool ts_tree_cursor_goto_first_child(TSTreeCursor *self);
void ts_set_allocator(void *(*m)(size_t), void *(*c)(size_t, size_t), void *(*r)(void *, size_t), void (*f)(void *));
const TSLanguage *tree_sitter_python(void);

static void ahp_ts_libc_allocator(void) { ts_set_allocator(malloc, calloc, realloc, free); }

static TSParser *ahp_py_parser(void) {
	TSParser *p = ts_parser_new();
	if (p && !ts_parser_set_language(p, tree_sitter_python())) {
		ts_parser_delete(p);
		return NULL;
	}
	return p;
}

// One node of the tree in preorder: its kind, its field in its parent,
// its bytes and its depth.
typedef struct { uint16_t kind, field; uint32_t start, end, depth; } ahp_pynode;

// ahp_py_parse parses src and writes the tree in preorder into *out (a
// malloc'd array of *n nodes, freed by the caller). It returns 0, -1 when
// no tree was had, -2 when the tree is deeper than max_depth, -3 when
// memory ran out.
static int ahp_py_parse(TSParser *p, const char *src, uint32_t len, uint32_t max_depth,
		ahp_pynode **out, uint32_t *n, bool *has_error) {
	*out = NULL;
	*n = 0;
	TSTree *t = ts_parser_parse_string(p, NULL, src, len);
	if (!t) return -1;
	TSNode root = ts_tree_root_node(t);
	*has_error = ts_node_has_error(root);
	TSTreeCursor c = ts_tree_cursor_new(root);
	uint32_t cap = 256, count = 0, depth = 0;
	int rc = 0;
	ahp_pynode *buf = malloc(cap * sizeof *buf);
	if (!buf) { rc = -3; goto done; }
	for (;;) {
		if (count == cap) {
			cap *= 2;
			ahp_pynode *nb = realloc(buf, cap * sizeof *buf);
			if (!nb) { rc = -3; goto done; }
			buf = nb;
		}
		TSNode nd = ts_tree_cursor_current_node(&c);
		ahp_pynode *r = &buf[count++];
		r->kind = ts_node_symbol(nd);
		r->field = ts_tree_cursor_current_field_id(&c);
		r->start = ts_node_start_byte(nd);
		r->end = ts_node_end_byte(nd);
		r->depth = depth;
		if (depth > max_depth) { rc = -2; goto done; }
		if (ts_tree_cursor_goto_first_child(&c)) { depth++; continue; }
		while (!ts_tree_cursor_goto_next_sibling(&c)) {
			if (!ts_tree_cursor_goto_parent(&c)) goto done;
			depth--;
		}
	}
done:
	ts_tree_cursor_delete(&c);
	ts_tree_delete(t);
	if (rc != 0) { free(buf); return rc; }
	*out = buf;
	*n = count;
	return 0;
}
*/
import "C"

import (
	"runtime"
	"unsafe"

	ts "github.com/tree-sitter/go-tree-sitter"
	tspython "github.com/tree-sitter/tree-sitter-python/bindings/go"
)

// pyMaxTreeDepth is how deeply nested a Python syntax tree may be before
// the code is an Unknown (limit) effect.
const pyMaxTreeDepth = 256

// pyParserName names the Python parser of this build in reasons.
const pyParserName = "tree-sitter-python"

// pyKindInfo is a node kind of the grammar: its name and whether it is
// named (a syntax node rather than punctuation or a keyword).
type pyKindInfo struct {
	name  string
	named bool
}

var (
	// The grammar's node kinds and field names by id, read once.
	pyKinds, pyFields = pyTables()
	// pyParsers keeps parsers for reuse (a parser serves one parse at a
	// time); past its capacity they are deleted.
	pyParsers = make(chan *C.TSParser, 2*runtime.GOMAXPROCS(0)+2)
)

func init() {
	// go-tree-sitter routes every allocation of the C library through a
	// Go callback that calls C's malloc: two cgo transitions per
	// allocation, most of the parse's cost. The library is given libc's
	// allocator directly, which is what those callbacks use.
	C.ahp_ts_libc_allocator()
}

func pyTables() ([]pyKindInfo, []string) {
	lang := ts.NewLanguage(tspython.Language())
	kinds := make([]pyKindInfo, lang.NodeKindCount())
	for i := range kinds {
		kinds[i] = pyKindInfo{lang.NodeKindForId(uint16(i)), lang.NodeKindIsNamed(uint16(i))}
	}
	fields := make([]string, lang.FieldCount()+1)
	for i := 1; i < len(fields); i++ {
		fields[i] = lang.FieldNameForId(uint16(i))
	}
	return kinds, fields
}

// parsePython parses src with tree-sitter-python and copies the tree into
// pyNodes, so that the analysis itself is plain Go. It returns nil and a
// reason when no tree could be had. A tree with syntax errors is returned
// with bad set on its root (and "ERROR" nodes where they are). Anonymous
// nodes (punctuation, keywords) are kept only when the grammar gives them
// a field (a binary operator's "operator").
func parsePython(src []byte) (*pyNode, string) {
	var p *C.TSParser
	select {
	case p = <-pyParsers:
	default:
		if p = C.ahp_py_parser(); p == nil {
			return nil, "the Python parser could not be set up"
		}
	}
	defer func() {
		select {
		case pyParsers <- p:
		default:
			C.ts_parser_delete(p)
		}
	}()
	if len(src) == 0 {
		src = []byte{'\n'}
	}
	var (
		out      *C.ahp_pynode
		n        C.uint32_t
		hasError C.bool
	)
	csrc := C.CBytes(src)
	defer C.free(csrc)
	switch C.ahp_py_parse(p, (*C.char)(csrc), C.uint32_t(len(src)), pyMaxTreeDepth, &out, &n, &hasError) {
	case 0:
	case -2:
		return nil, "Python code nested too deeply"
	default:
		return nil, "the Python parser returned no tree"
	}
	defer C.free(unsafe.Pointer(out))
	recs := unsafe.Slice(out, int(n))
	text := string(src)
	nodes := make([]pyNode, len(recs))
	stack := make([]*pyNode, 0, 32)
	var root *pyNode
	for i := range recs {
		r := &recs[i]
		nd := &nodes[i]
		if int(r.kind) < len(pyKinds) {
			nd.kind, nd.named = pyKinds[r.kind].name, pyKinds[r.kind].named
		} else {
			nd.kind, nd.named, nd.bad = "ERROR", true, true
		}
		if int(r.field) < len(pyFields) {
			nd.field = pyFields[r.field]
		}
		if start, end := int(r.start), int(r.end); start <= end && end <= len(text) {
			nd.text = text[start:end] // a substring: no copy
		}
		if nd.kind == "identifier" || nd.kind == "dotted_name" {
			nd.text = pyIdent(nd.text)
		}
		d := int(r.depth)
		if d > len(stack) {
			return nil, "the Python parser returned a malformed tree"
		}
		stack = stack[:d]
		if d == 0 {
			root = nd
		} else if nd.named || nd.field != "" || nd.kind == "string_start" {
			parent := stack[d-1]
			parent.kids = append(parent.kids, nd)
		}
		stack = append(stack, nd)
	}
	if root == nil {
		return nil, "the Python parser returned no tree"
	}
	root.bad = root.bad || bool(hasError)
	return root, ""
}
