package effects

// Functions and classes defined in the code read (def, lambda, class).
//
// A call of a function the code defines is read by reading the function's
// body with its parameters bound to the values of the call's arguments
// (what the reader knows of them: an unknown argument stays unknown), so
// that def run(c): subprocess.call(c, shell=True) then run("rm -rf ~") runs
// rm -rf ~. Its return value is what its return statements give. Methods
// of a class the code defines are read the same way, with self the
// instance (whose attributes the reader follows). A function the reader
// does not see called (never called, or given as a value to a call, a
// decorator, a list: run later with arguments not read) is read once more
// at the end with its parameters unknown, as every function was before;
// so are functions past a bound (recursion, depth, number of calls read),
// where the reading is also marked as reaching a limit of the analysis.

// pyFunc is a function (def or lambda) the code defines.
type pyFunc struct {
	node     *pyNode  // function_definition or lambda
	closure  *pyScope // the scope its body's free names are read in
	defaults map[string]pyVal
	escaped  bool // given as a value: run with arguments not read
	inlined  bool // read at a call at least once
	generic  bool // read with its parameters unknown
	active   int  // calls of it being read (recursion)
}

// pyClass is a class the code defines: its attributes and methods, and
// those of the classes it names as bases (an unknown base makes its
// methods callable by code not read: they are read with unknown values at
// the end, unless seen called).
type pyClass struct {
	vars  map[string]pyVal
	bases []*pyClass
}

func (c *pyClass) lookup(name string) (pyVal, bool) {
	if v, ok := c.vars[name]; ok {
		return v, true
	}
	for _, b := range c.bases {
		if v, ok := b.lookup(name); ok {
			return v, true
		}
	}
	return pyVal{}, false
}

// escape marks every method of a class as run with arguments not read.
func (c *pyClass) escape() {
	for _, v := range c.vars {
		if v.k == pyObject && v.obj.fn != nil {
			v.obj.fn.escaped = true
		}
	}
	for _, b := range c.bases {
		b.escape()
	}
}

// pyFrame is a call being read: the values its return statements give.
type pyFrame struct {
	ret  pyVal
	nret int
}

const (
	// pyMaxInlines bounds the calls of local functions read in one reading.
	pyMaxInlines = 256
	// pyMaxCallDepth bounds calls of local functions read inside one another.
	pyMaxCallDepth = 16
)

// define records a def (or a lambda) and returns its value.
func (p *py) define(n *pyNode) pyVal {
	f := &pyFunc{node: n, closure: p.scope, defaults: map[string]pyVal{}}
	if p.scope.class != nil {
		f.closure = p.scope.parent // a method does not see its class's names
	}
	if params := n.child("parameters"); params != nil {
		for _, prm := range params.namedKids() {
			if d := prm.child("value"); d != nil {
				v := p.eval(d) // defaults are computed where the function is defined
				if name := paramName(prm); name != "" {
					f.defaults[name] = v
				}
			}
		}
	}
	p.funcs = append(p.funcs, f)
	return pyObjV(&pyObj{typ: "func", fn: f})
}

// defineClass reads a class statement: its body runs where it is defined.
func (p *py) defineClass(n *pyNode) {
	c := &pyClass{}
	unknownBase := false
	if sup := n.child("superclasses"); sup != nil {
		for _, b := range sup.namedKids() {
			v := pyVal{}
			if b.kind == "identifier" {
				v, _ = p.scope.get(b.text)
			}
			if v.k == pyObject && v.obj.cls != nil {
				c.bases = append(c.bases, v.obj.cls)
			} else {
				p.eval(b)
				unknownBase = true
			}
		}
	}
	outer := p.scope
	p.scope = &pyScope{vars: map[string]pyVal{}, parent: outer, class: c}
	p.cond++
	p.walk(n.child("body"))
	p.cond--
	c.vars = p.scope.vars
	p.scope = outer
	if unknownBase {
		// Framework classes (Thread, a request handler) call methods
		// themselves.
		c.escape()
	}
	if name := n.child("name"); name != nil {
		p.set(name.text, pyObjV(&pyObj{typ: "class", cls: c}))
	}
}

// callLocal reads a call of a function or class the code defines. self is
// the instance a method is called on (nil for a function).
func (p *py) callLocal(callee pyVal, self *pyObj, a *pyArgs) pyVal {
	o := callee.obj
	if o.cls != nil {
		inst := &pyObj{typ: "instance", cls: o.cls, attrs: map[string]pyVal{}}
		if init, ok := o.cls.lookup("__init__"); ok && init.k == pyObject && init.obj.fn != nil {
			p.inline(init.obj.fn, inst, a)
		}
		return pyObjV(inst)
	}
	return p.inline(o.fn, self, a)
}

// inline reads a function's body with its parameters bound to a call's
// arguments and returns what it returns.
func (p *py) inline(f *pyFunc, self *pyObj, a *pyArgs) pyVal {
	if f.active > 0 || p.depth >= pyMaxCallDepth || p.inlines >= pyMaxInlines {
		// Recursion, or past a bound: read with unknown values at the end.
		f.generic = true
		if f.active == 0 && !p.limited {
			p.limited = true
			p.s.unknown(true, "python: more than %d calls of local functions read (or %d inside one another)", pyMaxInlines, pyMaxCallDepth)
		}
		return a.taint()
	}
	p.inlines++
	p.depth++
	f.active++
	f.inlined = true
	outer, prevFrame := p.scope, p.frame
	p.scope = &pyScope{vars: map[string]pyVal{}, parent: f.closure}
	// The body's own names are assigned for sure when it runs; what it
	// changes outside them (an instance's attributes) only as surely as
	// the call runs.
	prevCond, prevBase := p.cond, p.condBase
	p.condBase += p.cond
	p.cond = 0
	fr := &pyFrame{}
	p.frame = fr
	p.bindParams(f, self, a)
	body := f.node.child("body")
	if f.node.kind == "lambda" {
		p.ret(p.eval(body))
	} else {
		p.walk(body)
	}
	p.scope, p.frame = outer, prevFrame
	p.cond, p.condBase = prevCond, prevBase
	f.active--
	p.depth--
	if fr.nret == 0 {
		return pyS("None")
	}
	return fr.ret
}

// bindParams binds a function's parameters to a call's arguments: by
// position, by keyword, else the default; *args and **kwargs, and every
// parameter of a call that spreads a list or dict, are unknown.
func (p *py) bindParams(f *pyFunc, self *pyObj, a *pyArgs) {
	pos := a.pos
	if self != nil {
		pos = append([]pyVal{pyObjV(self)}, pos...)
	}
	params := f.node.child("parameters")
	i := 0
	kwOnly := false
	for _, prm := range params.namedKids() {
		name := paramName(prm)
		switch prm.kind {
		case "list_splat_pattern":
			var rest []pyVal
			if i < len(pos) {
				rest = pos[i:]
				i = len(pos)
			}
			if a.splat {
				p.scope.vars[name] = a.taint()
			} else {
				p.scope.vars[name] = pyVal{k: pyList, list: rest}
			}
			kwOnly = true
			continue
		case "dictionary_splat_pattern":
			p.scope.vars[name] = a.taint()
			continue
		case "keyword_separator":
			kwOnly = true
			continue
		case "positional_separator":
			continue
		}
		if name == "" {
			continue
		}
		v, ok := a.kw[name]
		if !ok && !kwOnly && i < len(pos) {
			v, ok = pos[i], true
			i++
		}
		if !ok {
			if a.splat {
				v, ok = a.taint(), true
			} else {
				v, ok = f.defaults[name]
			}
		}
		if !ok {
			v = pyVal{}
		}
		p.scope.vars[name] = v
	}
}

// ret records a value a function being read returns.
func (p *py) ret(v pyVal) {
	fr := p.frame
	if fr == nil {
		return
	}
	fr.nret++
	if fr.nret == 1 {
		fr.ret = v
		return
	}
	old := fr.ret
	same := (old.k == pyStr && v.k == pyStr && old.s == v.s) ||
		(old.k == pyObject && v.k == pyObject && old.obj == v.obj)
	if !same {
		t := (&pyArgs{pos: []pyVal{old, v}}).taint()
		fr.ret = t
	}
}

// readUncalled reads, with their parameters unknown, the functions that
// may run with arguments the reader did not follow.
func (p *py) readUncalled() {
	for i := 0; i < len(p.funcs); i++ { // reading one may define more
		f := p.funcs[i]
		if f.generic && f.active == 0 || f.escaped || !f.inlined {
			f.escaped, f.generic, f.inlined = false, false, true
			p.readGeneric(f)
		}
	}
}

// readGeneric reads a function's body with its parameters unknown.
func (p *py) readGeneric(f *pyFunc) {
	outer, prevFrame := p.scope, p.frame
	p.scope = &pyScope{vars: map[string]pyVal{}, parent: f.closure}
	p.frame = nil
	if params := f.node.child("parameters"); params != nil {
		for _, prm := range params.namedKids() {
			if name := paramName(prm); name != "" {
				p.scope.vars[name] = pyVal{}
			}
		}
	}
	p.cond++
	f.active++
	if f.node.kind == "lambda" {
		p.eval(f.node.child("body"))
	} else {
		p.walk(f.node.child("body"))
	}
	f.active--
	p.cond--
	p.scope, p.frame = outer, prevFrame
}

// escapeVal marks a function, or the methods of a class or instance, given
// as a value somewhere the reader does not follow.
func escapeVal(v pyVal) {
	if v.k != pyObject {
		return
	}
	switch {
	case v.obj.fn != nil:
		v.obj.fn.escaped = true
	case v.obj.cls != nil:
		v.obj.cls.escape()
	}
}

// setAttr assigns obj.name = v on an instance (or class) the reader
// follows; on a path that may not run, the value differs from the old one
// is not known.
func (p *py) setAttr(attrs map[string]pyVal, name string, v pyVal) {
	if p.cond+p.condBase > 0 {
		if old, ok := attrs[name]; ok && !(old.k == pyStr && v.k == pyStr && old.s == v.s) &&
			!(old.k == pyObject && v.k == pyObject && old.obj == v.obj) {
			v = pyVal{from: v.from + old.from, url: v.url + old.url}
		}
	}
	attrs[name] = v
}

// localCallee returns the function or class a call names, when the code
// defines it.
func localCallee(v pyVal) bool {
	return v.k == pyObject && (v.obj.fn != nil || (v.obj.cls != nil && v.obj.typ == "class"))
}

// instAttr reads an attribute of an instance: its own, else its class's.
func instAttr(o *pyObj, name string) (pyVal, bool) {
	if v, ok := o.attrs[name]; ok {
		return v, true
	}
	if o.cls != nil {
		return o.cls.lookup(name)
	}
	return pyVal{}, false
}
