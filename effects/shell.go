package effects

import (
	"path"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// The shell reader. A script is parsed with mvdan.cc/sh/v3/syntax (bash
// syntax) and walked statement by statement: words are evaluated after
// quote removal with what the script itself makes known (literal
// variables, functions, aliases, the agent's home and working directory),
// redirections become effects, pipelines carry what flows between
// commands (literal text, a file, a download, a command's output), and
// each command goes through the table of programs in shell_programs.go.
// Whatever cannot be known statically is an Unknown effect with a reason.

// shVar is a shell variable: its value when known, and whether it is
// exported to the commands the script runs.
type shVar struct {
	val      string
	known    bool
	exported bool
	// out is the process listing a value not known came from
	// (p=$(pgrep sshd), for p in $(pgrep sshd), ... | while read p):
	// its pids (shell_pids.go).
	out  *shStream
	temp bool // the output of mktemp: a path the script made (see hiddenTarget)
}

// shEnv is what a nested shell starts with: the exported variables of the
// shell that runs it, its positional parameters and its standard input.
type shEnv struct {
	vars  map[string]shVar
	args  []sword
	stdin *shStream
	name  string // $0
}

// sh is one shell script being read.
type sh struct {
	s        *state
	vars     map[string]shVar
	funcs    map[string]*syntax.Stmt
	aliases  map[string]string
	inAlias  map[string]bool
	args     []sword
	name     string
	fds      fdTable              // fds opened by exec, kept for the script
	shared   bool                 // vars, funcs and aliases belong to an enclosing scope (see cow)
	fetched  map[string]*shStream // files this script downloads: running one runs downloaded code
	written  map[string]string    // files this script writes with literal text (see remember)
	links    map[string]string    // symbolic links this script creates: link → target
	src      string               // the script's text (for the conservative scan of foreign code)
	funcCall int
	// active counts the calls in progress of each function; calls counts
	// every function call of the script (at most MaxFuncCalls are read).
	active map[string]int
	calls  int
	// wbufs are scratch buffers for the fields of words being expanded,
	// one per nesting level (a word inside a command substitution inside a
	// word); wlevel is the next level free.
	wbufs  [][]byte
	wlevel int
}

var shParserPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}}

// shell reads a shell script (bash syntax).
func (s *state) shell(script string) { s.shellIn(script, nil) }

// shForeignFirst are interpreters whose code, typed after them, is not
// shell syntax.
var shForeignFirst = map[string]bool{"tclsh": true, "wish": true, "jjs": true, "jrunscript": true, "lua": true,
	"luajit": true, "julia": true, "expect": true, "node": true, "irb": true, "php": true, "gdb": true}

// shellIn reads a shell script with what the shell that runs it passes on
// (nil for a script read on its own).
func (s *state) shellIn(script string, env *shEnv) {
	s.nested("shell", func() {
		if len(script) > MaxInput {
			s.unknown(true, "shell script of %d bytes, longer than the %d read", len(script), MaxInput)
			return
		}
		if len(script) >= arenaMinScript && s.mem == nil {
			s.mem = newArena()
		}
		if want := min(4+len(script)/10, MaxEffects); s.out == nil || len(s.out) == 0 && cap(s.out) < want {
			// About one effect per 10 bytes of script at most: grow once, not by doubling.
			s.out = make([]Effect, 0, want)
		}
		// A child shell's cd does not move its parent.
		defer func(cwd string) { s.ctx.Cwd = cwd }(s.ctx.Cwd)
		r := &sh{s: s, vars: map[string]shVar{}, name: "sh", src: script}
		var in *shStream
		if env != nil {
			for k, v := range env.vars {
				r.vars[k] = v
			}
			r.args = env.args
			in = env.stdin
			if env.name != "" {
				r.name = env.name
			}
		}
		err := r.read(script, in)
		if err != nil {
			s.unknown(false, ShellSyntaxError+": %s", shShortErr(err))
			// An interpreter typed into (tclsh, then its code on the next
			// lines) is not shell: scan its code conservatively.
			if f := strings.Fields(script); len(f) > 0 && shForeignFirst[path.Base(f[0])] {
				s.socketShellScan(path.Base(f[0]), script)
				s.socketUploadScan(path.Base(f[0]), script)
			}
		}
	})
}

// read parses script and reads its statements, unless it has a syntax
// error, which it returns, having read nothing. A long script's statements
// are read as the parser gives them, so that each one's nodes can be
// collected once read (the tree would be most of what the analysis holds);
// what its first statements gave is taken back when a syntax error comes
// later (see shellMark). A short one is parsed whole first (fewer
// allocations).
func (r *sh) read(script string, in *shStream) error {
	s := r.s
	p := shParserPool.Get().(*syntax.Parser)
	if len(script) < arenaMinScript {
		f, err := p.Parse(strings.NewReader(script), "")
		shParserPool.Put(p)
		if err != nil {
			return err
		}
		for _, st := range f.Stmts {
			if s.full {
				break
			}
			r.stmt(st, in)
		}
		return nil
	}
	mark := s.shellMark()
	var err error
	for st, e := range p.StmtsSeq(strings.NewReader(script)) {
		// The iterator must be drained, never left early: it yields once
		// more after an error.
		if e != nil {
			err = e
		}
		if err != nil || s.full {
			continue
		}
		r.stmt(st, in)
	}
	shParserPool.Put(p)
	if err != nil {
		s.shellRewind(mark)
	}
	return err
}

// shellMark is what reading a script changes in the analysis's state, as
// it was before: shellRewind puts it back when the script turns out not to
// parse.
type shellMark struct {
	out            int
	steps, decodes int
	full           bool
	cwd            string
}

func (s *state) shellMark() shellMark {
	return shellMark{out: len(s.out), steps: s.steps, decodes: s.decodes, full: s.full, cwd: s.ctx.Cwd}
}

func (s *state) shellRewind(m shellMark) {
	clear(s.out[m.out:])
	s.out = s.out[:m.out]
	s.steps, s.decodes, s.full, s.ctx.Cwd = m.steps, m.decodes, m.full, m.cwd
}

func shShortErr(err error) string {
	m := err.Error()
	if len(m) > 120 {
		m = m[:120] + "…"
	}
	return m
}

// exported returns the variables a child process inherits.
func (r *sh) exported(extra []shAssign) map[string]shVar {
	var out map[string]shVar
	for k, v := range r.vars {
		if v.exported {
			if out == nil {
				out = map[string]shVar{}
			}
			out[k] = v
		}
	}
	for _, a := range extra {
		if out == nil {
			out = map[string]shVar{}
		}
		out[a.name] = shVar{val: a.val.val, known: a.val.known, exported: true}
	}
	return out
}

// ---- streams: what flows into a command's standard input ----

type shStreamKind int

const (
	sText   shStreamKind = iota + 1 // literal text, known
	sFile                           // the content of a file
	sNet                            // data from the network
	sOutput                         // the output of a program, not known
)

// shStream is what a command reads on its standard input or writes on its
// output.
type shStream struct {
	kind shStreamKind
	text string
	path string
	url  string
	host string
	port string
	prog string   // the producing program (sOutput)
	from []string // files the producer read (sOutput)
	lost string   // a file named at run time, as written (sOutput of an input redirection: < "$F")
	// pids names the processes whose pids the output lists (pgrep sshd,
	// ps aux | grep sshd: "sshd"; ps -e: "-1", every process), when it
	// is a process listing (shell_pids.go).
	pids []string
	// fileRoots: a find that selects no directory (-type f) wrote the
	// names; its from entries not ending in "/*" are single files.
	fileRoots bool
}

// source names a stream as the Source of a Send.
func (st *shStream) source() string {
	if st == nil {
		return "stdin"
	}
	switch st.kind {
	case sFile:
		return st.path
	case sText:
		return "data"
	case sOutput:
		if len(st.from) == 1 {
			return st.from[0]
		}
		return "output"
	}
	return "stdin"
}

// reads lists the files a stream's content comes from.
func (st *shStream) reads() []string {
	if st == nil {
		return nil
	}
	if st.kind == sFile {
		return []string{st.path}
	}
	return st.from
}

func shOutputOf(prog string, from ...string) *shStream {
	return &shStream{kind: sOutput, prog: prog, from: from}
}

// ---- statements ----

func (r *sh) stmts(list []*syntax.Stmt, in *shStream) *shStream {
	var out *shStream
	for _, st := range list {
		if r.s.full {
			return nil
		}
		out = r.stmt(st, in)
	}
	return out
}

// maxSteps bounds the statements and commands read in one analysis:
// loops, functions and nested shells re-read text, and this keeps the
// work linear in what a limit allows.
const maxSteps = 50000

// step counts one unit of work; past maxSteps it records a limit Unknown
// and stops the analysis.
func (r *sh) step() bool {
	if r.s.full {
		return false
	}
	r.s.steps++
	if r.s.steps > maxSteps {
		r.s.unknown(true, "more than %d commands read in one action", maxSteps)
		r.s.full = true
		return false
	}
	return true
}

func (r *sh) stmt(st *syntax.Stmt, in *shStream) *shStream {
	if st == nil || st.Cmd == nil && len(st.Redirs) == 0 {
		return nil
	}
	if !r.step() {
		return nil
	}
	rd := r.redirs(st.Redirs, in)
	var out *shStream
	switch c := st.Cmd.(type) {
	case nil:
		// Redirections only: "> file" truncates it, handled above.
	case *syntax.CallExpr:
		out = r.callExpr(c, &rd)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			mid := r.stmt(c.X, rd.stdin)
			out = r.stmt(c.Y, mid)
		default:
			r.stmt(c.X, rd.stdin)
			out = r.stmt(c.Y, rd.stdin)
		}
	case *syntax.Subshell:
		r.scoped(func() { out = r.stmts(c.Stmts, rd.stdin) })
	case *syntax.Block:
		out = r.stmts(c.Stmts, rd.stdin)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			r.stmts(ic.Cond, rd.stdin)
			out = r.stmts(ic.Then, rd.stdin)
		}
	case *syntax.WhileClause:
		r.stmts(c.Cond, rd.stdin)
		out = r.stmts(c.Do, rd.stdin)
	case *syntax.ForClause:
		out = r.forClause(c, rd.stdin)
	case *syntax.CaseClause:
		r.words([]*syntax.Word{c.Word}, false)
		for _, it := range c.Items {
			out = r.stmts(it.Stmts, rd.stdin)
		}
	case *syntax.FuncDecl:
		r.cow()
		if r.funcs == nil {
			r.funcs = map[string]*syntax.Stmt{}
		}
		if c.Name != nil {
			r.funcs[c.Name.Value] = c.Body
		}
		for _, n := range c.Names {
			r.funcs[n.Value] = c.Body
		}
	case *syntax.DeclClause:
		r.declClause(c)
	case *syntax.TimeClause:
		out = r.stmt(c.Stmt, rd.stdin)
	case *syntax.CoprocClause:
		out = r.stmt(c.Stmt, rd.stdin)
	default:
		// Arithmetic, [[ tests ]], let: only command substitutions inside
		// them do anything.
		r.substsIn(c)
	}
	if rd.outPath != "" {
		if out != nil && out.kind == sNet && out.url != "" && !rd.outAppend {
			// curl URL > f, curl URL | base64 -d > f: the file is a download.
			r.s.add(Effect{Kind: Download, Program: out.prog, Detail: &Detail{URL: out.url, Host: out.host, Port: out.port}, Path: rd.outPath})
			if r.fetched == nil {
				r.fetched = map[string]*shStream{}
			}
			r.fetched[rd.outPath] = out
		}
		r.remember(rd.outPath, out, rd.outAppend)
	}
	if rd.stdoutTaken {
		return nil
	}
	return out
}

// remember keeps what this script writes to a file when it is literal
// text (cat > x.sh <<EOF, echo … > x.sh, tee x.sh), so that running the
// file later in the script reads that text; any other write forgets it.
func (r *sh) remember(p string, st *shStream, appendTo bool) {
	old, had := r.written[p]
	known := st != nil && st.kind == sText
	if known {
		r.s.texts = keepText(r.s.texts, p, st.text, appendTo)
	}
	if autorunClassOf(p) != arNone {
		text := ""
		if known {
			text = st.text
		}
		r.s.autorunWrite(p, text, known, appendTo)
	}
	if !known || appendTo && !had {
		delete(r.written, p)
		return
	}
	if r.written == nil {
		r.written = map[string]string{}
	}
	text := st.text
	if appendTo {
		text = old + text
	}
	if len(text) > MaxScriptBytes {
		delete(r.written, p)
		return
	}
	r.written[p] = text
}

// keepText keeps text written to p in m (appended with appendTo), for a
// copy of p read later in the action, and returns m.
func keepText(m map[string]string, p, text string, appendTo bool) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	if appendTo {
		text = m[p] + text
	}
	if len(text) <= MaxScriptBytes {
		m[p] = text
	}
	return m
}

// scoped reads something in a subshell: variables, functions, aliases and
// the working directory it changes do not outlive it. The maps are copied
// only when the subshell writes to them (cow).
func (r *sh) scoped(fn func()) {
	vars, funcs, aliases, cwd, shared := r.vars, r.funcs, r.aliases, r.s.ctx.Cwd, r.shared
	r.shared = true
	fn()
	r.vars, r.funcs, r.aliases, r.s.ctx.Cwd, r.shared = vars, funcs, aliases, cwd, shared
}

// cow gives the current scope its own variables, functions and aliases
// before it changes them.
func (r *sh) cow() {
	if !r.shared {
		return
	}
	r.shared = false
	vars := make(map[string]shVar, len(r.vars)+1)
	for k, v := range r.vars {
		vars[k] = v
	}
	r.vars = vars
	if r.funcs != nil {
		funcs := make(map[string]*syntax.Stmt, len(r.funcs))
		for k, v := range r.funcs {
			funcs[k] = v
		}
		r.funcs = funcs
	}
	if r.aliases != nil {
		aliases := make(map[string]string, len(r.aliases))
		for k, v := range r.aliases {
			aliases[k] = v
		}
		r.aliases = aliases
	}
}

// substsIn reads the command and process substitutions anywhere inside a
// node the reader does not otherwise interpret.
func (r *sh) substsIn(n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			r.scoped(func() { r.stmts(n.Stmts, nil) })
			return false
		case *syntax.ProcSubst:
			r.scoped(func() { r.stmts(n.Stmts, nil) })
			return false
		}
		return true
	})
}

const maxLoopItems = 16

func (r *sh) forClause(c *syntax.ForClause, in *shStream) *shStream {
	wi, ok := c.Loop.(*syntax.WordIter)
	if !ok {
		r.substsIn(c.Loop)
		return r.stmts(c.Do, in)
	}
	var items []sword
	if wi.InPos.IsValid() {
		items = r.words(wi.Items, true)
	} else {
		items = r.args
	}
	name := wi.Name.Value
	r.cow()
	if len(items) > maxLoopItems {
		r.s.unknown(true, "for loop over more than %d items: read once, with $%s not known", maxLoopItems, name)
	}
	if len(items) == 0 || len(items) > maxLoopItems {
		r.vars[name] = shVar{}
		return r.stmts(c.Do, in)
	}
	var out *shStream
	for _, it := range items {
		r.vars[name] = shVar{val: it.val, known: it.known, out: pidStream(it.out)}
		out = r.stmts(c.Do, in)
	}
	return out
}

// declClause reads export, declare, local, readonly and typeset. As in
// bash, every argument is expanded first, once, and the builtin then
// assigns (export A=1 B=$A gives B the A from before): the builtin is
// recorded as the Run of a program (rules see "export HISTFILE=/dev/null")
// and each NAME=value assigns the value so read. (Until 2026-11-28 each
// value was expanded a second time for its assignment, after the earlier
// ones: a command substitution in it was read, and recorded, twice.)
func (r *sh) declClause(c *syntax.DeclClause) {
	argv := make([]string, 1, len(c.Args)+1)
	argv[0] = c.Variant.Value
	var vals []sword // the value of c.Args[i] when it is a NAME=value
	for i, a := range c.Args {
		switch {
		case a.Name == nil && a.Value != nil:
			argv = append(argv, r.joinWord(a.Value).arg)
		case a.Name != nil && (a.Naked || a.Value == nil && a.Array == nil):
			argv = append(argv, a.Name.Value)
		case a.Name != nil && a.Value != nil:
			v := r.joinWord(a.Value)
			argv = append(argv, a.Name.Value+"="+v.arg)
			if vals == nil {
				vals = make([]sword, len(c.Args))
			}
			vals[i] = v
		case a.Name != nil:
			argv = append(argv, a.Name.Value+"=(…)")
		}
	}
	r.s.add(Effect{Kind: Run, Program: c.Variant.Value, Argv: argv})
	r.cow()
	export := c.Variant.Value == "export"
	for i, a := range c.Args {
		if a.Naked && a.Name == nil {
			if a.Value == nil {
				continue
			}
			if v, ok := plainWord(a.Value); ok && !strings.Contains(v, "{") {
				// A literal option (no braces to expand): nothing to
				// expand again.
				export = export || shExportFlag(v)
				continue
			}
			for _, w := range r.words([]*syntax.Word{a.Value}, false) {
				export = export || shExportFlag(w.val)
			}
			continue
		}
		if a.Name == nil {
			continue
		}
		name := a.Name.Value
		if a.Naked {
			v := r.vars[name]
			v.exported = v.exported || export
			r.vars[name] = v
			continue
		}
		if a.Value != nil && a.Array == nil && a.Index == nil {
			r.assignValue(a, shAssign{name: name, val: vals[i]}, export)
			continue
		}
		r.assign(a, export)
	}
}

// shExportFlag reports an option of declare, local or typeset that
// exports (-x, -rx, ...).
func shExportFlag(v string) bool {
	return strings.HasPrefix(v, "-") && strings.Contains(v, "x")
}

// shAssign is a NAME=value evaluated (its value's arg is not set when the
// value is not known: only val and known are read).
type shAssign struct {
	name string
	val  sword
}

func (r *sh) evalAssign(a *syntax.Assign) shAssign {
	if a.Name == nil {
		return shAssign{}
	}
	if a.Array != nil || a.Index != nil {
		r.substsIn(a)
		return shAssign{name: a.Name.Value}
	}
	if a.Value == nil {
		return shAssign{name: a.Name.Value, val: sword{known: true}}
	}
	return shAssign{name: a.Name.Value, val: r.joinWordArg(a.Value, false)}
}

func (r *sh) assign(a *syntax.Assign, export bool) {
	r.assignValue(a, r.evalAssign(a), export)
}

// assignValue sets the variable of assignment a to ea, its value
// evaluated.
func (r *sh) assignValue(a *syntax.Assign, ea shAssign, export bool) {
	if ea.name == "" {
		return
	}
	// PAGER=x; git log: the variable may be exported already.
	r.commandVar(ea.name, ea.val)
	r.cow()
	if len(ea.val.val) > MaxInput {
		r.s.unknown(true, "variable %s longer than %d bytes", ea.name, MaxInput)
		ea.val = sword{arg: ea.val.arg[:0]}
	}
	v := shVar{val: ea.val.val, known: ea.val.known, exported: export || r.vars[ea.name].exported, out: pidStream(ea.val.out),
		temp: !ea.val.known && a.Value != nil && shIsMktemp(a.Value)}
	if a.Append {
		old := r.vars[ea.name]
		v.val, v.known = old.val+v.val, old.known && v.known
		if len(v.val) > MaxInput {
			r.s.unknown(true, "variable %s longer than %d bytes", ea.name, MaxInput)
			v.val, v.known = "", false
		}
	}
	r.vars[ea.name] = v
}

func (r *sh) callExpr(c *syntax.CallExpr, rd *redirState) *shStream {
	if len(c.Args) == 0 {
		for _, a := range c.Assigns {
			r.assign(a, false)
		}
		return nil
	}
	var env []shAssign
	for _, a := range c.Assigns {
		if ea := r.evalAssign(a); ea.name != "" {
			env = append(env, ea)
			r.commandVar(ea.name, ea.val)
		}
	}
	// VAR=x cmd $VAR: bash expands $VAR from the environment, which an
	// earlier command may have set to x (GTFOBins writes its payloads this
	// way); when the script has not set VAR, x is taken as its value.
	var guessed []string
	for _, a := range env {
		if _, set := r.vars[a.name]; !set && a.val.known {
			r.cow()
			r.vars[a.name] = shVar{val: a.val.val, known: true}
			guessed = append(guessed, a.name)
		}
	}
	ws := r.words(c.Args, true)
	for _, n := range guessed {
		delete(r.vars, n)
	}
	if len(ws) == 1 && ws[0].known && ws[0].val == "exec" {
		// exec with only redirections: they stay for the rest of the script.
		r.fds = rd.fds
	}
	return r.command(ws, rd.stdin, env)
}

// ---- commands ----

// command reads one command given as words (after expansion): aliases and
// functions of the script, then the program's Run and what the table says
// it does.
func (r *sh) command(ws []sword, in *shStream, env []shAssign) *shStream {
	if len(ws) == 0 || !r.step() {
		return nil
	}
	name := ws[0]
	if !name.known {
		if name.out != nil && name.out.kind == sNet {
			r.download(name.out, "sh")
		}
		r.s.opaque("program", outProg(name), "program name not known statically: %s", name.arg)
		return shOutputOf("")
	}
	prog := name.val
	if a, ok := r.aliases[prog]; ok && !r.inAlias[prog] {
		return r.alias(prog, a, ws[1:], in, env)
	}
	if body, ok := r.funcs[prog]; ok {
		return r.callFunc(prog, body, ws[1:], in)
	}
	return r.run(ws, in, env)
}

// run records the Run of a program (no alias or function lookup: the
// wrappers "command", "builtin", "exec", "sudo" and the like skip those)
// and applies the table.
func (r *sh) run(ws []sword, in *shStream, env []shAssign) *shStream {
	if len(ws) == 0 {
		return nil
	}
	name := ws[0]
	if !name.known {
		return r.command(ws, in, env)
	}
	prog := name.val
	base := path.Base(prog)
	e := Effect{Kind: Run, Program: base, Argv: r.argvOf(ws)}
	if strings.Contains(prog, "/") {
		e.Path = r.path(prog, false)
	}
	if prog == "" {
		return nil
	}
	r.s.add(e)
	// The call lives while its handler runs (handlers keep no pointer to
	// it), so calls are reused, one per level of commands nested in
	// commands.
	c := r.s.takeCall()
	*c = shCall{r: r, prog: base, ws: ws, in: in, env: env}
	switch base {
	case "git", "ssh", "scp", "sftp", "rsync", "tar", "zip", "man", "less", "more", "sqlite3", "sqlite", "psql", "mysql", "mariadb":
		c.commandOptions()
	}
	var out *shStream
	if h := shLookupProgram(base); h != nil {
		out = h(c)
	} else {
		if strings.Contains(prog, "/") {
			// A program run by its path may be a script the agent wrote.
			r.scriptByPath(c, e.Path)
		}
		out = c.filter()
	}
	out = shPidsThrough(c, out)
	r.s.releaseCall(c)
	return out
}

// argvOf is shArgvOf with the slice from the analysis's arena.
func (r *sh) argvOf(ws []sword) []string {
	out := r.s.mem.strings(len(ws))
	for i, w := range ws {
		out[i] = w.arg
	}
	return out
}

func shArgvOf(ws []sword) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.arg
	}
	return out
}

func (r *sh) alias(name, value string, rest []sword, in *shStream, env []shAssign) *shStream {
	if r.inAlias == nil {
		r.inAlias = map[string]bool{}
	}
	r.inAlias[name] = true
	defer delete(r.inAlias, name)
	p := shParserPool.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(value), "")
	shParserPool.Put(p)
	if err != nil {
		// Bash splices the alias's text into the line and runs what
		// parses before the error (alias x=$'rm -rf ~\n('): a syntax
		// error, refused as one.
		r.s.unknown(false, ShellSyntaxError+": alias %s: %s", name, shShortErr(err))
		return nil
	}
	if len(f.Stmts) == 1 && len(f.Stmts[0].Redirs) == 0 {
		if ce, ok := f.Stmts[0].Cmd.(*syntax.CallExpr); ok && len(ce.Assigns) == 0 {
			ws := r.words(ce.Args, true)
			return r.command(append(ws, rest...), in, env)
		}
	}
	if len(rest) > 0 {
		// The words after the alias go on its last command, as bash
		// splices the text (alias x='cd /; rm -rf'; x ~ is cd /; rm -rf ~).
		var b strings.Builder
		b.WriteString(value)
		for _, w := range rest {
			b.WriteByte(' ')
			if w.known {
				b.WriteString(JoinArgv([]string{w.val}))
			} else {
				b.WriteString(w.arg)
			}
		}
		p := shParserPool.Get().(*syntax.Parser)
		g, err := p.Parse(strings.NewReader(b.String()), "")
		shParserPool.Put(p)
		if err != nil {
			r.s.unknown(false, ShellSyntaxError+": alias %s with its arguments: %s", name, shShortErr(err))
			return nil
		}
		return r.stmts(g.Stmts, in)
	}
	return r.stmts(f.Stmts, in)
}

func (r *sh) callFunc(name string, body *syntax.Stmt, args []sword, in *shStream) *shStream {
	if r.active[name] > 0 {
		// A function that calls itself runs without end as far as a
		// reader can tell (the fork bomb :(){ :|:& };:); once is enough.
		r.s.unknown(true, "recursive function %s: it calls itself", name)
		return nil
	}
	if r.funcCall >= MaxDepth {
		r.s.unknown(true, "function %s called more than %d levels deep", name, MaxDepth)
		return nil
	}
	if r.calls >= MaxFuncCalls {
		r.s.unknown(true, "more than %d function calls", MaxFuncCalls)
		return nil
	}
	if r.active == nil {
		r.active = map[string]int{}
	}
	r.calls++
	r.funcCall++
	r.active[name]++
	saved := r.args
	r.args = args
	out := r.stmt(body, in)
	r.args = saved
	r.active[name]--
	r.funcCall--
	return out
}

// download records a download fed to an interpreter, and that its code
// cannot be read.
func (r *sh) download(st *shStream, into string) {
	r.s.add(Effect{Kind: Download, Program: st.prog, Detail: &Detail{URL: st.url, Host: st.host, Port: st.port, Into: into}})
	where := st.url
	if where == "" {
		where = st.host
		if st.port != "" {
			where += ":" + st.port
		}
	}
	r.s.unknown(false, "%s runs code received from the network (%s)", into, where)
}

// ---- paths ----

// path makes a path as the agent's process would see it: resolved against
// its working directory and home, and, when the harness can see the file
// system, with links resolved (noFollow resolves only the directory part:
// rm and ln act on the link itself). /proc/PID/cwd and /proc/PID/root are
// links into another process's view and stay as written.
func (r *sh) path(p string, noFollow bool) string {
	if isProcLink(p) {
		return p
	}
	q := r.s.resolve(p)
	if len(r.links) > 0 {
		q = r.throughLinks(q, noFollow)
	}
	fs := r.s.ctx.FS
	if fs == nil || !strings.HasPrefix(q, "/") || strings.HasPrefix(q, "/proc/") || strings.HasPrefix(q, "/dev/") {
		return q
	}
	// Resolve links on the path as written (before "..": the kernel
	// follows a link first, then goes up from where it points).
	raw := p
	if strings.HasPrefix(p, "~") {
		raw = q
	} else if !strings.HasPrefix(p, "/") {
		raw = r.s.ctx.Cwd + "/" + p
	}
	if !noFollow {
		if real, err := fs.EvalSymlinks(raw); err == nil && real != "" {
			return path.Clean(real)
		}
	}
	dir, base := path.Split(q)
	if base == "" || base == "." || base == ".." || dir == "/" {
		return q
	}
	if real, err := fs.EvalSymlinks(strings.TrimSuffix(dir, "/")); err == nil && real != "" {
		return path.Join(real, base)
	}
	return q
}

// throughLinks rewrites a path that goes through a symbolic link this
// script created (ln -s /data /tmp/lnk; cat /tmp/lnk/x): the link does not
// exist yet when the command is read, so the file system cannot resolve it.
func (r *sh) throughLinks(q string, noFollow bool) string {
	for i := 0; i < MaxDepth; i++ {
		changed := false
		for link, target := range r.links {
			if q == link && !noFollow {
				q, changed = target, true
			} else if rest, ok := strings.CutPrefix(q, link+"/"); ok {
				q, changed = path.Join(target, rest), true
			}
		}
		if !changed {
			break
		}
	}
	return q
}

func isProcLink(p string) bool {
	if !strings.HasPrefix(p, "/proc/") {
		return false
	}
	parts := strings.SplitN(p[len("/proc/"):], "/", 3)
	if len(parts) < 2 {
		return false
	}
	switch parts[1] {
	case "cwd", "root", "fd", "exe":
		return true
	}
	return false
}

// shItoa is strconv.Itoa, named short for the many small uses here.
func shItoa(i int) string { return strconv.Itoa(i) }
