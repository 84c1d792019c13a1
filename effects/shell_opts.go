package effects

import (
	"fmt"
	"path"
	"strings"
	"sync"
)

// shCall is one program run by the shell, as the table of programs sees it.
type shCall struct {
	r    *sh
	prog string    // base name
	ws   []sword   // the words, ws[0] the program as written
	in   *shStream // standard input
	env  []shAssign
	// lastPat is the last glob pattern whose own effect file recorded.
	lastPat string
}

func (c *shCall) args() []sword { return c.ws[1:] }

// shOpt is one option met on a command line, with its value when it takes one.
type shOpt struct {
	name string
	val  sword
}

// shParsed is a command line split into options and operands.
type shParsed struct {
	opts []shOpt
	ops  []sword
	rest []sword // with stopAtOperand: the operand and everything after it
}

func (p *shParsed) has(names ...string) bool {
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n {
				return true
			}
		}
	}
	return false
}

// get returns the last value of the named options.
func (p *shParsed) get(names ...string) (sword, bool) {
	var v sword
	found := false
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n {
				v, found = o.val, true
			}
		}
	}
	return v, found
}

func (p *shParsed) all(names ...string) []sword {
	var out []sword
	for _, o := range p.opts {
		for _, n := range names {
			if o.name == n {
				out = append(out, o.val)
			}
		}
	}
	return out
}

// shOptSet is the options of a program that take a value, e.g.
// shOptSet("-o --output").
type shOptSet map[string]bool

func shOpts(spec string) shOptSet {
	if m, ok := shOptCache.Load(spec); ok {
		return m.(shOptSet)
	}
	m := shOptSet{}
	for _, f := range strings.Fields(spec) {
		m[f] = true
	}
	shOptCache.Store(spec, m)
	return m
}

// shOptCache keeps the option sets built from the literal specs in the
// handlers, so that each is built once.
var shOptCache sync.Map

// parseOpts splits args in the getopt way: "-abc" clusters, "-ofile" and
// "-o file" for options that take a value, "--long=value" and "--long
// value", "--" ending the options. With stopAtOperand, the first operand
// ends the options (wrappers: what follows is another command line).
func (c *shCall) parseOpts(args []sword, valued shOptSet, stopAtOperand bool) *shParsed {
	return parseOptsIn(c.r.s.mem, args, valued, stopAtOperand)
}

// parseOptsIn is parseOpts, allocating from mem (nil: no arena).
func parseOptsIn(mem *arena, args []sword, valued shOptSet, stopAtOperand bool) *shParsed {
	nopt := 0 // at most this many options: one per letter of a cluster
	for _, w := range args {
		if len(w.arg) > 1 && w.arg[0] == '-' {
			if w.arg[1] == '-' {
				nopt++
			} else {
				nopt += len(w.arg) - 1
			}
		}
	}
	p := mem.newParsed()
	if nopt == 0 {
		// Operands only (the common "cat file"): no copy.
		p.ops, p.rest = args, args
		return p
	}
	p.opts = mem.shOpts(min(nopt, 16))
	ops := opsBuilder{args: args, start: -1, mem: mem}
	for i := 0; i < len(args); i++ {
		w := args[i]
		a := w.val
		if !w.known && strings.HasPrefix(w.arg, "--") && strings.Contains(w.arg, "=") {
			// --name="$(...)": the option is known, its value is not.
			name, val, _ := strings.Cut(w.arg, "=")
			p.opts = append(p.opts, shOpt{name: name, val: sword{arg: val, dyn: w.dyn, out: w.out, suffix: w.suffix}})
			continue
		}
		if !w.known || len(a) < 2 || a[0] != '-' {
			if stopAtOperand {
				p.rest = args[i:]
				p.ops = args[i:]
				return p
			}
			ops.add(i)
			continue
		}
		if a == "--" {
			for j := i + 1; j < len(args); j++ {
				ops.add(j)
			}
			p.ops = ops.result()
			p.rest = args[i+1:]
			return p
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a, "=")
			if hasVal {
				p.opts = append(p.opts, shOpt{name: name, val: shLit(val)})
				continue
			}
			if valued[name] && i+1 < len(args) {
				i++
				p.opts = append(p.opts, shOpt{name: name, val: args[i]})
				continue
			}
			p.opts = append(p.opts, shOpt{name: name})
			continue
		}
		for j := 1; j < len(a); j++ {
			name := shShortOpt(a[j])
			if valued[name] {
				if j+1 < len(a) {
					p.opts = append(p.opts, shOpt{name: name, val: shLit(a[j+1:])})
				} else if i+1 < len(args) {
					i++
					p.opts = append(p.opts, shOpt{name: name, val: args[i]})
				} else {
					p.opts = append(p.opts, shOpt{name: name})
				}
				break
			}
			p.opts = append(p.opts, shOpt{name: name})
		}
	}
	p.ops = ops.result()
	return p
}

// opsBuilder collects the operands of a command line. While they are
// contiguous in args (the usual "cmd -opts a b") they stay a sub-slice of
// args; they are copied only when an option comes between two of them.
type opsBuilder struct {
	args       []sword
	start, end int // args[start:end] are the operands so far (start < 0: none)
	out        []sword
	copied     bool
	mem        *arena
}

// add adds args[i].
func (o *opsBuilder) add(i int) {
	if !o.copied {
		switch {
		case o.start < 0:
			o.start, o.end = i, i+1
			return
		case o.end == i:
			o.end++
			return
		}
		o.out = append(o.mem.swords(len(o.args)), o.args[o.start:o.end]...)
		o.copied = true
	}
	o.out = append(o.out, o.args[i])
}

// result returns the operands (an empty, non-nil slice when there are
// none), with no room to append into args.
func (o *opsBuilder) result() []sword {
	switch {
	case o.copied:
		return o.out
	case o.start < 0:
		return o.args[:0:0]
	}
	return o.args[o.start:o.end:o.end]
}

// shShortOpts holds "-c" for every ASCII byte c, so that reading a cluster
// of short options ("-rf") allocates no name.
var shShortOpts = func() (t [128]string) {
	for c := range t {
		t[c] = "-" + string(rune(c))
	}
	return t
}()

// shShortOpt returns "-" followed by the byte c.
func shShortOpt(c byte) string {
	if c < 128 {
		return shShortOpts[c]
	}
	return "-" + string([]byte{c})
}

// ---- effects on paths ----

// file records an effect on the path a word names; a word whose value is
// not known gives an Unknown naming the program and the word.
func (c *shCall) file(k Kind, w sword, fn func(*Effect)) {
	if !w.known {
		e := Effect{Kind: Unknown, Detail: &Detail{Reason: fmt.Sprintf("%s: %s of a path not known statically: %s", c.prog, k, w.arg)}}
		if k == Delete {
			probe := Effect{Kind: k, Recursive: w.tree}
			if fn != nil {
				fn(&probe)
			}
			if probe.Recursive && c.r.hiddenTarget(w) {
				// a recursive delete of something nobody can name before it runs
				e.Program, e.Recursive = c.prog, true
			}
		}
		c.r.s.add(e)
		return
	}
	if w.val == "" {
		return
	}
	if shDevNull(w.val) || strings.HasPrefix(w.val, "/dev/fd/") {
		return
	}
	if w.pat != "" && w.pat != c.lastPat {
		// A glob expanded on disk acts on every path it matches, which
		// can be every entry of a directory (rm -rf ~/*): the pattern
		// itself is an effect too, as it is when nothing matches, so that
		// what the command covers does not depend on what is on disk.
		c.lastPat = w.pat
		c.file(k, sword{arg: w.pat, val: w.pat, known: true, tree: w.tree}, fn)
	}
	noFollow := k == Delete || k == Create || k == Move
	e := Effect{Kind: k, Program: c.prog, Path: c.r.path(w.val, noFollow), Recursive: w.tree}
	s := c.r.s
	if fn == nil || s.full || len(s.out) >= MaxEffects-1 {
		s.add(e)
		return
	}
	// fn edits the effect in place in the list: handing it &e would move e
	// (288 bytes) to the heap for every file effect. What add does to e
	// (Via) it does here after fn, as add would.
	s.out = append(s.out, e)
	p := &s.out[len(s.out)-1]
	fn(p)
	if p.Via == "" {
		p.Via = s.via
	}
	if p.Detail != nil && p.Detail.isZero() {
		p.Detail = nil // as add does
	}
	if s.ctx.Cwd == lostCwd {
		e := *p
		s.lostRead(&e)
	}
}

func (c *shCall) files(k Kind, ws []sword, rec bool) {
	for _, w := range ws {
		c.file(k, w, func(e *Effect) { e.Recursive = e.Recursive || rec })
	}
}

// filter is the output of a program that reads its input or its operands
// and writes something derived (grep, sort, ...): not known, but it
// carries where the data came from.
func (c *shCall) filter(from ...string) *shStream {
	reads := c.in.reads()
	var f []string
	if n := len(from) + len(reads); n > 0 {
		f = c.r.s.mem.strings(n)[:0]
		f = append(append(f, from...), reads...)
	}
	return c.r.s.mem.stream(shStream{kind: sOutput, prog: c.prog, from: f})
}

func (c *shCall) paths(ws []sword) []string {
	var out []string
	if mem := c.r.s.mem; mem != nil && len(ws) > 0 {
		out = mem.strings(len(ws))[:0]
	}
	for _, w := range ws {
		if w.known && !shDevNull(w.val) {
			out = append(out, c.r.path(w.val, false))
		}
	}
	return out
}

// dest computes where a copied or moved source lands: into dst when it is
// a directory (several sources, a trailing slash, -t), else dst itself.
func (c *shCall) dest(src, dst sword, intoDir bool) sword {
	if !intoDir || !src.known || !dst.known {
		return dst
	}
	base := path.Base(strings.TrimSuffix(src.val, "/"))
	return sword{arg: dst.arg, val: strings.TrimSuffix(dst.val, "/") + "/" + base, known: true, tree: dst.tree}
}

// shRemoteSpec splits scp/rsync's [user@]host:path.
func shRemoteSpec(a string) (host, p string, ok bool) {
	if strings.HasPrefix(a, "/") || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "~") {
		return "", "", false
	}
	if rest, found := strings.CutPrefix(a, "scp://"); found {
		a = rest
	} else if rest, found := strings.CutPrefix(a, "rsync://"); found {
		h, p, _ := strings.Cut(rest, "/")
		return shStripUser(h), "/" + p, true
	}
	i := strings.IndexByte(a, ':')
	if i <= 0 || strings.Contains(a[:i], "/") {
		return "", "", false
	}
	return shStripUser(a[:i]), strings.TrimPrefix(a[i+1:], ":"), true
}

func shStripUser(h string) string {
	if i := strings.LastIndexByte(h, '@'); i >= 0 {
		return h[i+1:]
	}
	return h
}

// shSignalName normalises a signal: "9", "SIGKILL", "kill" are "KILL".
func shSignalName(s string) string {
	s = strings.ToUpper(strings.TrimPrefix(strings.TrimPrefix(s, "-"), "-"))
	s = strings.TrimPrefix(s, "SIG")
	if n, ok := shSignalNumbers[s]; ok {
		return n
	}
	return s
}

var shSignalNumbers = map[string]string{
	"0": "0", "1": "HUP", "2": "INT", "3": "QUIT", "6": "ABRT", "9": "KILL", "10": "USR1",
	"12": "USR2", "13": "PIPE", "14": "ALRM", "15": "TERM", "18": "CONT", "19": "STOP", "20": "TSTP",
}

// shParseSingleDash splits a command line whose options are whole words
// after one dash (openssl, find): "-connect host:port".
func shParseSingleDash(args []sword, valued shOptSet) *shParsed {
	p := &shParsed{}
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known || len(w.val) < 2 || w.val[0] != '-' {
			p.ops = append(p.ops, w)
			continue
		}
		if valued[w.val] && i+1 < len(args) {
			p.opts = append(p.opts, shOpt{name: w.val, val: args[i+1]})
			i++
			continue
		}
		p.opts = append(p.opts, shOpt{name: w.val})
	}
	return p
}
