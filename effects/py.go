package effects

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The Python reader walks a syntax tree (py_parse_*.go) in source order,
// following literal strings through variables, imports and aliases, and
// records what the calls it knows do. It does not run the code: a value it
// cannot compute (input, a loop variable, a function parameter, a format
// it does not evaluate) makes the effect that needs it an Unknown.

// pyKind is what the reader knows of a value.
type pyKind uint8

const (
	pyUnknown pyKind = iota // not known before run time
	pyStr                   // a string (or number) known exactly
	pyList                  // a list or tuple of values
	pyName                  // a module, function or class by qualified name
	pyObject                // an object the reader follows (socket, path, file...)
)

// pyVal is a value as far as the reader knows it. from and url carry where
// unknown data came from: a file read (from) or a download (url).
type pyVal struct {
	k    pyKind
	s    string
	pat  string // pyUnknown: the string with its unknown parts as pyHole, "" when none is known
	list []pyVal
	obj  *pyObj
	from string
	url  string
}

// pyObj is an object whose identity matters: a socket connected once and
// used later, a path, an open file, a connection.
type pyObj struct {
	typ        string           // "socket", "path", "file", "conn", "request", "response", "proc", "procs", "fd"
	path       string           // path, file: the (resolved) path
	host, port string           // socket, conn: the endpoint
	url        string           // request, response: the URL
	data       *pyVal           // request: the data it sends
	sock       *pyObj           // fd: the socket it belongs to
	pid        string           // proc: the pid ("*" for any)
	names      []string         // proc: the processes a pid from a listing may be
	shellFd    bool             // socket: duplicated onto the standard streams
	fn         *pyFunc          // func: a function the code defines (py_funcs.go)
	cls        *pyClass         // class, instance: a class the code defines
	attrs      map[string]pyVal // instance: its attributes
}

func pyS(s string) pyVal { return pyVal{k: pyStr, s: s} }

// pyHole marks a part of a string not known before run time in pyVal.pat.
const pyHole = "\x00"

// partial returns a string with holes where parts are unknown: the
// string itself when known, its pattern when partly known.
func (v pyVal) partial() (string, bool) {
	if s, ok := v.str(); ok {
		return s, true
	}
	if v.k == pyUnknown && v.pat != "" {
		return v.pat, true
	}
	return pyHole, false
}

// pyPat builds a partly known string from parts; it is known when no part
// has a hole.
func pyPat(parts []pyVal) pyVal {
	var b strings.Builder
	known := true
	var taint pyVal
	for _, v := range parts {
		s, ok := v.partial()
		if !ok || strings.Contains(s, pyHole) {
			known = false
		}
		b.WriteString(s)
		taint.from += v.from
		taint.url += v.url
	}
	if known {
		return pyS(b.String())
	}
	taint.pat = b.String()
	return taint
}
func pyObjV(o *pyObj) pyVal { return pyVal{k: pyObject, obj: o} }
func (v pyVal) str() (string, bool) {
	switch {
	case v.k == pyStr:
		return v.s, true
	case v.k == pyObject && v.obj.typ == "path":
		return v.obj.path, true
	}
	return "", false
}

// pyScope maps names to values; function bodies get their own scope whose
// misses fall back to the module's.
type pyScope struct {
	vars   map[string]pyVal
	parent *pyScope
	class  *pyClass // a class body's scope
}

func (sc *pyScope) get(name string) (pyVal, bool) {
	for ; sc != nil; sc = sc.parent {
		if v, ok := sc.vars[name]; ok {
			return v, true
		}
	}
	return pyVal{}, false
}

// py is one Python reading.
type py struct {
	s        *state
	scope    *pyScope
	cond     int      // > 0 inside a branch, loop, try or function body
	star     []string // modules imported with "from M import *"
	sockets  []*pyObj
	ran      []string // programs started, for reverse-shell recognition
	procs    []string // in a loop over psutil.process_iter(): the processes it picks
	steps    int
	runners  bool      // the code names a module or builtin that runs programs or code
	funcs    []*pyFunc // functions the code defines (py_funcs.go)
	frame    *pyFrame  // the call of a local function being read
	depth    int       // calls of local functions being read
	inlines  int       // calls of local functions read
	limited  bool      // a bound of local calls was reached
	condBase int       // > 0 when the call of the local function being read may not run
}

var (
	// pyExec2RE finds a Python 2 exec statement (exec followed by an
	// expression, not a call) at the start of a statement.
	pyExec2RE = regexp.MustCompile(`(?m)(?:^|;)[ \t]*exec[ \t]+[^\s(=.,:;)]`)
	// pyRunnerTextRE finds, in the text of Python code, a module or a
	// builtin that runs programs or code: a call computed at run time in
	// such code may be one of them.
	pyRunnerTextRE = regexp.MustCompile(`\b(?:os|posix|nt|subprocess|pty|ctypes|cffi|commands|importlib|runpy|multiprocessing|asyncio|popen2|exec|eval|compile|__import__|__builtins__|builtins|system|popen|spawn[a-z]*|exec[lv]p?e?)\b`)
	// pyRunnerFuncRE names the functions that run a program or code.
	pyRunnerFuncRE = regexp.MustCompile(`^(?:os\.(?:system|popen|exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?)|subprocess\.[A-Za-z_]+|pty\.spawn|asyncio\.create_subprocess_(?:shell|exec)|exec|eval|compile|__import__|importlib\.import_module|runpy\.run_(?:path|module)|pickle\.loads?|marshal\.loads|ctypes\.[A-Za-z_.]+)$`)
)

// pyMaxUnroll is the longest literal list a loop body is read once per
// element of.
const pyMaxUnroll = 8

// pyMaxSteps bounds the nodes one reading visits (a limit Unknown past it).
const pyMaxSteps = 200000

func (s *state) python(code string) {
	root, why := parsePython([]byte(code))
	if root == nil {
		if strings.Contains(why, "too deeply") {
			s.unknown(true, "python: %s", why)
		} else {
			// The code runs, but nothing of it was read.
			s.opaque("python", "", "python: %s", why)
		}
		return
	}
	prevCwd := s.ctx.Cwd
	defer func() { s.ctx.Cwd = prevCwd }()
	p := &py{s: s, scope: &pyScope{vars: map[string]pyVal{}}, runners: pyRunnerTextRE.MatchString(code)}
	if hasBad(root, 0) {
		s.unknown(false, "python: part of the code is not valid Python as %s reads it", pyParserName)
		if pyExec2RE.MatchString(code) {
			// Python 2 runs exec EXPR (exec sys.stdin.read()), which the
			// grammar does not accept beyond a name or a string.
			s.opaque("python", "", "python: a Python 2 exec statement the grammar does not read")
		}
	}
	p.walk(root)
	p.readUncalled()
	p.finish()
}

func hasBad(n *pyNode, depth int) bool {
	if n.bad || n.kind == "ERROR" {
		return true
	}
	for _, k := range n.kids {
		if hasBad(k, depth+1) {
			return true
		}
	}
	return false
}

// noteShellLine notes the program a shell command line starts (its first
// word) and the shell itself, for reverse-shell recognition.
func (p *py) noteShellLine(line string) {
	p.started("sh")
	if f := strings.Fields(line); len(f) > 0 {
		p.started(path.Base(f[0]))
	}
}

// procNames returns the strings a loop body compares with (==, in; a
// literal, or a name whose value is known): the names of the processes a
// loop over every process picks. A string compared with != or not in
// picks every other process: "*".
func (p *py) procNames(body *pyNode) []string {
	var out []string
	add := func(w string) {
		if w != "" && !strings.ContainsAny(w, " \t\n") && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	var walk func(n *pyNode, inCmp bool)
	walk = func(n *pyNode, inCmp bool) {
		if n == nil || len(out) >= 16 {
			return
		}
		if n.kind == "comparison_operator" {
			inCmp = true
			for _, k := range n.kids {
				if !k.named && (k.text == "!=" || k.text == "not in" || k.text == "not") {
					add("*")
				}
			}
			for _, k := range n.namedKids() {
				if k.kind != "identifier" {
					continue
				}
				// kill_named(name): the name compared with is a parameter.
				v, _ := p.scope.get(k.text)
				if v.k == pyStr {
					add(v.s)
				}
				for _, e := range v.list {
					if e.k == pyStr {
						add(e.s)
					}
				}
			}
		}
		if n.kind == "subscript" { // proc.info["name"]: a key, not a name
			walk(n.child("value"), inCmp)
			return
		}
		if inCmp && n.kind == "string" {
			var b strings.Builder
			for _, k := range n.kids {
				if k.kind == "string_content" {
					b.WriteString(k.text)
				}
			}
			add(b.String())
			return
		}
		for _, k := range n.kids {
			walk(k, inCmp)
		}
	}
	walk(body, false)
	if slices.Contains(out, "*") {
		return []string{"*"}
	}
	return out
}

// started notes a program run, when it is one that reads commands (a
// shell or an interpreter), for reverse-shell recognition.
func (p *py) started(prog string) {
	if !commandReaders[strings.TrimRight(prog, "0123456789.")] || slices.Contains(p.ran, prog) {
		return
	}
	p.ran = append(p.ran, prog)
}

// commandReaders are programs that read commands from their input.
var commandReaders = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true,
	"csh": true, "tcsh": true, "fish": true, "ash": true, "busybox": true, "python": true, "perl": true,
	"ruby": true, "php": true, "node": true, "pwsh": true, "powershell": true, "cmd": true, "cmd.exe": true,
	"lua": true, "irb": true, "socat": true, "nc": true, "ncat": true, "telnet": true}

// finish recognises a reverse shell: a connected socket duplicated onto
// the standard streams (or given to a process as its streams) while a
// program runs means the program reads commands from the network and
// sends its output there.
func (p *py) finish() {
	if len(p.ran) == 0 {
		return
	}
	for _, o := range p.sockets {
		if !o.shellFd || (o.host == "" && o.port == "") {
			continue
		}
		for _, prog := range p.ran {
			p.s.add(Effect{Kind: Download, Program: prog, Detail: &Detail{Host: o.host, Port: o.port, Into: prog}})
			p.s.add(Effect{Kind: Send, Program: prog, Detail: &Detail{Host: o.host, Port: o.port, Source: "output"}})
		}
	}
}

// snippet is a short quote of code for reasons.
func snippet(t string) string {
	t = strings.Join(strings.Fields(t), " ")
	if len(t) > 80 {
		cut := 80
		for cut > 0 && t[cut]&0xC0 == 0x80 {
			cut--
		}
		t = t[:cut] + "…"
	}
	return t
}

func (p *py) unknownf(format string, args ...any) {
	p.s.unknown(false, "python: "+format, args...)
}

func (p *py) set(name string, v pyVal) {
	if p.cond > 0 {
		if old, ok := p.scope.vars[name]; ok && !(old.k == pyStr && v.k == pyStr && old.s == v.s) &&
			!(old.k == pyName && v.k == pyName && old.s == v.s) && !(old.k == pyObject && v.k == pyObject && old.obj == v.obj) {
			// Assigned differently on a path that may or may not run:
			// the value at a later use is not known.
			v = pyVal{from: v.from + old.from, url: v.url + old.url}
		}
	}
	p.scope.vars[name] = v
}

// walk reads statements.
func (p *py) walk(n *pyNode) {
	if n == nil {
		return
	}
	p.steps++
	if p.steps > pyMaxSteps {
		if p.steps == pyMaxSteps+1 {
			p.s.unknown(true, "python: more than %d syntax nodes", pyMaxSteps)
		}
		return
	}
	switch n.kind {
	case "return_statement":
		var v pyVal
		if kids := n.namedKids(); len(kids) == 1 {
			v = p.eval(kids[0])
		} else {
			for _, k := range kids {
				p.stmtOrExpr(k)
			}
		}
		p.ret(v)
	case "module", "block", "expression_statement", "else_clause", "finally_clause",
		"delete_statement", "raise_statement", "assert_statement", "print_statement":
		for _, k := range n.namedKids() {
			p.stmtOrExpr(k)
		}
	case "import_statement":
		for _, k := range n.namedKids() {
			switch k.kind {
			case "dotted_name":
				first, _, _ := strings.Cut(k.text, ".")
				p.scope.vars[first] = pyVal{k: pyName, s: first}
			case "aliased_import":
				p.scope.vars[k.child("alias").text] = pyVal{k: pyName, s: dotted(k.child("name"))}
			}
		}
	case "import_from_statement":
		mod := n.child("module_name")
		if mod == nil || mod.kind != "dotted_name" {
			return // relative import: the project's own code
		}
		m := dotted(mod)
		for _, k := range n.kids {
			switch {
			case k.kind == "wildcard_import":
				p.star = append(p.star, m)
			case k.field == "name" && k.kind == "dotted_name":
				p.scope.vars[k.text] = pyVal{k: pyName, s: m + "." + dotted(k)}
			case k.field == "name" && k.kind == "aliased_import":
				p.scope.vars[k.child("alias").text] = pyVal{k: pyName, s: m + "." + dotted(k.child("name"))}
			}
		}
	case "future_import_statement", "pass_statement", "comment", "break_statement", "continue_statement",
		"global_statement", "nonlocal_statement":
	case "exec_statement":
		// Python 2 runs the string: a literal one is read as code, any
		// other runs unread (as exec(x) does).
		if kids := n.namedKids(); len(kids) > 0 {
			if code, ok := p.eval(kids[0]).str(); ok {
				p.unknownf("Python 2 exec statement: %s", snippet(n.text))
				p.s.nested("python", func() { p.s.python(code) })
				break
			}
		}
		p.s.opaque("python", "", "python: Python 2 exec statement: %s", snippet(n.text))
	case "if_statement", "elif_clause", "while_statement":
		p.eval(n.child("condition"))
		p.cond++
		for _, k := range n.namedKids() {
			if k.field != "condition" {
				p.walk(k)
			}
		}
		p.cond--
	case "for_statement":
		it := p.eval(n.child("right"))
		p.cond++
		elem := pyVal{from: it.from, url: it.url}
		prevProcs := p.procs
		if names, ok := p.loopProcs(it, n.child("body")); ok {
			// A loop over every process, or over pids listed: the
			// names it compares with are the processes it signals
			// ("sshd" in `if p.name() == "sshd": p.kill()`); none is
			// every process the listing names (py_procs.go).
			p.procs = names
			if it.k == pyObject {
				elem = pyObjV(&pyObj{typ: "proc", pid: "*"})
			} else {
				elem.from += pidsMark(names)
			}
		}
		if it.k == pyList && len(it.list) > 0 && len(it.list) <= pyMaxUnroll && len(p.procs) == len(prevProcs) {
			// A loop over a short known list: the body once per element.
			for _, e := range it.list {
				p.bind(n.child("left"), e)
				p.walk(n.child("body"))
			}
		} else {
			p.assign(n.child("left"), elem)
			p.walk(n.child("body"))
		}
		p.walk(n.child("alternative"))
		p.procs = prevProcs
		p.cond--
	case "try_statement", "except_clause", "except_group_clause", "match_statement", "case_clause":
		p.cond++
		for _, k := range n.namedKids() {
			p.stmtOrExpr(k)
		}
		p.cond--
	case "with_statement":
		for _, k := range n.namedKids() {
			if k.kind == "with_clause" {
				for _, item := range k.namedKids() {
					v := item.child("value")
					if v != nil && v.kind == "as_pattern" {
						inner := v.namedKids()
						if len(inner) > 0 {
							val := p.eval(inner[0])
							p.assign(v.child("alias"), val)
						}
					} else {
						p.eval(v)
					}
				}
			} else {
				p.walk(k)
			}
		}
	case "function_definition":
		// Read where it is called (py_funcs.go).
		v := p.define(n)
		if name := n.child("name"); name != nil {
			p.set(name.text, v)
		}
	case "class_definition":
		p.defineClass(n)
	case "decorated_definition":
		for _, k := range n.namedKids() {
			if k.kind == "decorator" {
				for _, e := range k.namedKids() {
					p.eval(e)
				}
			} else {
				p.walk(k)
				// The decorator is given the function: it may run
				// it with arguments not read.
				if name := k.child("name"); name != nil {
					if v, ok := p.scope.vars[name.text]; ok {
						escapeVal(v)
					}
				}
			}
		}
	default:
		p.stmtOrExpr(n)
	}
}

func paramName(n *pyNode) string {
	switch n.kind {
	case "identifier":
		return n.text
	case "typed_parameter", "list_splat_pattern", "dictionary_splat_pattern":
		for _, k := range n.namedKids() {
			if k.kind == "identifier" {
				return k.text
			}
		}
	case "default_parameter", "typed_default_parameter":
		if k := n.child("name"); k != nil {
			return k.text
		}
	}
	return ""
}

// stmtOrExpr reads a node that may be a statement or an expression.
func (p *py) stmtOrExpr(n *pyNode) {
	switch n.kind {
	case "assignment":
		v := p.eval(n.child("right"))
		if n.child("right") == nil {
			return
		}
		p.assign(n.child("left"), v)
	case "augmented_assignment":
		left, right := n.child("left"), n.child("right")
		v := p.eval(right)
		if left != nil && left.kind == "identifier" {
			old, _ := p.scope.get(left.text)
			op := n.child("operator")
			if op != nil && op.text == "+=" && old.k == pyStr && v.k == pyStr {
				p.set(left.text, pyS(old.s+v.s))
			} else {
				p.set(left.text, pyVal{from: old.from + v.from, url: old.url + v.url})
			}
		}
	case "if_statement", "for_statement", "while_statement", "try_statement", "with_statement",
		"function_definition", "class_definition", "decorated_definition", "import_statement",
		"import_from_statement", "match_statement", "block", "expression_statement", "return_statement",
		"delete_statement", "raise_statement", "assert_statement", "exec_statement", "print_statement",
		"else_clause", "finally_clause", "except_clause", "except_group_clause", "elif_clause", "case_clause",
		"future_import_statement", "global_statement", "nonlocal_statement", "pass_statement":
		p.walk(n)
	default:
		p.eval(n)
	}
}

// bind assigns a loop variable its element: each pass of an unrolled loop
// runs with that value, whatever branch the loop is in.
func (p *py) bind(t *pyNode, v pyVal) {
	saved := p.cond
	p.cond = 0
	p.assign(t, v)
	p.cond = saved
}

// assign binds a target (a name, or a tuple of names) to a value.
func (p *py) assign(t *pyNode, v pyVal) {
	if t == nil {
		return
	}
	switch t.kind {
	case "identifier":
		p.set(t.text, v)
	case "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list":
		kids := t.namedKids()
		for i, k := range kids {
			e := pyVal{from: v.from, url: v.url}
			if v.k == pyList && len(v.list) == len(kids) {
				e = v.list[i]
			}
			p.assign(k, e)
		}
	case "assignment": // a = b = value
		p.assign(t.child("left"), v)
		p.assign(t.child("right"), v)
	case "as_pattern_target", "parenthesized_expression":
		if kids := t.namedKids(); len(kids) == 1 {
			p.assign(kids[0], v)
		}
	case "attribute":
		obj := p.recv(t.child("object"))
		if name := t.child("attribute"); name != nil && obj.k == pyObject {
			switch {
			case obj.obj.typ == "instance":
				p.setAttr(obj.obj.attrs, name.text, v)
				return
			case obj.obj.typ == "class":
				p.setAttr(obj.obj.cls.vars, name.text, v)
				return
			}
		}
		escapeVal(v) // stored where the reader does not follow it
	default:
		p.eval(t)
	}
}

func dotted(n *pyNode) string {
	if n == nil {
		return ""
	}
	return strings.Join(strings.Fields(n.text), "")
}

// eval computes what it can of an expression and records the effects of
// the calls in it.
func (p *py) eval(n *pyNode) pyVal {
	if n == nil {
		return pyVal{}
	}
	p.steps++
	if p.steps > pyMaxSteps {
		if p.steps == pyMaxSteps+1 {
			p.s.unknown(true, "python: more than %d syntax nodes", pyMaxSteps)
		}
		return pyVal{}
	}
	switch n.kind {
	case "string":
		return p.str(n)
	case "concatenated_string":
		var parts []pyVal
		for _, k := range n.namedKids() {
			parts = append(parts, p.eval(k))
		}
		return pyPat(parts)
	case "integer", "float":
		return pyS(n.text)
	case "unary_operator":
		v := p.eval(n.child("argument"))
		if op := n.child("operator"); op != nil && op.text == "-" && v.k == pyStr {
			return pyS("-" + v.s)
		}
		return pyVal{from: v.from, url: v.url}
	case "true", "false", "none":
		return pyS(n.text)
	case "identifier":
		v := p.ident(n)
		escapeVal(v) // a function given as a value: run with arguments not read
		return v
	case "parenthesized_expression":
		kids := n.namedKids()
		if len(kids) == 1 {
			return p.eval(kids[0])
		}
	case "tuple", "list", "expression_list":
		var l []pyVal
		for _, k := range n.namedKids() {
			l = append(l, p.eval(k))
		}
		return pyVal{k: pyList, list: l}
	case "binary_operator":
		l, r := p.eval(n.child("left")), p.eval(n.child("right"))
		op := n.child("operator")
		switch {
		case op == nil:
		case op.text == "+" && l.k == pyStr && r.k == pyStr:
			return pyS(l.s + r.s)
		case op.text == "+" && (l.k == pyStr || l.pat != "" || r.k == pyStr || r.pat != ""):
			return pyPat([]pyVal{l, r})
		case op.text == "%" && l.k == pyStr:
			if v, ok := pyPercentFill(l.s, r); ok {
				return pyS(v) // "rm -rf %s" % "~" is "rm -rf ~"
			}
			// "rm -rf %s" % x: the conversions are holes.
			v := pyPercent.ReplaceAllLiteralString(l.s, pyHole)
			if v == l.s {
				return l
			}
			return pyVal{pat: v, from: r.from, url: r.url}
		case op.text == "/":
			if ls, ok := l.str(); ok && l.k == pyObject {
				if rs, ok := r.str(); ok {
					return pyObjV(&pyObj{typ: "path", path: pjoin(ls, rs)})
				}
				return pyVal{}
			}
		}
		return pyVal{from: l.from + r.from, url: l.url + r.url}
	case "attribute":
		return p.attr(n)
	case "call":
		return p.call(n)
	case "named_expression":
		v := p.eval(n.child("value"))
		p.assign(n.child("name"), v)
		return v
	case "subscript":
		v := p.eval(n.child("value"))
		idx := p.eval(n.child("subscript"))
		if v.k == pyName && (v.s == "os.environ") && idx.k == pyStr {
			return p.env(idx.s)
		}
		if v.k == pyName && v.s == "sys.modules" && idx.k == pyStr {
			return pyVal{k: pyName, s: idx.s}
		}
		if vn := n.child("value"); vn != nil && pyNamespace(vn) {
			// globals()["os"], vars(os)["system"], os.__dict__["system"],
			// __builtins__.__dict__["exec"]: a name looked up by string.
			if idx.k == pyStr {
				switch {
				case strings.HasPrefix(vn.text, "globals") || strings.HasPrefix(vn.text, "locals"):
					if x, ok := p.scope.get(idx.s); ok {
						return x
					}
					return pyVal{k: pyName, s: idx.s}
				case v.k == pyName:
					return pyVal{k: pyName, s: strings.TrimSuffix(v.s, ".__dict__") + "." + idx.s}
				}
			}
			p.unknownf("a name looked up at run time: %s", snippet(n.text))
			return pyVal{}
		}
		if v.k == pyName && v.s == "sys.argv" {
			v = p.argv()
		}
		if sub := n.child("subscript"); v.k == pyList && sub != nil && sub.kind == "slice" {
			// sys.argv[1:]: a slice from a literal start to the end.
			if from, ok := strings.CutSuffix(strings.TrimSpace(sub.text), ":"); ok {
				if i, err := strconv.Atoi(strings.TrimSpace(from)); err == nil && i >= 0 && i <= len(v.list) {
					return pyVal{k: pyList, list: v.list[i:]}
				}
			}
			return pyVal{from: v.from, url: v.url}
		}
		if sub := n.child("subscript"); v.k == pyStr && sub != nil && sub.kind == "slice" &&
			strings.Join(strings.Fields(sub.text), "") == "::-1" {
			r := []rune(v.s)
			slices.Reverse(r)
			return pyS(string(r))
		}
		if v.k == pyList && idx.k == pyStr {
			if i, err := strconv.Atoi(idx.s); err == nil && i >= 0 && i < len(v.list) {
				return v.list[i]
			}
		}
		return pyVal{from: v.from, url: v.url}
	case "dictionary":
		var l []pyVal
		for _, pair := range n.namedKids() {
			if pair.kind == "pair" {
				p.eval(pair.child("key"))
				l = append(l, p.eval(pair.child("value")))
			} else {
				l = append(l, p.eval(pair))
			}
		}
		return pyVal{k: pyList, list: l}
	case "await":
		kids := n.namedKids()
		if len(kids) == 1 {
			return p.eval(kids[0])
		}
	case "lambda":
		return p.define(n)
	case "list_comprehension", "generator_expression", "set_comprehension", "dictionary_comprehension":
		return p.comprehension(n)
	}
	// Anything else: read the calls inside it, the value is not known.
	var out pyVal
	for _, k := range n.namedKids() {
		v := p.eval(k)
		out.from += v.from
		out.url += v.url
	}
	return out
}

var (
	pyDottedName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	pyPercent    = regexp.MustCompile(`%(\([^)]*\))?[-#0 +]*[0-9*]*(\.[0-9*]+)?[sdirfxXoc]`)
	pyBraces     = regexp.MustCompile(`\{[^{}]*\}`)
)

// ident is the value of a name.
func (p *py) ident(n *pyNode) pyVal {
	if v, ok := p.scope.get(n.text); ok {
		return v
	}
	if q := p.starName(n.text); q != "" {
		return pyVal{k: pyName, s: q}
	}
	if pyBuiltinModules[n.text] {
		return pyVal{k: pyName, s: n.text}
	}
	return pyVal{}
}

// recv evaluates the receiver of a method call or an attribute: a name
// there is used, not given away.
func (p *py) recv(n *pyNode) pyVal {
	if n != nil && n.kind == "identifier" {
		p.steps++
		return p.ident(n)
	}
	return p.eval(n)
}

// comprehension reads [body for x in it if cond]: the body once per
// element of a short known list, else once with x unknown.
func (p *py) comprehension(n *pyNode) pyVal {
	outer := p.scope
	p.scope = &pyScope{vars: map[string]pyVal{}, parent: outer}
	p.cond++
	defer func() { p.scope = outer; p.cond-- }()
	var body *pyNode
	var clauses []*pyNode
	for _, k := range n.namedKids() {
		switch {
		case k.field == "body":
			body = k
		case k.kind == "for_in_clause" || k.kind == "if_clause":
			clauses = append(clauses, k)
		}
	}
	var vals []pyVal
	exact := true // every loop unrolled and every filter known to hold: vals is the list
	var run func(i int)
	run = func(i int) {
		if i == len(clauses) {
			vals = append(vals, p.eval(body))
			return
		}
		c := clauses[i]
		if c.kind == "if_clause" {
			exact = false
			for _, k := range c.namedKids() {
				p.eval(k)
			}
			run(i + 1)
			return
		}
		it := p.eval(c.child("right"))
		if names, ok := p.loopProcs(it, n); ok {
			// [p.kill() for p in psutil.process_iter() if ...]: the
			// processes the filter names (py_procs.go).
			exact = false
			prev := p.procs
			p.procs = names
			elem := pyObjV(&pyObj{typ: "proc", pid: "*"})
			if it.k != pyObject {
				elem = pyVal{from: it.from + pidsMark(names)}
			}
			p.assign(c.child("left"), elem)
			run(i + 1)
			p.procs = prev
			return
		}
		if it.k == pyList && len(it.list) > 0 && len(it.list) <= pyMaxUnroll {
			for _, e := range it.list {
				p.bind(c.child("left"), e)
				run(i + 1)
			}
			return
		}
		exact = false
		p.assign(c.child("left"), pyVal{from: it.from, url: it.url})
		run(i + 1)
	}
	run(0)
	if exact && n.kind == "list_comprehension" {
		return pyVal{k: pyList, list: vals}
	}
	var t pyVal
	for _, v := range vals {
		t.from += v.from
		t.url += v.url
	}
	return t
}

// pyBuiltinModules are names usable without an import that the reader
// knows calls of.
var pyBuiltinModules = map[string]bool{"open": true, "__builtins__": true, "builtins": true, "exec": true, "eval": true, "compile": true,
	"__import__": true, "getattr": true, "execfile": true, "input": true, "str": true, "bytes": true,
	"print": true, "vars": true, "chr": true}

func (p *py) starName(name string) string {
	for _, m := range p.star {
		if _, ok := pyCalls[m+"."+name]; ok {
			return m + "." + name
		}
	}
	return ""
}

// env is the value of an environment variable: HOME is the agent's home.
func (p *py) env(name string) pyVal {
	if name == "HOME" {
		return pyS(p.home())
	}
	return pyVal{}
}

// home is the agent's home as Python code gets it (os.environ["HOME"],
// Path.home(), expanduser): the context's, else "~", which paths resolve
// later. Given to a program's argv, the home itself is what it receives.
func (p *py) home() string {
	if h := p.s.ctx.Home; h != "" {
		return h
	}
	return "~"
}

// str decodes a string literal: escapes unless raw, f-string parts when
// every part is known.
func (p *py) str(n *pyNode) pyVal {
	raw, fstr := false, false
	var b strings.Builder
	ok := true
	var taint pyVal
	for _, k := range n.kids {
		switch k.kind {
		case "string_start":
			prefix := strings.ToLower(strings.TrimRight(k.text, `"'`))
			raw = strings.Contains(prefix, "r")
			fstr = strings.Contains(prefix, "f")
		case "string_content":
			if raw {
				b.WriteString(k.text)
			} else {
				b.WriteString(pyUnescape(k.text))
			}
		case "interpolation":
			v := p.eval(k.child("expression"))
			taint.from += v.from
			taint.url += v.url
			if s, isStr := v.str(); isStr && fstr && k.child("format_specifier") == nil {
				b.WriteString(s)
			} else {
				ok = false
				b.WriteString(pyHole)
			}
		}
	}
	if !ok {
		taint.pat = b.String()
		return taint
	}
	return pyS(b.String())
}

// pyUnescape decodes Python's backslash escapes; an escape it does not
// know is kept as written (as Python does).
func pyUnescape(t string) string {
	if !strings.Contains(t, `\`) {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c != '\\' || i+1 >= len(t) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := t[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case '\\', '\'', '"':
			b.WriteByte(e)
		case '\n':
		case 'x':
			if i+2 < len(t) {
				if v, err := strconv.ParseUint(t[i+1:i+3], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 2
					continue
				}
			}
			b.WriteString(`\x`)
		case 'u', 'U':
			w := 4
			if e == 'U' {
				w = 8
			}
			if i+w < len(t) {
				if v, err := strconv.ParseUint(t[i+1:i+1+w], 16, 32); err == nil {
					b.WriteRune(rune(v))
					i += w
					continue
				}
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		default:
			if e >= '0' && e <= '7' {
				j := i
				for j < len(t) && j < i+3 && t[j] >= '0' && t[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(t[i:j], 8, 16)
				b.WriteByte(byte(v))
				i = j - 1
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

// attr reads obj.name outside a call.
func (p *py) attr(n *pyNode) pyVal {
	obj := p.recv(n.child("object"))
	name := n.child("attribute")
	if name == nil {
		return pyVal{}
	}
	a := name.text
	switch {
	case obj.k == pyName && obj.s == "sys" && a == "executable":
		// The interpreter running the code: subprocess.run([sys.executable,
		// "-m", "pytest"]) runs python3 -m pytest.
		return pyS("python3")
	case obj.k == pyName:
		v := pyVal{k: pyName, s: obj.s + "." + a, from: obj.from}
		if v.s == "os.environ" || v.s == "os.environb" || v.s == "posix.environ" {
			v.from = SourceEnvironment // dict(os.environ), os.environ.copy() carry it
		}
		return v
	case obj.k == pyObject && obj.obj.typ == "path":
		switch a {
		case "parent":
			return pyObjV(&pyObj{typ: "path", path: path.Dir(obj.obj.path)})
		case "name":
			return pyS(path.Base(obj.obj.path))
		case "path":
			return pyS(obj.obj.path)
		}
	case obj.k == pyObject && obj.obj.typ == "response":
		return pyVal{url: obj.obj.url}
	case obj.k == pyObject && (obj.obj.typ == "instance" || obj.obj.typ == "class"):
		if obj.obj.typ == "instance" {
			if v, ok := instAttr(obj.obj, a); ok {
				return v
			}
		} else if v, ok := obj.obj.cls.lookup(a); ok {
			return v
		}
		return pyVal{}
	}
	return pyVal{from: obj.from, url: obj.url}
}

// pjoin joins path parts as os.path.join does: an absolute part restarts.
func pjoin(parts ...string) string {
	out := ""
	for _, q := range parts {
		switch {
		case strings.HasPrefix(q, "/") || out == "":
			out = q
		case strings.HasSuffix(out, "/"):
			out += q
		default:
			out += "/" + q
		}
	}
	return out
}

// pyArgs are a call's evaluated arguments.
type pyArgs struct {
	pos   []pyVal
	nodes []*pyNode
	kw    map[string]pyVal
	splat bool
	text  string
}

func (a *pyArgs) get(i int, kw string) (pyVal, bool) {
	if v, ok := a.kw[kw]; ok && kw != "" {
		return v, true
	}
	if i >= 0 && i < len(a.pos) {
		return a.pos[i], true
	}
	return pyVal{}, false
}

func (p *py) args(n *pyNode) *pyArgs {
	a := &pyArgs{kw: map[string]pyVal{}}
	if n == nil {
		return a
	}
	for _, k := range n.namedKids() {
		switch k.kind {
		case "keyword_argument":
			if name := k.child("name"); name != nil {
				a.kw[name.text] = p.eval(k.child("value"))
			}
		case "list_splat", "dictionary_splat":
			a.splat = true
			p.eval(k)
		default:
			a.pos = append(a.pos, p.eval(k))
			a.nodes = append(a.nodes, k)
		}
	}
	return a
}

// call reads a call: a function known by qualified name, or a method of
// an object the reader follows.
func (p *py) call(n *pyNode) pyVal {
	fn := n.child("function")
	a := p.args(n.child("arguments"))
	a.text = n.text
	if fn == nil {
		return pyVal{}
	}
	p.runnerValues(a)
	var callee pyVal
	if fn.kind == "attribute" {
		recv := p.recv(fn.child("object"))
		name := fn.child("attribute")
		if name == nil {
			return pyVal{}
		}
		switch {
		case recv.k == pyName:
			callee = pyVal{k: pyName, s: recv.s + "." + name.text, from: recv.from}
		case recv.k == pyObject && (recv.obj.typ == "instance" || recv.obj.typ == "class"):
			// A method of a class the code defines.
			var m pyVal
			var ok bool
			if recv.obj.typ == "instance" {
				m, ok = instAttr(recv.obj, name.text)
			} else {
				m, ok = recv.obj.cls.lookup(name.text)
			}
			if ok && localCallee(m) {
				var self *pyObj
				if recv.obj.typ == "instance" && m.obj.fn != nil {
					if _, own := recv.obj.attrs[name.text]; !own {
						self = recv.obj // bound method
					}
				}
				return p.callLocal(m, self, a)
			}
			return a.taint()
		default:
			return p.method(recv, name.text, a)
		}
	} else if fn.kind == "identifier" {
		p.steps++
		callee = p.ident(fn)
	} else {
		callee = p.eval(fn)
	}
	if localCallee(callee) {
		return p.callLocal(callee, nil, a)
	}
	if callee.k != pyName {
		switch fn.kind {
		case "subscript", "call", "lambda", "parenthesized_expression", "conditional_expression", "boolean_operator":
			// handlers[name](...), getattr(x, y)(...), (a or b)(...):
			// which function runs is not known before run time.
			if p.runners {
				// In code that can run programs, the function may be
				// one that does (d = {"a": os.system}; d[k](cmd)).
				p.s.runsHidden("python", "python: a call of a function computed at run time: %s", snippet(a.text))
			} else {
				p.unknownf("a call of a function computed at run time: %s", snippet(a.text))
			}
		}
		if fn.kind == "identifier" {
			// A builtin the reader does not model (dict, list, repr,
			// sorted): data derived from its arguments.
			t := a.taint()
			if callee.from != "" && !strings.Contains(t.from, callee.from) {
				t.from += callee.from
			}
			if callee.url != "" && !strings.Contains(t.url, callee.url) {
				t.url += callee.url
			}
			return t
		}
		return pyVal{from: callee.from, url: callee.url}
	}
	q := pyCanon(strings.TrimSuffix(callee.s, ".__call__"))
	if h, ok := pyCalls[q]; ok {
		return h(p, q, a)
	}
	// A module reached through another (subprocess.os.system,
	// shutil.os.remove): the same function.
	for i := strings.IndexByte(q, '.'); i >= 0; {
		if h, ok := pyCalls[q[i+1:]]; ok {
			return h(p, q[i+1:], a)
		}
		j := strings.IndexByte(q[i+1:], '.')
		if j < 0 {
			break
		}
		i += j + 1
	}
	if strings.HasPrefix(q, "ctypes.") || strings.HasPrefix(q, "cffi.") {
		// C functions called by name (ctypes.CDLL(None).system(...)):
		// what runs is not read.
		p.s.runsHidden("program", "python: native code through %s: %s", q, snippet(a.text))
	}
	t := a.taint()
	if callee.from != "" && !strings.Contains(t.from, callee.from) {
		t.from += callee.from // a method of a value read from somewhere (os.environ.items())
	}
	return t
}

// runnerValues records a function that runs programs or code given as a
// value to a call (map(os.system, cmds), Thread(target=os.system,
// args=(c,))): it runs later with arguments the reader does not follow.
func (p *py) runnerValues(a *pyArgs) {
	check := func(v pyVal) {
		if v.k == pyName && pyRunnerFuncRE.MatchString(pyCanon(v.s)) {
			p.s.runsHidden("python", "python: %s given as a value to a call, run with arguments not read: %s", v.s, snippet(a.text))
		}
	}
	for _, v := range a.pos {
		check(v)
	}
	for _, v := range a.kw {
		check(v)
	}
}

// taint is what a call the reader does not know returns: data derived
// from its arguments (base64.b64encode(open(f).read()) is still f's
// content).
func (a *pyArgs) taint() pyVal {
	var t pyVal
	add := func(v pyVal) {
		if v.from != "" && !strings.Contains(t.from, v.from) {
			t.from += v.from
		}
		if v.url != "" && !strings.Contains(t.url, v.url) {
			t.url += v.url
		}
		if v.k == pyObject && v.obj.typ == "file" && !strings.Contains(t.from, v.obj.path) {
			t.from += v.obj.path
		}
	}
	for _, v := range a.pos {
		add(v)
		for _, e := range v.list {
			add(e)
		}
	}
	for _, v := range a.kw {
		add(v)
	}
	return t
}

// pyNamespace reports whether an expression is a namespace looked up by
// string: globals(), locals(), vars(x), x.__dict__.
func pyNamespace(n *pyNode) bool {
	t := pyIdent(strings.Join(strings.Fields(n.text), ""))
	return t == "globals()" || t == "locals()" || strings.HasPrefix(t, "vars(") || strings.HasSuffix(t, ".__dict__")
}

// pyCanon maps aliases of the same function to one name.
func pyCanon(q string) string {
	for _, r := range [...][2]string{{"posix.", "os."}, {"builtins.", ""}, {"__builtin__.", ""}, {"__builtins__.", ""},
		{"io.open", "open"}, {"codecs.open", "open"}, {"urllib2.", "urllib.request."},
		{"urllib.urlopen", "urllib.request.urlopen"}, {"urllib.urlretrieve", "urllib.request.urlretrieve"},
		{"httplib.", "http.client."}, {"commands.", "subprocess."}, {"httpx.", "requests."},
		{"requests.api.", "requests."}, {"posixpath.", "os.path."}, {"pathlib2.", "pathlib."},
		{"SocketServer.", "socketserver."}, {"BaseHTTPServer.", "http.server."}, {"SimpleHTTPServer.", "http.server."}} {
		if strings.HasPrefix(q, r[0]) {
			return r[1] + q[len(r[0]):]
		}
	}
	return q
}

// pyHandler reads a call to one known function.
type pyHandler func(p *py, q string, a *pyArgs) pyVal

// pyCalls are the functions the reader knows, by canonical name.
var pyCalls map[string]pyHandler

func init() {
	pyCalls = map[string]pyHandler{
		"open": pyOpen, "os.open": pyOSOpen, "os.fdopen": nil,
		"os.remove": pyPathOp(Delete, false), "os.unlink": pyPathOp(Delete, false),
		"os.rmdir": pyPathOp(Delete, false), "os.removedirs": pyPathOp(Delete, false),
		"shutil.rmtree": pyPathOp(Delete, true),
		"os.makedirs":   pyPathOp(Create, false), "os.mkdir": pyPathOp(Create, false),
		"os.mkfifo": pyPathOp(Create, false), "os.mknod": pyPathOp(Create, false),
		"os.truncate": pyPathOp(Write, false),
		"os.listdir":  pyPathOp(Read, false), "os.scandir": pyPathOp(Read, false),
		"os.walk": pyPathOp(Read, true), "glob.glob": pyPathOp(Read, false), "glob.iglob": pyPathOp(Read, false),
		"os.rename": pyMove, "os.replace": pyMove, "os.renames": pyMove, "shutil.move": pyMove,
		"shutil.copy": pyCopy(false), "shutil.copy2": pyCopy(false), "shutil.copyfile": pyCopy(false),
		"shutil.copytree": pyCopy(true),
		"os.chmod":        pyChmod, "os.lchmod": pyChmod,
		"os.chown": pyChown, "os.lchown": pyChown, "shutil.chown": pyChown,
		"os.symlink": pyLink, "os.link": pyLink,
		"os.chdir":     pyChdir,
		"os.path.join": pyJoin, "os.path.expanduser": pyExpanduser, "os.path.abspath": pyFirst,
		"os.path.realpath": pyFirst, "os.path.normpath": pyFirst,
		"os.path.dirname": pyStrFn(path.Dir), "os.path.basename": pyStrFn(path.Base),
		"os.getenv": pyGetenv, "os.environ.get": pyGetenv, "os.getcwd": pyGetcwd,
		"os.path.expandvars": pyExpandvars,
		// Where Python's start-up reads .pth files and sitecustomize:
		// the user's site directory (its version not known: "python3"),
		// and the system's.
		"site.getusersitepackages": pyConst(pyS("~/.local/lib/python3/site-packages")),
		"site.getsitepackages":     pyConst(pyVal{k: pyList, list: []pyVal{pyS("/usr/local/lib/python3/dist-packages"), pyS("/usr/lib/python3/dist-packages")}}),
		"pathlib.Path":             pyPath, "pathlib.PosixPath": pyPath, "pathlib.PurePath": pyPath,
		"pathlib.PurePosixPath": pyPath, "pathlib.Path.home": pyHome, "pathlib.Path.cwd": pyGetcwd,
		"os.system": pyShell, "os.popen": pyShell, "subprocess.getoutput": pyShell,
		"subprocess.getstatusoutput": pyShell, "asyncio.create_subprocess_shell": pyShell,
		"popen2.popen2": pyShell, "popen2.popen3": pyShell, "os.popen2": pyShell, "os.popen3": pyShell,
		"subprocess.run": pySubprocess, "subprocess.call": pySubprocess, "subprocess.check_call": pySubprocess,
		"subprocess.check_output": pySubprocess, "subprocess.Popen": pySubprocess,
		"asyncio.create_subprocess_exec": pyExecArgs(0), "pty.spawn": pyPty,
		"os.posix_spawn": pyExecV, "os.posix_spawnp": pyExecV,
		"socket.socket": pySocket, "socket.create_connection": pyCreateConn, "socket.fromfd": pySocket,
		"os.dup2": pyDup2, "os.dup": pyFirst,
		"requests.get": pyHTTP(""), "requests.head": pyHTTP(""), "requests.options": pyHTTP(""),
		"requests.delete": pyHTTP(""), "requests.post": pyHTTP("send"), "requests.put": pyHTTP("send"),
		"requests.patch": pyHTTP("send"), "requests.request": pyHTTPRequest, "requests.stream": pyHTTPRequest,
		"requests.Session": pySession, "requests.Client": pySession, "requests.AsyncClient": pySession,
		"aiohttp.ClientSession": pySession, "requests.session": pySession,
		"urllib.request.urlopen": pyURLOpen, "urllib.request.Request": pyRequest,
		"urllib.request.urlretrieve": pyURLRetrieve,
		"http.client.HTTPConnection": pyHTTPConn("80"), "http.client.HTTPSConnection": pyHTTPConn("443"),
		"ftplib.FTP": pyHostConn("21"), "ftplib.FTP_TLS": pyHostConn("21"), "smtplib.SMTP": pyHostConn("25"),
		"smtplib.SMTP_SSL": pyHostConn("465"), "telnetlib.Telnet": pyHostConn("23"),
		"os.kill": pyKill(""), "os.killpg": pyKill("-"), "signal.pthread_kill": pyKill(""),
		"psutil.Process": pyProc, "psutil.process_iter": pyProcIter,
		"os.setuid": pyPriv, "os.setgid": pyPriv, "os.seteuid": pyPriv, "os.setegid": pyPriv,
		"os.setreuid": pyPriv, "os.setresuid": pyPriv, "os.setregid": pyPriv, "os.setresgid": pyPriv,
		"exec": pyExec, "eval": pyExec, "compile": pyExec, "execfile": pyExecFile, "runpy.run_path": pyExecFile, "runpy.run_module": pyImport,
		"__import__": pyImport, "importlib.import_module": pyImport, "getattr": pyGetattr,
		"base64.b64decode": pyDecode("base64"), "base64.decodebytes": pyDecode("base64"),
		"base64.standard_b64decode": pyDecode("base64"), "base64.urlsafe_b64decode": pyDecode("base64url"),
		"base64.b32decode": pyDecode("base32"), "bytes.fromhex": pyDecode("hex"),
		"binascii.unhexlify": pyDecode("hex"), "binascii.a2b_hex": pyDecode("hex"),
		"codecs.decode": pyCodecs, "marshal.loads": pyOpaque, "pickle.loads": pyOpaque, "dill.loads": pyOpaque, "cloudpickle.loads": pyOpaque,
		"asyncio.open_connection": pyOpenConn, "configparser.ConfigParser.read": pyPathOp(Read, false),
		"shutil.unpack_archive": pyUnpack, "shutil.make_archive": pyMakeArchive,
		"tarfile.open": pyArchive, "zipfile.ZipFile": pyArchive, "webbrowser.open": pyBrowse,
		"socket.gethostbyname": pyDNS, "socket.getaddrinfo": pyDNS, "socket.gethostbyname_ex": pyDNS,
		"paramiko.SSHClient":     pySSHClient,
		"socketserver.TCPServer": pyServer, "socketserver.ThreadingTCPServer": pyServer, "socketserver.ForkingTCPServer": pyServer,
		"http.server.HTTPServer": pyServer, "http.server.ThreadingHTTPServer": pyServer,
		"tempfile.mkdtemp": pyTemp(false), "tempfile.TemporaryDirectory": pyTemp(false),
		"tempfile.mkstemp": pyTemp(true), "tempfile.NamedTemporaryFile": pyTemp(true),
		"tempfile.TemporaryFile": pyTemp(true), "tempfile.gettempdir": pyTempDir,
		"zlib.decompress": pyOpaque, "io.BytesIO": pyFirst, "io.StringIO": pyFirst,
		"sqlite3.connect": pySQLite, "duckdb.connect": pySQLite,
		"configparser.ConfigParser": pyObjOf("configparser"), "configparser.RawConfigParser": pyObjOf("configparser"), "str": pyFirst, "bytes": pyFirst, "vars": pyVars, "chr": pyChr,
	}
	for _, v := range []string{"execl", "execle", "execlp", "execlpe"} {
		pyCalls["os."+v] = pyExecL
	}
	for _, v := range []string{"execv", "execve", "execvp", "execvpe"} {
		pyCalls["os."+v] = pyExecV
	}
	for _, v := range []string{"spawnl", "spawnle", "spawnlp", "spawnlpe"} {
		pyCalls["os."+v] = pyExecArgs(1)
	}
	for _, v := range []string{"spawnv", "spawnve", "spawnvp", "spawnvpe"} {
		pyCalls["os."+v] = pySpawnV
	}
	delete(pyCalls, "os.fdopen")
}

// pathOf returns the resolved path a value names, or records an Unknown
// for op and returns false.
func (p *py) pathOf(v pyVal, q string, a *pyArgs) (string, bool) {
	if s, ok := v.str(); ok && s != "" {
		return p.s.resolve(s), true
	}
	if v.k == pyObject && v.obj.typ == "file" {
		return v.obj.path, true
	}
	p.unknownf("%s of a path not known before run time: %s", q, snippet(a.text))
	// A path known up to a directory still names where the effect is:
	// the unknown parts are written as "*".
	if v.k == pyUnknown && (strings.HasPrefix(v.pat, "/") || strings.HasPrefix(v.pat, "~/")) {
		if r := p.s.resolve(strings.ReplaceAll(v.pat, pyHole, "*")); r != "/*" && r != "/" {
			return r, true
		}
	}
	return "", false
}

func (p *py) add(e Effect) {
	if e.Program == "" {
		e.Program = "python"
	}
	p.s.add(e)
}

func pyOpen(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "file")
	mode := "r"
	if m, ok := a.get(1, "mode"); ok {
		if m.k == pyStr {
			mode = m.s
		} else {
			mode = "w+" // not known: it may write
		}
	}
	path, ok := p.pathOf(v, q, a)
	if !ok {
		return pyVal{}
	}
	p.fileEffect(path, mode)
	return pyObjV(&pyObj{typ: "file", path: path})
}

// fileEffect records what opening path with a Python mode does.
func (p *py) fileEffect(path, mode string) {
	writes := strings.ContainsAny(mode, "wax+")
	if !writes || strings.Contains(mode, "+") && strings.Contains(mode, "r") {
		p.add(Effect{Kind: Read, Path: path})
	}
	if writes {
		p.add(Effect{Kind: Write, Path: path, Append: strings.Contains(mode, "a")})
	}
}

func pyOSOpen(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "path")
	path, ok := p.pathOf(v, q, a)
	if !ok {
		return pyVal{}
	}
	flags := ""
	if len(a.nodes) > 1 {
		flags = a.nodes[1].text
	} else if _, ok := a.kw["flags"]; ok {
		flags = "O_RDWR"
	}
	switch {
	case strings.Contains(flags, "O_APPEND"):
		p.add(Effect{Kind: Write, Path: path, Append: true})
	case strings.Contains(flags, "O_WRONLY"), strings.Contains(flags, "O_CREAT"), strings.Contains(flags, "O_TRUNC"):
		p.add(Effect{Kind: Write, Path: path})
	case strings.Contains(flags, "O_RDWR"):
		p.add(Effect{Kind: Read, Path: path})
		p.add(Effect{Kind: Write, Path: path})
	case strings.Contains(flags, "O_RDONLY") || flags == "0":
		p.add(Effect{Kind: Read, Path: path})
	default:
		p.add(Effect{Kind: Read, Path: path})
		p.add(Effect{Kind: Write, Path: path})
	}
	return pyObjV(&pyObj{typ: "file", path: path})
}

func pyPathOp(k Kind, recursive bool) pyHandler {
	return func(p *py, q string, a *pyArgs) pyVal {
		v, ok := a.get(0, "path")
		if !ok {
			if q == "os.listdir" || q == "os.scandir" {
				v = pyS(".")
			} else if q == "glob.glob" || q == "glob.iglob" {
				v, _ = a.get(0, "pathname")
			}
		}
		path, ok := p.pathOf(v, q, a)
		if !ok {
			return pyVal{}
		}
		r := recursive || strings.Contains(path, "**")
		p.add(Effect{Kind: k, Path: path, Recursive: r})
		// What a listing returns, as patterns: a loop over it acts on
		// every match ("for f in glob.glob('*.tmp'): os.remove(f)" deletes
		// /w/*.tmp).
		switch q {
		case "glob.glob", "glob.iglob":
			return pyVal{k: pyList, list: []pyVal{pyS(path)}}
		case "os.listdir":
			if path == "/proc" {
				// Every process's pid (py_procs.go).
				m := pidsMark(nil)
				return pyVal{k: pyList, list: []pyVal{{k: pyStr, s: "*", from: m}}, from: m}
			}
			return pyVal{k: pyList, list: []pyVal{pyS("*")}}
		case "os.scandir":
			return pyVal{k: pyList, list: []pyVal{pyObjV(&pyObj{typ: "path", path: pjoin(path, "*")})}}
		case "os.walk":
			all := pyVal{k: pyList, list: []pyVal{pyS("*")}}
			return pyVal{k: pyList, list: []pyVal{{k: pyList, list: []pyVal{pyS(pjoin(path, "**")), all, all}}}}
		}
		return pyVal{}
	}
}

func pyMove(p *py, q string, a *pyArgs) pyVal {
	src, _ := a.get(0, "src")
	dst, _ := a.get(1, "dst")
	sp, ok1 := p.pathOf(src, q, a)
	dp, ok2 := p.pathOf(dst, q, a)
	if ok1 && ok2 {
		p.add(Effect{Kind: Move, Path: sp, Dest: dp})
	}
	return pyVal{}
}

func pyCopy(tree bool) pyHandler {
	return func(p *py, q string, a *pyArgs) pyVal {
		src, _ := a.get(0, "src")
		dst, _ := a.get(1, "dst")
		if sp, ok := p.pathOf(src, q, a); ok {
			p.add(Effect{Kind: Read, Path: sp, Recursive: tree})
		}
		if dp, ok := p.pathOf(dst, q, a); ok {
			p.add(Effect{Kind: Write, Path: dp, Recursive: tree})
		}
		return pyVal{}
	}
}

// pyMode writes a mode as octal digits: 0o755 and 493 are "755".
func pyMode(v pyVal, n *pyNode) string {
	if v.k == pyStr {
		t := strings.ReplaceAll(v.s, "_", "")
		if x, err := strconv.ParseInt(t, 0, 32); err == nil {
			return strconv.FormatInt(x, 8)
		}
	}
	if n != nil {
		return snippet(n.text)
	}
	return "?"
}

func pyChmod(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "path")
	m, _ := a.get(1, "mode")
	var mn *pyNode
	if len(a.nodes) > 1 {
		mn = a.nodes[1]
	}
	if path, ok := p.pathOf(v, q, a); ok {
		p.add(Effect{Kind: Chmod, Path: path, Detail: &Detail{Mode: pyMode(m, mn)}})
	}
	return pyVal{}
}

func pyChown(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "path")
	u, _ := a.get(1, "user")
	if _, ok := a.kw["uid"]; ok {
		u = a.kw["uid"]
	}
	g, _ := a.get(2, "group")
	if _, ok := a.kw["gid"]; ok {
		g = a.kw["gid"]
	}
	mode := valText(u, "?")
	if gs := valText(g, ""); gs != "" {
		mode += ":" + gs
	}
	if path, ok := p.pathOf(v, q, a); ok {
		p.add(Effect{Kind: Chown, Path: path, Detail: &Detail{Mode: mode}})
	}
	return pyVal{}
}

func valText(v pyVal, dflt string) string {
	if v.k == pyStr {
		return v.s
	}
	return dflt
}

func pyLink(p *py, q string, a *pyArgs) pyVal {
	src, _ := a.get(0, "src")
	dst, _ := a.get(1, "dst")
	dp, ok := p.pathOf(dst, q, a)
	if !ok {
		return pyVal{}
	}
	target, _ := src.str()
	if target != "" {
		target = p.s.resolve(target)
	}
	p.add(Effect{Kind: Create, Path: dp, Dest: target})
	return pyVal{}
}

func pyChdir(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "path")
	if s, ok := v.str(); ok && s != "" {
		r := p.s.resolve(s)
		if strings.HasPrefix(r, "/") {
			p.s.ctx.Cwd = r
			return pyVal{}
		}
	}
	p.unknownf("os.chdir to a directory not known before run time: %s", snippet(a.text))
	p.s.ctx.Cwd = lostCwd
	return pyVal{}
}

func pyJoin(p *py, q string, a *pyArgs) pyVal {
	var parts []string
	known := true
	for _, v := range a.pos {
		s, ok := v.partial()
		if !ok || strings.Contains(s, pyHole) {
			known = false
		}
		parts = append(parts, s)
	}
	if a.splat || len(parts) == 0 {
		return pyVal{}
	}
	if !known {
		return pyVal{pat: pjoin(parts...)}
	}
	return pyS(pjoin(parts...))
}

// pyConst is a call that returns v whatever its arguments.
func pyConst(v pyVal) pyHandler {
	return func(*py, string, *pyArgs) pyVal { return v }
}

func pyFirst(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "")
	if v.k == pyObject && v.obj.typ == "path" {
		return pyS(v.obj.path)
	}
	return v
}

func pyStrFn(f func(string) string) pyHandler {
	return func(p *py, q string, a *pyArgs) pyVal {
		v, _ := a.get(0, "")
		if s, ok := v.str(); ok {
			return pyS(f(s))
		}
		return pyVal{}
	}
}

func pyGetenv(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "key")
	if v.k == pyStr {
		if r := p.env(v.s); r.k == pyStr {
			return r
		}
	}
	return pyVal{}
}

func pyGetcwd(p *py, q string, a *pyArgs) pyVal {
	if cwd := p.s.cwd(); cwd != "" {
		return pyS(cwd)
	}
	return pyVal{}
}

func pyExpandvars(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "path")
	if v.k == pyStr {
		s := strings.ReplaceAll(strings.ReplaceAll(v.s, "${HOME}", p.home()), "$HOME", p.home())
		if !strings.Contains(s, "$") {
			return pyS(s)
		}
	}
	return pyVal{}
}

func pyPath(p *py, q string, a *pyArgs) pyVal {
	var parts []string
	for _, v := range a.pos {
		s, ok := v.str()
		if !ok {
			return pyObjV(&pyObj{typ: "path"})
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		parts = []string{"."}
	}
	return pyObjV(&pyObj{typ: "path", path: pjoin(parts...)})
}

func pyHome(p *py, q string, a *pyArgs) pyVal { return pyObjV(&pyObj{typ: "path", path: p.home()}) }

// pyExpanduser is os.path.expanduser: a leading "~" of a known string is
// the agent's home (p.home).
func pyExpanduser(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "path")
	if v.k == pyStr && (v.s == "~" || strings.HasPrefix(v.s, "~/")) {
		return pyS(p.home() + v.s[1:])
	}
	return pyFirst(p, q, a)
}

// run records a program started with argv (nil elements are values not
// known before run time), read again by the shell reader.
func (p *py) run(argv []pyVal, a *pyArgs) {
	if len(argv) == 0 {
		p.s.runsHidden("program", "python: a program not known before run time: %s", snippet(a.text))
		return
	}
	words := make([]string, len(argv))
	unknown := false
	for i, v := range argv {
		s, ok := v.str()
		if !ok {
			if i == 0 {
				p.s.runsHidden("program", "python: a program not known before run time: %s", snippet(a.text))
				return
			}
			unknown = true
			s = pyHole
		}
		words[i] = s
	}
	if unknown {
		p.unknownf("arguments not known before run time: %s", snippet(a.text))
	}
	p.started(path.Base(words[0]))
	line := p.cwdPrefix(a) + agentEnvPrefix(path.Base(words[0]), a) + JoinArgv(words)
	if unknown {
		// An unknown word is a variable the shell reader does not know.
		line = strings.ReplaceAll(line, "'"+pyHole+"'", `"${AHP_UNKNOWN}"`)
	}
	p.s.nested("sh", func() { shellReader(p.s, line) })
}

// shellString reads a command line given to a shell.
func (p *py) shellString(v pyVal, q string, a *pyArgs) {
	if v.k != pyStr {
		if v.url != "" {
			h, pt := urlHostPort(v.url)
			p.add(Effect{Kind: Download, Detail: &Detail{URL: v.url, Host: h, Port: pt, Into: "sh"}})
			if strings.HasPrefix(v.url, "tcp://") {
				// Commands read from a socket: their output goes back.
				p.add(Effect{Kind: Send, Detail: &Detail{URL: v.url, Host: h, Port: pt, Source: "output"}})
			}
		}
		if v.pat == "" || strings.HasPrefix(v.pat, pyHole) {
			// Not even the program is known (os.system(input())).
			p.s.runsHidden("sh", "python: %s of a command not known before run time: %s", q, snippet(a.text))
		} else {
			p.unknownf("%s of a command not known before run time: %s", q, snippet(a.text))
		}
		if v.pat != "" && !strings.HasPrefix(v.pat, pyHole) {
			// The known parts are still read: the unknown ones are a
			// variable the shell reader does not know.
			line := p.cwdPrefix(a) + strings.ReplaceAll(v.pat, pyHole, "${AHP_UNKNOWN}")
			p.noteShellLine(line)
			p.s.nested("sh", func() { shellReader(p.s, line) })
		}
		return
	}
	p.noteShellLine(v.s)
	line := p.cwdPrefix(a) + v.s
	p.s.nested("sh", func() { shellReader(p.s, line) })
}

// cwdPrefix is the shell text that puts a command in the working
// directory a call gives it (subprocess.run(..., cwd="build")), so that
// its relative paths are read against that directory; "" when the call
// names none or names it only at run time.
func (p *py) cwdPrefix(a *pyArgs) string {
	if a == nil {
		return ""
	}
	v, ok := a.kw["cwd"]
	if !ok {
		return ""
	}
	if d, known := v.str(); known && d != "" {
		return "cd " + JoinArgv([]string{d}) + " && "
	}
	return ""
}

func pyShell(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "cmd")
	if _, ok := a.kw["command"]; ok {
		v = a.kw["command"]
	}
	p.shellString(v, q, a)
	return listedPids(v, true, pyObjV(&pyObj{typ: "proc"}))
}

func pySubprocess(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "args")
	sh := false
	if s, ok := a.kw["shell"]; ok {
		sh = !(s.k == pyStr && (s.s == "False" || s.s == "0" || s.s == "None"))
	}
	p.streams(a)
	if in, ok := a.kw["input"]; ok && in.url != "" {
		into := "program"
		if v.k == pyList && len(v.list) > 0 {
			if s, ok := v.list[0].str(); ok {
				into = path.Base(s)
			}
		} else if s, ok := v.str(); ok && !sh {
			into = path.Base(s)
		} else if sh {
			into = "sh"
		}
		p.add(Effect{Kind: Download, Detail: &Detail{URL: in.url, Host: shURLHost(in.url), Into: into}})
	}
	if ex, ok := a.kw["executable"]; ok {
		if s, ok := ex.str(); ok && v.k == pyList && len(v.list) > 0 && !sh {
			v = pyVal{k: pyList, list: append([]pyVal{pyS(s)}, v.list[1:]...)}
		}
	}
	switch {
	case v.k == pyList && sh && len(v.list) > 0:
		p.shellString(v.list[0], q, a)
	case v.k == pyList:
		p.run(v.list, a)
	case sh:
		p.shellString(v, q, a)
	default:
		p.run([]pyVal{v}, a)
	}
	if q == "subprocess.check_output" {
		return listedPids(v, sh, pyVal{}) // its output
	}
	return listedPids(v, sh, pyObjV(&pyObj{typ: "proc"}))
}

// streams marks sockets given to a process as its standard streams.
func (p *py) streams(a *pyArgs) {
	for _, k := range []string{"stdin", "stdout", "stderr"} {
		if v, ok := a.kw[k]; ok {
			if o := sockOf(v); o != nil {
				o.shellFd = true
			}
		}
	}
}

func sockOf(v pyVal) *pyObj {
	if v.k != pyObject {
		return nil
	}
	switch v.obj.typ {
	case "socket":
		return v.obj
	case "fd":
		return v.obj.sock
	}
	return nil
}

func pyExecL(p *py, q string, a *pyArgs) pyVal {
	if len(a.pos) == 0 {
		p.run(nil, a)
		return pyVal{}
	}
	argv := append([]pyVal{a.pos[0]}, a.pos[min(2, len(a.pos)):]...)
	if strings.HasSuffix(q, "e") && len(argv) > 1 {
		argv = argv[:len(argv)-1] // the environment
	}
	p.run(argv, a)
	return pyVal{}
}

func pyExecV(p *py, q string, a *pyArgs) pyVal {
	if len(a.pos) < 2 || a.pos[1].k != pyList {
		p.run(nil, a)
		return pyVal{}
	}
	l := a.pos[1].list
	argv := []pyVal{a.pos[0]}
	if len(l) > 1 {
		argv = append(argv, l[1:]...)
	}
	p.run(argv, a)
	return pyVal{}
}

func pySpawnV(p *py, q string, a *pyArgs) pyVal {
	if len(a.pos) > 0 {
		a.pos = a.pos[1:]
	}
	return pyExecV(p, q, a)
}

func pyExecArgs(skip int) pyHandler {
	return func(p *py, q string, a *pyArgs) pyVal {
		if len(a.pos) <= skip {
			p.run(nil, a)
			return pyVal{}
		}
		argv := a.pos[skip:]
		if skip > 0 && len(argv) > 1 {
			argv = append([]pyVal{argv[0]}, argv[2:]...) // spawnl(mode, path, arg0, ...)
		}
		p.streams(a)
		p.run(argv, a)
		return pyObjV(&pyObj{typ: "proc"})
	}
}

func pyPty(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "argv")
	if v.k == pyList {
		p.run(v.list, a)
	} else {
		p.run([]pyVal{v}, a)
	}
	return pyVal{}
}

func pySocket(p *py, q string, a *pyArgs) pyVal {
	o := &pyObj{typ: "socket"}
	p.sockets = append(p.sockets, o)
	return pyObjV(o)
}

// pyServer reads a socket server made in code (socketserver.TCPServer,
// http.server.HTTPServer): it listens on its address, and with the
// standard library's file handler (SimpleHTTPRequestHandler, also through
// functools.partial) it serves the files under the working directory, or
// under the directory= given to the handler, to whoever connects.
func pyServer(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "server_address")
	h, pt, ok := endpoint(v)
	if !ok {
		p.unknownf("a listen on an address not known before run time: %s", snippet(a.text))
	}
	p.add(Effect{Kind: Listen, Detail: &Detail{Host: h, Port: pt}})
	handler := ""
	if len(a.nodes) > 1 && a.nodes[1] != nil {
		handler = a.nodes[1].text
	} else if n, ok := a.kw["RequestHandlerClass"]; ok {
		handler = n.s
	}
	if strings.Contains(handler, "SimpleHTTPRequestHandler") || strings.Contains(handler, "CGIHTTPRequestHandler") {
		dir := "."
		if m := pyDirectoryKwRE.FindStringSubmatch(handler); m != nil {
			dir = m[2]
		} else if strings.Contains(handler, "directory=") {
			p.unknownf("a file server of a directory not known before run time: %s", snippet(handler))
			return pyVal{}
		}
		if path, ok := p.pathOf(pyS(dir), q, a); ok {
			p.add(Effect{Kind: Read, Path: path, Recursive: true})
		}
	}
	return pyVal{}
}

var pyDirectoryKwRE = regexp.MustCompile(`directory\s*=\s*(['"])([^'"]*)(['"])`)

// endpoint reads a (host, port) address.
func endpoint(v pyVal) (host, port string, ok bool) {
	if v.k == pyList && len(v.list) >= 2 {
		h, ok1 := v.list[0].str()
		pt, ok2 := v.list[1].str()
		if ok1 && ok2 {
			return h, pt, true
		}
	}
	if s, isStr := v.str(); isStr && strings.HasPrefix(s, "/") {
		return s, "", true // a Unix socket
	}
	return "", "", false
}

func (p *py) connect(o *pyObj, addr pyVal, a *pyArgs) {
	h, pt, ok := endpoint(addr)
	if !ok {
		p.unknownf("a connection to an address not known before run time: %s", snippet(a.text))
		h, pt = "?", "?"
	} else if pt == "" && strings.HasPrefix(h, "/") {
		// A Unix socket: a connect with its path and no host, as the
		// shell reader writes curl --unix-socket.
		p.add(Effect{Kind: Connect, Path: h})
	} else {
		p.add(Effect{Kind: Connect, Detail: &Detail{Host: h, Port: pt}})
	}
	if o != nil {
		o.host, o.port = h, pt
	}
}

func pyCreateConn(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "address")
	o := &pyObj{typ: "socket"}
	p.sockets = append(p.sockets, o)
	p.connect(o, v, a)
	return pyObjV(o)
}

// pySQLite reads sqlite3.connect(path): the database file is read and
// written; statements on it are a local file's business, not a shared
// database's (data_loss.database_drop is about those).
func pySQLite(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "database")
	if path, ok := p.pathOf(v, q, a); ok && path != ":memory:" && !strings.HasSuffix(path, "/:memory:") {
		p.add(Effect{Kind: Read, Path: path})
		p.add(Effect{Kind: Write, Path: path})
	}
	return pyObjV(&pyObj{typ: "sqlite"})
}

// pyContainerHostRE and pyContainerRootRE find a container SDK's options
// that hand it the host (privileged=True, pid_mode="host", the host's /).
var (
	pyContainerHostRE = regexp.MustCompile(`privileged\s*=\s*True|pid_mode\s*=\s*["']host|network_mode\s*=\s*["']host|["']/["']\s*:\s*\{`)
	pyContainerRootRE = regexp.MustCompile(`["']/["']\s*:\s*\{`)
)

// pyObjOf returns a constructor of an object the reader follows by type.
func pyObjOf(typ string) pyHandler {
	return func(p *py, q string, a *pyArgs) pyVal { return pyObjV(&pyObj{typ: typ}) }
}

// pySQLVerb is the start of an SQL statement.
var pySQLVerb = regexp.MustCompile(`(?i)^\s*(?:select|insert|update|delete|drop|truncate|alter|create|grant|revoke|with|replace|merge)\b`)

// pyOpenConn reads asyncio.open_connection(host, port): a raw connection.
func pyOpenConn(p *py, q string, a *pyArgs) pyVal {
	h, _ := a.get(0, "host")
	pt, _ := a.get(1, "port")
	o := &pyObj{typ: "socket"}
	p.sockets = append(p.sockets, o)
	hs, ps := valText(h, "?"), valText(pt, "?")
	if hs == "?" {
		p.unknownf("a connection to an address not known before run time: %s", snippet(a.text))
	} else {
		p.add(Effect{Kind: Connect, Detail: &Detail{Host: hs, Port: ps}})
	}
	o.host, o.port = hs, ps
	return pyObjV(o)
}

func pyDup2(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "fd")
	if o := sockOf(v); o != nil {
		o.shellFd = true
	}
	return pyVal{}
}

// urlHostPort returns the host (lower case) and port of a URL with a
// scheme ("" when it has none), read as the shell reader reads URLs.
func urlHostPort(u string) (host, port string) {
	if !strings.Contains(u, "://") {
		return "", ""
	}
	return shURLParts(u)
}

// source says what data a value sends: the path it was read from, "data"
// otherwise.
func source(v pyVal) string {
	switch {
	case v.k == pyObject && v.obj.typ == "file":
		return v.obj.path
	case v.k == pyObject && v.obj.typ == "path":
		return v.obj.path
	case stripPids(v.from) != "":
		return stripPids(v.from)
	case v.k == pyList:
		for _, e := range v.list {
			if s := source(e); s != "data" {
				return s
			}
		}
	}
	return "data"
}

func (p *py) sendHTTP(url string, data []pyVal, a *pyArgs) {
	h, pt := urlHostPort(url)
	p.add(Effect{Kind: Connect, Detail: &Detail{URL: url, Host: h, Port: pt}})
	for _, d := range data {
		p.add(Effect{Kind: Send, Detail: &Detail{URL: url, Host: h, Port: pt, Source: source(d)}})
	}
}

// httpData returns the values a requests-style call sends.
func httpData(a *pyArgs, dataPos int) []pyVal {
	var out []pyVal
	if v, ok := a.get(dataPos, "data"); ok && dataPos >= 0 {
		out = append(out, v)
	} else if v, ok := a.kw["data"]; ok {
		out = append(out, v)
	}
	for _, k := range []string{"json", "files", "content", "body"} {
		if v, ok := a.kw[k]; ok {
			out = append(out, v)
		}
	}
	return out
}

func (p *py) httpURL(v pyVal, a *pyArgs) (string, bool) {
	if s, ok := v.str(); ok {
		return s, true
	}
	p.unknownf("an HTTP request to a URL not known before run time: %s", snippet(a.text))
	return "", false
}

func pyHTTP(kind string) pyHandler {
	return func(p *py, q string, a *pyArgs) pyVal {
		v, _ := a.get(0, "url")
		u, ok := p.httpURL(v, a)
		var data []pyVal
		if kind == "send" {
			data = httpData(a, 1)
		} else {
			data = httpData(a, -1)
		}
		if ok {
			p.sendHTTP(u, data, a)
		}
		return pyObjV(&pyObj{typ: "response", url: u})
	}
}

func pyHTTPRequest(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(1, "url")
	u, ok := p.httpURL(v, a)
	if ok {
		p.sendHTTP(u, httpData(a, -1), a)
	}
	return pyObjV(&pyObj{typ: "response", url: u})
}

func pySession(p *py, q string, a *pyArgs) pyVal { return pyObjV(&pyObj{typ: "session"}) }

func pyRequest(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "url")
	o := &pyObj{typ: "request"}
	if s, ok := v.str(); ok {
		o.url = s
	}
	if d, ok := a.get(1, "data"); ok {
		o.data = &d
	}
	return pyObjV(o)
}

func pyURLOpen(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "url")
	var data []pyVal
	if d, ok := a.get(1, "data"); ok {
		data = append(data, d)
	}
	if v.k == pyObject && v.obj.typ == "request" {
		if v.obj.data != nil {
			data = append(data, *v.obj.data)
		}
		if v.obj.url == "" {
			p.unknownf("an HTTP request to a URL not known before run time: %s", snippet(a.text))
			return pyVal{}
		}
		v = pyS(v.obj.url)
	}
	u, ok := p.httpURL(v, a)
	if ok {
		p.sendHTTP(u, data, a)
	}
	return pyObjV(&pyObj{typ: "response", url: u})
}

func pyURLRetrieve(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "url")
	u, ok := p.httpURL(v, a)
	if !ok {
		return pyVal{}
	}
	h, pt := urlHostPort(u)
	p.add(Effect{Kind: Connect, Detail: &Detail{URL: u, Host: h, Port: pt}})
	if f, ok := a.get(1, "filename"); ok {
		if path, ok := p.pathOf(f, q, a); ok {
			p.add(Effect{Kind: Download, Detail: &Detail{URL: u, Host: h, Port: pt}, Path: path})
			p.add(Effect{Kind: Write, Path: path})
		}
	}
	return pyVal{}
}

func pyHTTPConn(dflt string) pyHandler {
	return func(p *py, q string, a *pyArgs) pyVal {
		h, _ := a.get(0, "host")
		hs, ok := h.str()
		if !ok {
			p.unknownf("a connection to a host not known before run time: %s", snippet(a.text))
			return pyObjV(&pyObj{typ: "conn", host: "?"})
		}
		port := dflt
		if pt, ok := a.get(1, "port"); ok && pt.k == pyStr {
			port = pt.s
		} else if i := strings.LastIndex(hs, ":"); i > 0 {
			hs, port = hs[:i], hs[i+1:]
		}
		p.add(Effect{Kind: Connect, Detail: &Detail{Host: hs, Port: port}})
		return pyObjV(&pyObj{typ: "conn", host: hs, port: port})
	}
}

func pyHostConn(dflt string) pyHandler {
	f := pyHTTPConn(dflt)
	return func(p *py, q string, a *pyArgs) pyVal {
		if len(a.pos) == 0 && a.kw["host"].k == pyUnknown {
			return pyObjV(&pyObj{typ: "conn"}) // connects later
		}
		return f(p, q, a)
	}
}

// pySignals names the common signal numbers.
var pySignals = map[string]string{"1": "HUP", "2": "INT", "3": "QUIT", "6": "ABRT", "9": "KILL",
	"10": "USR1", "12": "USR2", "14": "ALRM", "15": "TERM", "18": "CONT", "19": "STOP", "0": "0"}

func sigName(v pyVal, n *pyNode) string {
	if v.k == pyStr {
		if s, ok := pySignals[v.s]; ok {
			return s
		}
		return v.s
	}
	if v.k == pyName {
		i := strings.LastIndex(v.s, ".")
		return strings.TrimPrefix(v.s[i+1:], "SIG")
	}
	if n != nil {
		return snippet(n.text)
	}
	return "TERM"
}

func pyKill(prefix string) pyHandler {
	return func(p *py, q string, a *pyArgs) pyVal {
		pid, _ := a.get(0, "pid")
		sig, _ := a.get(1, "sig")
		var sn *pyNode
		if len(a.nodes) > 1 {
			sn = a.nodes[1]
		}
		targets := []string{"?"}
		switch {
		case pid.k == pyStr:
			targets = []string{prefix + pid.s}
		case p.killTargets(pid) != nil:
			targets = p.killTargets(pid) // pids listed, or a loop over the processes
		default:
			p.unknownf("a signal to a process not known before run time: %s", snippet(a.text))
		}
		p.add(Effect{Kind: Signal, Detail: &Detail{Targets: targets, Signal: sigName(sig, sn)}})
		return pyVal{}
	}
}

func pyProc(p *py, q string, a *pyArgs) pyVal {
	v, ok := a.get(0, "pid")
	o := &pyObj{typ: "proc", pid: "?"}
	if !ok {
		o.pid = "self"
	} else if v.k == pyStr {
		o.pid = v.s
	} else if t := p.killTargets(v); t != nil {
		o.pid, o.names = "*", t
	}
	return pyObjV(o)
}

func pyProcIter(p *py, q string, a *pyArgs) pyVal { return pyObjV(&pyObj{typ: "procs"}) }

func pyPriv(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "")
	p.add(Effect{Kind: Privilege, Program: strings.TrimPrefix(q, "os."), Detail: &Detail{Mode: valText(v, "?")}})
	return pyVal{}
}

func pyExec(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "source")
	if v.k == pyStr {
		if q == "eval" && !strings.ContainsAny(v.s, "(") {
			// A literal expression with no call: eval("os") is the
			// module os.
			if name := strings.TrimSpace(v.s); pyDottedName.MatchString(name) {
				first, rest, _ := strings.Cut(name, ".")
				if x, ok := p.scope.get(first); ok && x.k == pyName {
					if rest != "" {
						return pyVal{k: pyName, s: x.s + "." + rest}
					}
					return x
				}
				if pyBuiltinModules[first] {
					return pyVal{k: pyName, s: name}
				}
			}
			return pyVal{}
		}
		p.s.nested("python", func() { p.s.python(v.s) })
		return pyVal{}
	}
	if v.url != "" {
		p.add(Effect{Kind: Download, Detail: &Detail{URL: v.url, Host: shURLHost(v.url), Into: "python"}})
	}
	p.s.opaque("python", "", "python: %s of code not known before run time: %s", q, snippet(a.text))
	return pyVal{}
}

func pyExecFile(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "path")
	if _, ok := v.str(); !ok && v.k != pyObject {
		// A file named at run time is run (as bash "$F" is).
		p.s.runsHidden("python", "python: %s of a file not known before run time: %s", q, snippet(a.text))
		return pyVal{}
	}
	if path, ok := p.pathOf(v, q, a); ok {
		p.add(Effect{Kind: Read, Path: path})
		p.s.add(Effect{Kind: Unknown, Detail: &Detail{Into: "python", Reason: fmt.Sprintf("python: %s runs a Python file not read here: %s", q, path)}, Path: path})
	}
	return pyVal{}
}

func pyImport(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "name")
	if v.k == pyStr {
		return pyVal{k: pyName, s: v.s}
	}
	// Importing a module runs its code, and the module is then used
	// unread (__import__(input()).system(...)).
	p.s.runsHidden("python", "python: %s of a module not known before run time: %s", q, snippet(a.text))
	return pyVal{}
}

// pyUnpack: shutil.unpack_archive(src, dst) reads src and writes the tree
// under dst (the agent's directory by default).
func pyUnpack(p *py, q string, a *pyArgs) pyVal {
	src, _ := a.get(0, "filename")
	if sp, ok := p.pathOf(src, q, a); ok {
		p.add(Effect{Kind: Read, Path: sp})
	}
	dst, ok := a.get(1, "extract_dir")
	if !ok {
		dst = pyS(".")
	}
	if dp, ok := p.pathOf(dst, q, a); ok {
		p.add(Effect{Kind: Write, Path: dp, Recursive: true})
	}
	return pyVal{}
}

// pyMakeArchive: shutil.make_archive(base, fmt, root_dir) reads root_dir
// (the agent's directory by default) and writes base.<fmt>.
func pyMakeArchive(p *py, q string, a *pyArgs) pyVal {
	root, ok := a.get(2, "root_dir")
	if !ok {
		root = pyS(".")
	}
	if rp, ok := p.pathOf(root, q, a); ok {
		p.add(Effect{Kind: Read, Path: rp, Recursive: true})
	}
	base, _ := a.get(0, "base_name")
	if bp, ok := p.pathOf(base, q, a); ok {
		p.add(Effect{Kind: Write, Path: bp + ".*"})
		return pyVal{from: resolvedStr(p, root)}
	}
	return pyVal{}
}

// resolvedStr returns the resolved path a string value names, "" if none.
func resolvedStr(p *py, v pyVal) string {
	if s, ok := v.str(); ok {
		return p.s.resolve(s)
	}
	return ""
}

// pyArchive: tarfile.open(p) / zipfile.ZipFile(p) reads or writes p (by
// its mode); extractall on it writes a tree (pathMethod "archive").
func pyArchive(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "name")
	if _, ok := a.kw["file"]; ok {
		v = a.kw["file"]
	}
	if v.url != "" {
		// An archive read from a download (zipfile.ZipFile(io.BytesIO(urlopen(u).read()))).
		return pyObjV(&pyObj{typ: "archive", url: v.url})
	}
	path, ok := p.pathOf(v, q, a)
	if !ok {
		return pyObjV(&pyObj{typ: "archive"})
	}
	mode := "r"
	if m, ok := a.get(1, "mode"); ok {
		mode = valText(m, "w")
	}
	if strings.ContainsAny(mode, "wax") {
		p.add(Effect{Kind: Write, Path: path})
	} else {
		p.add(Effect{Kind: Read, Path: path})
	}
	return pyObjV(&pyObj{typ: "archive", path: path})
}

func pyBrowse(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "url")
	if u, ok := v.str(); ok && strings.Contains(u, "://") {
		h, pt := urlHostPort(u)
		p.add(Effect{Kind: Connect, Detail: &Detail{URL: u, Host: h, Port: pt}})
	}
	return pyVal{}
}

// pyDNS: a name lookup carries the name to the resolver; a name built from
// local data sends that data (DNS exfiltration).
func pyDNS(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "host")
	if v.k == pyStr || (v.from == "" && v.pat == "") {
		return pyVal{}
	}
	host := strings.ReplaceAll(v.pat, pyHole, "*")
	src := v.from
	if src == "" {
		src = "data"
	}
	p.add(Effect{Kind: Send, Detail: &Detail{Host: host, Port: "53", Source: src}})
	return pyVal{}
}

// pySSHClient: paramiko's client; connect(host) is a Connect to port 22,
// exec_command(cmd) a command on that host.
func pySSHClient(p *py, q string, a *pyArgs) pyVal { return pyObjV(&pyObj{typ: "ssh"}) }

// pyTemp: a new temporary directory or file, named as the pattern of the
// names tempfile picks ("/tmp/tmp*", or under dir=).
func pyTemp(file bool) pyHandler {
	return func(p *py, q string, a *pyArgs) pyVal {
		dir := "/tmp"
		if d, ok := a.kw["dir"]; ok {
			s, ok := d.str()
			if !ok {
				p.unknownf("%s in a directory not known before run time: %s", q, snippet(a.text))
				return pyVal{}
			}
			dir = p.s.resolve(s)
		}
		prefix := "tmp"
		if v, ok := a.kw["prefix"]; ok {
			prefix = valText(v, "")
		}
		name := pjoin(dir, prefix+"*")
		if !file {
			p.add(Effect{Kind: Create, Path: name})
			return pyS(name)
		}
		p.add(Effect{Kind: Write, Path: name})
		if q == "tempfile.mkstemp" {
			return pyVal{k: pyList, list: []pyVal{{}, pyS(name)}}
		}
		return pyObjV(&pyObj{typ: "file", path: name})
	}
}

func pyTempDir(p *py, q string, a *pyArgs) pyVal { return pyS("/tmp") }

// pyChr: chr(105) is "i".
func pyChr(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "")
	if v.k == pyStr {
		if n, err := strconv.ParseInt(strings.ReplaceAll(v.s, "_", ""), 0, 32); err == nil && n >= 0 && n <= 0x10FFFF {
			return pyS(string(rune(n)))
		}
	}
	return pyVal{}
}

// pyVars returns the module vars(m) is the namespace of.
func pyVars(p *py, q string, a *pyArgs) pyVal {
	if v, ok := a.get(0, ""); ok && v.k == pyName {
		return v
	}
	return pyVal{}
}

func pyGetattr(p *py, q string, a *pyArgs) pyVal {
	o, _ := a.get(0, "")
	name, _ := a.get(1, "")
	if o.k == pyName && name.k == pyStr {
		return pyVal{k: pyName, s: o.s + "." + name.s}
	}
	if name.k != pyStr {
		if first, _, _ := strings.Cut(o.s, "."); o.k == pyName && pyRunnerModules[first] {
			// getattr(os, name)(cmd): which function of a module that
			// runs programs is called is known only at run time.
			p.s.runsHidden("python", "python: getattr of a name not known before run time: %s", snippet(a.text))
		} else {
			p.unknownf("getattr of a name not known before run time: %s", snippet(a.text))
		}
	}
	return pyVal{}
}

// pyRunnerModules are modules with functions that run programs or code;
// one of their functions chosen at run time runs code unread.
var pyRunnerModules = map[string]bool{"os": true, "posix": true, "nt": true, "subprocess": true, "builtins": true,
	"__builtins__": true, "ctypes": true, "pty": true, "commands": true, "importlib": true, "runpy": true,
	"multiprocessing": true, "asyncio": true, "shutil": true, "platform": true, "popen2": true}

// decode decodes a literal encoded payload; each counts against
// MaxDecodeRounds.
func (p *py) decode(enc, s string) (string, bool) {
	if p.s.decodes >= MaxDecodeRounds {
		p.s.unknown(true, "python: more than %d encoded payloads", MaxDecodeRounds)
		return "", false
	}
	p.s.decodes++
	var b []byte
	var err error
	switch enc {
	case "base64":
		s = strings.Map(func(r rune) rune {
			if r == '\n' || r == ' ' || r == '\r' || r == '\t' {
				return -1
			}
			return r
		}, s)
		b, err = base64.StdEncoding.DecodeString(s)
		if err != nil {
			b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
		}
	case "base64url":
		b, err = base64.URLEncoding.DecodeString(s)
		if err != nil {
			b, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
		}
	case "base32":
		return "", false
	case "hex":
		b, err = hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	case "rot13":
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z':
				return 'a' + (r-'a'+13)%26
			case r >= 'A' && r <= 'Z':
				return 'A' + (r-'A'+13)%26
			}
			return r
		}, s), true
	}
	if err != nil {
		return "", false
	}
	return string(b), true
}

func pyDecode(enc string) pyHandler {
	return func(p *py, q string, a *pyArgs) pyVal {
		v, _ := a.get(0, "")
		if v.k == pyStr {
			if d, ok := p.decode(enc, v.s); ok {
				return pyS(d)
			}
		}
		return pyVal{from: v.from, url: v.url}
	}
}

func pyCodecs(p *py, q string, a *pyArgs) pyVal {
	enc, _ := a.get(1, "encoding")
	e := strings.ReplaceAll(strings.ToLower(valText(enc, "")), "_", "")
	switch e {
	case "rot13", "rot-13":
		return pyDecode("rot13")(p, q, a)
	case "hex", "hexcodec":
		return pyDecode("hex")(p, q, a)
	case "base64", "base64codec":
		return pyDecode("base64")(p, q, a)
	}
	v, _ := a.get(0, "")
	return pyVal{from: v.from, url: v.url}
}

func pyOpaque(p *py, q string, a *pyArgs) pyVal {
	v, _ := a.get(0, "")
	if _, ok := v.str(); ok && q != "marshal.loads" {
		// A pickle written in the code itself (often encoded): loading
		// it runs the functions it names, which the reader does not
		// decode. A pickle file is data the harness treats as a script
		// it cannot see.
		p.s.runsHidden("python", "python: %s of data in the code: it runs what the data names", q)
	}
	if v.url != "" && strings.HasSuffix(q, ".loads") && q != "zlib.decompress" {
		// Unpickling runs code the data names: a download loaded so is
		// a download run unread.
		p.add(Effect{Kind: Download, Detail: &Detail{URL: v.url, Host: shURLHost(v.url), Into: strings.TrimSuffix(q, ".loads")}})
	}
	return pyVal{from: v.from, url: v.url}
}

// method reads a call of a method on a value that is not a module.
func (p *py) method(recv pyVal, m string, a *pyArgs) pyVal {
	taint := pyVal{from: recv.from, url: recv.url}
	if recv.k == pyObject && recv.obj.typ == "sqlite" {
		// A local SQLite or DuckDB file: its cursors are the same file.
		if m == "cursor" {
			return recv
		}
		return taint
	}
	if (m == "run" || m == "create") && pyContainerHostRE.MatchString(a.text) {
		// A container SDK's run (docker, podman): privileged, the host's
		// namespaces or its / mounted are read as docker run's options.
		argv := []string{"docker", m}
		if strings.Contains(a.text, "privileged") {
			argv = append(argv, "--privileged")
		}
		if pyContainerRootRE.MatchString(a.text) {
			argv = append(argv, "-v", "/:/host")
		}
		if strings.Contains(a.text, "pid_mode") {
			argv = append(argv, "--pid=host")
		}
		p.add(Effect{Kind: Run, Program: "docker", Argv: argv})
	}
	if recv.k == pyObject && recv.obj.typ == "configparser" && (m == "read" || m == "read_file") {
		if v, ok := a.get(0, "filenames"); ok {
			if path, ok := p.pathOf(v, m, a); ok {
				p.add(Effect{Kind: Read, Path: path})
			}
		}
		return taint
	}
	if m == "execute" || m == "executescript" || m == "executemany" || m == "exec_driver_sql" {
		// A database cursor's statement: recorded as the run of "sql"
		// with the statement, so that rules over database clients read it.
		if v, ok := a.get(0, "sql"); ok {
			if stmt, ok := v.str(); ok && pySQLVerb.MatchString(stmt) {
				p.add(Effect{Kind: Run, Program: "sql", Argv: []string{"sql", stmt}})
			}
		}
	}
	if recv.k == pyStr {
		switch m {
		case "format", "format_map":
			if v, ok := pyFormatFill(recv.s, a); ok && m == "format" {
				return pyS(v) // "rm -rf {}".format("~") is "rm -rf ~"
			}
			if v := pyBraces.ReplaceAllLiteralString(recv.s, pyHole); v != recv.s {
				taint.pat = v
			}
			for _, x := range a.pos {
				taint.from += x.from
				taint.url += x.url
			}
			return taint
		case "join":
			v, _ := a.get(0, "")
			if v.k == pyList {
				parts := make([]string, len(v.list))
				for i, e := range v.list {
					s, ok := e.str()
					if !ok {
						return taint
					}
					parts[i] = s
				}
				return pyS(strings.Join(parts, recv.s))
			}
			return taint
		case "replace":
			o, _ := a.get(0, "")
			n, _ := a.get(1, "")
			if o.k == pyStr && n.k == pyStr {
				return pyS(strings.ReplaceAll(recv.s, o.s, n.s))
			}
			return taint
		case "strip", "rstrip", "lstrip", "encode", "decode", "lower", "upper":
			switch m {
			case "strip":
				return pyS(strings.TrimSpace(recv.s))
			case "lower":
				return pyS(strings.ToLower(recv.s))
			case "upper":
				return pyS(strings.ToUpper(recv.s))
			case "decode":
				if e, ok := a.get(0, "encoding"); ok && e.k == pyStr {
					if d := strings.ToLower(e.s); d == "hex" || d == "base64" || d == "rot13" {
						if s, ok := p.decode(d, recv.s); ok {
							return pyS(s)
						}
						return taint
					}
				}
			}
			return pyS(recv.s)
		}
		return taint
	}
	if recv.k != pyObject {
		// A method of an object the reader does not follow: a socket-like
		// connect is still read.
		switch m {
		case "connect", "connect_ex":
			if v, ok := a.get(0, ""); ok && v.k == pyList {
				p.connect(nil, v, a)
			}
		case "read", "readlines", "recv", "text", "json", "read_text", "read_bytes":
			return taint
		}
		return taint
	}
	o := recv.obj
	switch o.typ {
	case "path":
		return p.pathMethod(o, m, a)
	case "file":
		switch m {
		case "read", "readlines", "readline", "read1":
			return pyVal{from: o.path}
		case "write", "writelines":
			if v, ok := a.get(0, ""); ok && v.url != "" {
				p.add(Effect{Kind: Download, Detail: &Detail{URL: v.url, Host: shURLHost(v.url)}, Path: o.path})
			}
		case "fileno":
			return pyObjV(&pyObj{typ: "fd", path: o.path})
		}
		return pyVal{}
	case "socket":
		switch m {
		case "connect", "connect_ex":
			v, _ := a.get(0, "address")
			p.connect(o, v, a)
		case "bind":
			v, _ := a.get(0, "address")
			h, pt, ok := endpoint(v)
			if !ok {
				p.unknownf("a listen on an address not known before run time: %s", snippet(a.text))
			}
			o.host, o.port = h, pt
			p.add(Effect{Kind: Listen, Detail: &Detail{Host: h, Port: pt}})
		case "send", "sendall", "sendto", "sendfile", "write":
			v, _ := a.get(0, "")
			if src := source(v); src != "data" || o.host != "" {
				p.add(Effect{Kind: Send, Detail: &Detail{Host: o.host, Port: o.port, Source: src}})
			}
		case "fileno":
			return pyObjV(&pyObj{typ: "fd", sock: o})
		case "makefile", "accept", "dup":
			return recv
		case "recv", "recvfrom", "recv_into", "read", "readline":
			// Data from the network: a command run from it is a
			// download into a shell.
			if o.host != "" || o.port != "" {
				return pyVal{url: "tcp://" + o.host + ":" + o.port}
			}
			return pyVal{}
		}
		return pyVal{}
	case "session":
		switch m {
		case "get", "head", "options", "delete":
			return pyHTTP("")(p, m, a)
		case "post", "put", "patch":
			return pyHTTP("send")(p, m, a)
		case "request", "stream":
			return pyHTTPRequest(p, m, a)
		}
	case "conn":
		switch m {
		case "request", "putrequest":
			u, _ := a.get(1, "url")
			url := ""
			if s, ok := u.str(); ok {
				url = s
			}
			if !strings.Contains(url, "://") {
				url = "" // a path on the connection's host
			}
			if body, ok := a.get(2, "body"); ok {
				p.add(Effect{Kind: Send, Detail: &Detail{Host: o.host, Port: o.port, URL: url, Source: source(body)}})
			}
		case "send":
			v, _ := a.get(0, "")
			p.add(Effect{Kind: Send, Detail: &Detail{Host: o.host, Port: o.port, Source: source(v)}})
		case "storbinary", "storlines":
			v, _ := a.get(1, "fp")
			p.add(Effect{Kind: Send, Detail: &Detail{Host: o.host, Port: o.port, Source: source(v)}})
		case "sendmail", "send_message":
			p.add(Effect{Kind: Send, Detail: &Detail{Host: o.host, Port: o.port, Source: "data"}})
		case "connect":
			h, _ := a.get(0, "host")
			if hs, ok := h.str(); ok {
				port := ""
				if pt, ok := a.get(1, "port"); ok {
					port = valText(pt, "")
				}
				o.host, o.port = hs, port
				p.add(Effect{Kind: Connect, Detail: &Detail{Host: hs, Port: port}})
			}
		case "getresponse":
			return pyObjV(&pyObj{typ: "response", url: o.host})
		}
		return pyVal{}
	case "response":
		switch m {
		case "read", "json", "iter_content", "iter_lines", "decode":
			return pyVal{url: o.url}
		}
		return pyVal{url: o.url}
	case "proc":
		sig := ""
		switch m {
		case "kill":
			sig = "KILL"
		case "terminate":
			sig = "TERM"
		case "suspend":
			sig = "STOP"
		case "send_signal":
			v, _ := a.get(0, "")
			var n *pyNode
			if len(a.nodes) > 0 {
				n = a.nodes[0]
			}
			sig = sigName(v, n)
		case "communicate":
			if in, ok := a.get(0, "input"); ok && in.url != "" {
				p.add(Effect{Kind: Download, Detail: &Detail{URL: in.url, Host: shURLHost(in.url), Into: "program"}})
			}
		}
		if sig != "" && o.pid != "" {
			targets := []string{o.pid}
			if o.pid == "*" && len(o.names) > 0 {
				targets = o.names
			} else if o.pid == "*" && len(p.procs) > 0 {
				targets = p.procs
			}
			p.add(Effect{Kind: Signal, Detail: &Detail{Targets: targets, Signal: sig}})
		}
		return pyVal{}
	case "fd":
		return pyVal{}
	case "archive":
		switch m {
		case "extractall", "extract":
			d, ok := a.get(0, "path")
			if m == "extract" {
				d, ok = a.get(1, "path")
			}
			if !ok {
				d = pyS(".")
			}
			if dp, ok := p.pathOf(d, "extractall", a); ok {
				p.add(Effect{Kind: Write, Path: dp, Recursive: true})
				if o.url != "" {
					p.add(Effect{Kind: Download, Detail: &Detail{URL: o.url, Host: shURLHost(o.url)}, Path: dp, Recursive: true})
				}
			}
		case "add", "write":
			v, _ := a.get(0, "name")
			if sp, ok := p.pathOf(v, m, a); ok {
				p.add(Effect{Kind: Read, Path: sp, Recursive: m == "add"})
			}
		}
		return pyVal{}
	case "ssh":
		switch m {
		case "connect":
			h, _ := a.get(0, "hostname")
			hs, ok := h.str()
			if !ok {
				p.unknownf("an SSH connection to a host not known before run time: %s", snippet(a.text))
				hs = "?"
			}
			port := "22"
			if pt, ok := a.get(1, "port"); ok && pt.k == pyStr {
				port = pt.s
			}
			o.host, o.port = hs, port
			p.add(Effect{Kind: Connect, Detail: &Detail{Host: hs, Port: port}})
		case "exec_command":
			v, _ := a.get(0, "command")
			if cmd, ok := v.str(); ok {
				before := len(p.s.out)
				p.s.nested("sh", func() { shellReader(p.s, cmd) })
				for i := before; i < len(p.s.out); i++ {
					if p.s.out[i].Remote() == "" {
						p.s.out[i].ownDetail().Remote = o.host // the command runs there
					}
				}
			} else {
				p.unknownf("an SSH command not known before run time: %s", snippet(a.text))
			}
		}
		return pyVal{}
	}
	return taint
}

func (p *py) pathMethod(o *pyObj, m string, a *pyArgs) pyVal {
	at := func() (string, bool) {
		if o.path == "" {
			p.unknownf("Path.%s of a path not known before run time: %s", m, snippet(a.text))
			return "", false
		}
		return p.s.resolve(o.path), true
	}
	switch m {
	case "resolve", "absolute", "expanduser", "with_suffix", "with_name":
		if m == "with_suffix" || m == "with_name" {
			v, _ := a.get(0, "")
			s, ok := v.str()
			if !ok || o.path == "" {
				return pyObjV(&pyObj{typ: "path"})
			}
			if m == "with_name" {
				return pyObjV(&pyObj{typ: "path", path: path.Join(path.Dir(o.path), s)})
			}
			return pyObjV(&pyObj{typ: "path", path: strings.TrimSuffix(o.path, path.Ext(o.path)) + s})
		}
		return pyObjV(o)
	case "joinpath":
		parts := []string{o.path}
		for _, v := range a.pos {
			s, ok := v.str()
			if !ok || o.path == "" {
				return pyObjV(&pyObj{typ: "path"})
			}
			parts = append(parts, s)
		}
		return pyObjV(&pyObj{typ: "path", path: pjoin(parts...)})
	case "unlink", "rmdir":
		if pth, ok := at(); ok {
			p.add(Effect{Kind: Delete, Path: pth})
		}
	case "write_text", "write_bytes":
		if pth, ok := at(); ok {
			p.add(Effect{Kind: Write, Path: pth})
			if v, ok := a.get(0, "data"); ok && v.url != "" {
				p.add(Effect{Kind: Download, Detail: &Detail{URL: v.url, Host: shURLHost(v.url)}, Path: pth})
			}
		}
	case "read_text", "read_bytes":
		if pth, ok := at(); ok {
			p.add(Effect{Kind: Read, Path: pth})
			return pyVal{from: pth}
		}
	case "open":
		if pth, ok := at(); ok {
			mode := "r"
			if v, ok := a.get(0, "mode"); ok {
				mode = valText(v, "w+")
			}
			p.fileEffect(pth, mode)
			return pyObjV(&pyObj{typ: "file", path: pth})
		}
	case "rename", "replace":
		if pth, ok := at(); ok {
			v, _ := a.get(0, "target")
			if d, ok := p.pathOf(v, "Path."+m, a); ok {
				p.add(Effect{Kind: Move, Path: pth, Dest: d})
				return pyObjV(&pyObj{typ: "path", path: d})
			}
		}
	case "chmod", "lchmod":
		if pth, ok := at(); ok {
			v, _ := a.get(0, "mode")
			var n *pyNode
			if len(a.nodes) > 0 {
				n = a.nodes[0]
			}
			p.add(Effect{Kind: Chmod, Path: pth, Detail: &Detail{Mode: pyMode(v, n)}})
		}
	case "mkdir", "touch":
		if pth, ok := at(); ok {
			p.add(Effect{Kind: Create, Path: pth})
		}
	case "symlink_to", "hardlink_to":
		if pth, ok := at(); ok {
			v, _ := a.get(0, "target")
			t, _ := v.str()
			if t != "" {
				t = p.s.resolve(t)
			}
			p.add(Effect{Kind: Create, Path: pth, Dest: t})
		}
	case "iterdir", "glob", "rglob":
		if pth, ok := at(); ok {
			p.add(Effect{Kind: Read, Path: pth, Recursive: m == "rglob"})
			pat := "*"
			if v, ok := a.get(0, "pattern"); ok && m != "iterdir" {
				pat = valText(v, "*")
			}
			if m == "rglob" {
				pat = "**/" + pat
			}
			return pyVal{k: pyList, list: []pyVal{pyObjV(&pyObj{typ: "path", path: pjoin(pth, pat)})}}
		}
	}
	return pyVal{}
}

// argv is sys.argv when the command line that runs the code is known:
// the arguments known statically are strings, the others values not
// known. Otherwise it is a value not known.
func (p *py) argv() pyVal {
	if !p.s.pyArgvSet {
		return pyVal{}
	}
	l := make([]pyVal, len(p.s.pyArgv))
	for i, a := range p.s.pyArgv {
		if a != argvUnknown {
			l[i] = pyS(a)
		}
	}
	return pyVal{k: pyList, list: l}
}

// pyPercentFill fills a format string's %s conversions from values known
// before run time (one string, or a tuple of strings); %% is a percent
// sign. Any other conversion, or a value not known, is not filled.
func pyPercentFill(f string, r pyVal) (string, bool) {
	var vals []pyVal
	if r.k == pyList {
		vals = r.list
	} else {
		vals = []pyVal{r}
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		if i+1 >= len(f) {
			return "", false
		}
		switch f[i+1] {
		case '%':
			b.WriteByte('%')
		case 's':
			if n >= len(vals) {
				return "", false
			}
			v, ok := vals[n].str()
			if !ok {
				return "", false
			}
			b.WriteString(v)
			n++
		default:
			return "", false
		}
		i++
	}
	return b.String(), n == len(vals)
}

// pyFormatFill fills a str.format template's {} and {N} fields from
// positional values known before run time; {{ and }} are braces. Named
// fields, conversions and format specs are not filled.
func pyFormatFill(f string, a *pyArgs) (string, bool) {
	if a.splat || len(a.kw) > 0 {
		return "", false
	}
	var b strings.Builder
	auto := 0
	for i := 0; i < len(f); i++ {
		c := f[i]
		switch {
		case c == '{' && i+1 < len(f) && f[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(f) && f[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(f[i:], '}')
			if end < 0 {
				return "", false
			}
			field := f[i+1 : i+end]
			idx := auto
			if field == "" {
				auto++
			} else {
				k, err := strconv.Atoi(field)
				if err != nil || k < 0 {
					return "", false
				}
				idx = k
			}
			if idx >= len(a.pos) {
				return "", false
			}
			v, ok := a.pos[idx].str()
			if !ok {
				return "", false
			}
			b.WriteString(v)
			i += end
		case c == '}':
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}
