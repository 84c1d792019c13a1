package effects

import "strings"

// Functions defined in Node, PHP and Perl code, for the scanner: a call
// f(ARGS) of a function the code defines (function f(a) {…}, const f = (a)
// => …, f = a => …, f = function (a) {…}; PHP's function f($a) {…}; Perl's
// sub f { my ($a) = @_; … } or my $a = shift) reads the body again with
// each parameter bound to its argument when the argument is a literal the
// scanner computes (else the parameter is not known, as before). The body
// is also read where it is written, with its parameters not known, as
// before: a function the scanner does not see called with arguments it
// follows (a callback, an export, recursion) is read at the end with its
// parameters not known. Ruby's def … end is not followed. Bounded: calls read
// inside one another and calls read in all; past them an analysis limit.

// scFunc is a function the scanned code defines.
type scFunc struct {
	params   []string
	defaults map[string][]scTok
	body     []scTok
	name     string
	nameTok  *scTok // the name where it is defined
	start    int    // the definition's first token, an index in the code's tokens
	end      int    // the index after its last
	active   bool
	inlined  bool // read at a call
	generic  bool // to be read with its parameters not known
}

const (
	scMaxInlines   = 64
	scMaxCallDepth = 8
)

// scMatch returns the index of the bracket closing the one at t[i], or -1.
func scMatch(t []scTok, i int) int {
	open := t[i].s
	cl := map[string]string{"(": ")", "[": "]", "{": "}"}[open]
	depth := 0
	for j := i; j < len(t); j++ {
		if t[j].k != tkPunct {
			continue
		}
		switch t[j].s {
		case open:
			depth++
		case cl:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// scParams reads a parameter list t[open+1:close].
func scParams(t []scTok, f *scFunc) {
	var cur []scTok
	flush := func() {
		if len(cur) > 0 && cur[0].k == tkIdent {
			name := scVarName(cur[0].s)
			f.params = append(f.params, name)
			if len(cur) > 2 && cur[1].s == "=" {
				f.defaults[name] = cur[2:]
			}
		} else {
			f.params = append(f.params, "") // a pattern: not followed
		}
		cur = nil
	}
	depth := 0
	for _, tok := range t {
		if tok.k == tkPunct {
			switch tok.s {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			case ",":
				if depth == 0 {
					flush()
					continue
				}
			}
		}
		cur = append(cur, tok)
	}
	if len(cur) > 0 {
		flush()
	}
}

// collectFuncs finds the functions the code defines.
func (sc *scanner) collectFuncs() {
	t := sc.toks
	is := func(i int, s string) bool { return i < len(t) && t[i].k == tkPunct && t[i].s == s }
	// body reads a function from its "(" at i (or a bare parameter).
	fn := func(i int) *scFunc {
		f := &scFunc{defaults: map[string][]scTok{}}
		switch {
		case is(i, "("):
			c := scMatch(t, i)
			if c < 0 {
				return nil
			}
			scParams(t[i+1:c], f)
			i = c + 1
		case i < len(t) && t[i].k == tkIdent && is(i+1, "=") && is(i+2, ">"):
			f.params = []string{scVarName(t[i].s)}
			i++
		default:
			return nil
		}
		if is(i, "=") && is(i+1, ">") {
			i += 2
			if !is(i, "{") {
				// An arrow with an expression body: up to the end of the
				// statement.
				j := i
				depth := 0
				for ; j < len(t); j++ {
					if t[j].k == tkPunct {
						switch t[j].s {
						case "(", "[", "{":
							depth++
						case ")", "]", "}":
							depth--
						case ";", ",":
							if depth == 0 {
								goto done
							}
						}
						if depth < 0 {
							break
						}
					}
					if j > i && t[j].nl && depth == 0 {
						break
					}
				}
			done:
				f.body = t[i:j]
				f.end = j
				return f
			}
		}
		if !is(i, "{") {
			return nil
		}
		c := scMatch(t, i)
		if c < 0 {
			return nil
		}
		f.body = t[i+1 : c]
		f.end = c + 1
		return f
	}
	for i := 0; i+2 < len(t); i++ {
		if t[i].k != tkIdent {
			continue
		}
		var name string
		var f *scFunc
		at := i
		switch {
		case strings.EqualFold(t[i].s, "function") && t[i+1].k == tkIdent && is(i+2, "("):
			name, f, at = t[i+1].s, fn(i+2), i+1
		case sc.lang == "perl" && t[i].s == "sub" && t[i+1].k == tkIdent && is(i+2, "{"):
			name, f, at = t[i+1].s, perlSub(t, i+2), i+1
		case sc.lang == "node" && is(i+1, "="):
			j := i + 2
			if j < len(t) && t[j].s == "async" {
				j++
			}
			if j < len(t) && t[j].s == "function" {
				j++
				if j < len(t) && t[j].k == tkIdent {
					j++
				}
			}
			name, f = t[i].s, fn(j)
		}
		if f != nil && name != "" {
			if sc.funcs == nil {
				sc.funcs = map[string]*scFunc{}
				sc.defs = map[*scTok]*scFunc{}
			}
			f.name, f.nameTok, f.start = name, &t[at], i
			sc.funcs[name] = f
			sc.defs[&t[i]] = f
			sc.funcList = append(sc.funcList, f)
		}
	}
}

// perlSub reads sub NAME { my ($a, $b) = @_; … } or { my $a = shift; … }.
func perlSub(t []scTok, open int) *scFunc {
	c := scMatch(t, open)
	if c < 0 {
		return nil
	}
	f := &scFunc{defaults: map[string][]scTok{}, end: c + 1}
	body := t[open+1 : c]
	i := 0
	for {
		switch {
		case i+1 < len(body) && body[i].s == "my" && body[i+1].s == "(":
			cl := scMatch(body, i+1)
			if cl < 0 || cl+2 >= len(body) || body[cl+1].s != "=" || body[cl+2].s != "@_" {
				f.body = body[i:]
				return f
			}
			scParams(body[i+2:cl], f)
			i = cl + 3
		case i+3 < len(body) && body[i].s == "my" && body[i+1].k == tkIdent && body[i+2].s == "=" && body[i+3].s == "shift":
			f.params = append(f.params, scVarName(body[i+1].s))
			i += 4
		default:
			f.body = body[i:]
			return f
		}
		if i < len(body) && body[i].s == ";" {
			i++
		}
	}
}

// inline reads a call of a function the code defines with its arguments.
// A body is read only at its calls, and at the end when it may run with
// arguments not read (readUncalled).
func (sc *scanner) inline(f *scFunc, args [][]scTok) {
	if f.active {
		f.generic = true // recursion: read with its parameters not known
		return
	}
	if sc.depth >= scMaxCallDepth || sc.inlines >= scMaxInlines {
		f.generic = true
		if !sc.limited {
			sc.limited = true
			sc.s.unknown(true, "%s: more than %d calls of local functions read (or %d inside one another)", sc.lang, scMaxInlines, scMaxCallDepth)
		}
		return
	}
	sc.inlines++
	sc.depth++
	f.active = true
	f.inlined = true
	saved := map[string]scTok{}
	had := map[string]bool{}
	for i, name := range f.params {
		if name == "" {
			continue
		}
		saved[name], had[name] = sc.vars[name]
		arg, ok := []scTok(nil), false
		if i < len(args) {
			arg, ok = args[i], true
		} else if d, dok := f.defaults[name]; dok {
			arg, ok = d, true
		}
		if v, n := sc.expr(arg); ok && n > 0 && n == len(arg) {
			sc.vars[name] = v
		} else {
			delete(sc.vars, name)
		}
	}
	prev := sc.toks
	sc.toks = f.body
	sc.read()
	sc.toks = prev
	for name := range saved {
		if had[name] {
			sc.vars[name] = saved[name]
		} else {
			delete(sc.vars, name)
		}
	}
	f.active = false
	sc.depth--
}

// readUncalled reads, with their parameters not known, the functions the
// scanner did not see called with arguments it follows: never called,
// named other than in a call (a callback, an export), or past a bound.
func (sc *scanner) readUncalled() {
	if len(sc.funcList) == 0 {
		return
	}
	escaped := map[string]bool{}
	for i := range sc.toks {
		tok := &sc.toks[i]
		if tok.k != tkIdent || sc.funcs[tok.s] == nil {
			continue
		}
		if i+1 < len(sc.toks) && sc.toks[i+1].s == "(" {
			continue
		}
		if f := sc.funcs[tok.s]; f.nameTok != tok {
			escaped[tok.s] = true
		}
	}
	for _, f := range sc.funcList {
		if f.inlined && !f.generic && !escaped[f.name] && sc.funcs[f.name] == f {
			continue
		}
		saved := map[string]scTok{}
		for _, p := range f.params {
			if v, ok := sc.vars[p]; ok {
				saved[p] = v
			}
			delete(sc.vars, p)
		}
		f.active = true
		prev := sc.toks
		sc.toks = f.body
		sc.read()
		sc.toks = prev
		f.active = false
		for p, v := range saved {
			sc.vars[p] = v
		}
	}
}

// evalDownloads records code evaluated that the same code downloaded: a
// call of eval (or a runner given as a value, .then(eval)) whose code is
// not known, in code that fetches a URL, runs what it fetched (as curl
// URL | sh does).
func (sc *scanner) evalDownloads() {
	if !sc.evalHidden {
		return
	}
	seen := map[string]bool{}
	for _, c := range sc.conns {
		key := c.URL()
		if key == "" {
			key = c.Host() + ":" + c.Port()
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		sc.add(Effect{Kind: Download, Detail: &Detail{URL: c.URL(), Host: c.Host(), Port: c.Port(), Into: sc.lang}})
	}
	for _, u := range sc.evalURLs {
		if !seen[u] {
			seen[u] = true
			sc.add(Effect{Kind: Download, Detail: &Detail{URL: u, Host: shURLHost(u), Into: sc.lang}})
		}
	}
}

// scRunnerValues are Node's functions that run code, given as a value
// (fetch(u).then(r => r.text()).then(eval)).
var scRunnerValues = map[string]bool{"eval": true, "Function": true, "vm.runInThisContext": true,
	"vm.runInNewContext": true, "vm.runInContext": true}
