package effects

import (
	"bytes"
	"compress/gzip"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ---- code run by shells and interpreters ----

// shLangOf names the reader of an interpreter program.
func shLangOf(prog string) string {
	for _, s := range shellNames {
		if prog == s {
			return "sh"
		}
	}
	if m := shInterpreter(prog); m != "" {
		switch m {
		case "python", "pypy":
			return "python"
		case "node", "nodejs", "deno", "bun":
			return "node"
		default:
			return m
		}
	}
	return ""
}

// readCode reads code text in a language: shell through this reader,
// the rest through the interpreter readers.
func (r *sh) readCode(lang, text string, env *shEnv) {
	if lang == "sh" {
		r.s.shellIn(text, env)
		return
	}
	r.s.code(lang, text)
}

// feed reads what an interpreter runs from a stream (its standard input,
// a process substitution, a command's output).
func (r *sh) feed(lang, prog string, st *shStream, env *shEnv) {
	if st == nil {
		return
	}
	switch st.kind {
	case sText:
		r.readCode(lang, st.text, env)
	case sFile:
		r.readFile(lang, prog, st.path, env)
	case sNet:
		r.download(st, prog)
	default:
		if st.lost != "" {
			r.s.opaque(prog, "", "%s runs a script whose path is not known statically: %s (its standard input)", prog, st.lost)
			return
		}
		what := st.prog
		if what == "" {
			what = "a command"
		}
		r.s.opaque(prog, st.prog, "%s runs code from the output of %s, not known statically", prog, what)
	}
}

// readFile reads a script from disk through ctx.FS.
func (r *sh) readFile(lang, prog, p string, env *shEnv) {
	if st, ok := r.fetched[p]; ok {
		r.download(st, prog)
		return
	}
	_, written := r.written[p]
	text, ok := r.scriptText(prog, p)
	if !ok {
		return
	}
	if lang == "" {
		lang = shebangLang([]byte(text))
	}
	if !written {
		// A script on disk, not code that comes with the action.
		r.s.onDisk++
		defer func() { r.s.onDisk-- }()
	}
	r.readCode(lang, text, env)
}

// scriptText returns the text of a script prog runs from the file p: what
// the action wrote there earlier, else the file through ctx.FS. When it
// has none (no view of the disk, a relative path, no such file, a file
// too large), it records why as an Unknown and returns false.
func (r *sh) scriptText(prog, p string) (string, bool) {
	if text, ok := r.written[p]; ok {
		return text, true
	}
	fs := r.s.ctx.FS
	if fs == nil || !strings.HasPrefix(p, "/") {
		r.s.add(Effect{Kind: Unknown, Detail: &Detail{Into: prog, Reason: fmt.Sprintf("%s runs the script %s, which the analysis cannot see", prog, p)}, Path: p})
		return "", false
	}
	data, trunc, err := fs.ReadFile(p, MaxScriptBytes)
	if err != nil {
		r.s.add(Effect{Kind: Unknown, Detail: &Detail{Into: prog, Reason: fmt.Sprintf("%s runs the script %s, which could not be read", prog, p)}, Path: p})
		return "", false
	}
	if trunc {
		r.s.unknown(true, "%s runs the script %s, larger than the %d bytes read", prog, p, MaxScriptBytes)
		return "", false
	}
	return string(data), true
}

// shebangLang names the reader for a script by its #! line (shell when
// there is none).
func shebangLang(data []byte) string {
	if !bytes.HasPrefix(data, []byte("#!")) {
		return "sh"
	}
	line, _, _ := bytes.Cut(data[2:], []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) == 0 {
		return "sh"
	}
	prog := path.Base(f[0])
	if prog == "env" {
		for _, a := range f[1:] {
			if !strings.HasPrefix(a, "-") {
				prog = path.Base(a)
				break
			}
		}
	}
	if l := shLangOf(prog); l != "" {
		return l
	}
	return "sh"
}

// scriptByPath reads a program run by its path when it is a script the
// harness can see (agents often write a script, then run it). Binaries
// and files it cannot see are left at their Run.
func (r *sh) scriptByPath(c *shCall, p string) {
	if st, ok := r.fetched[p]; ok {
		r.download(st, c.prog)
		return
	}
	// A Python script run by its path gets its arguments as sys.argv.
	prevArgv, prevSet := r.s.pyArgv, r.s.pyArgvSet
	defer func() { r.s.pyArgv, r.s.pyArgvSet = prevArgv, prevSet }()
	r.s.setPyArgv(c.ws[0].val, c.ws[1:])
	if text, ok := r.written[p]; ok {
		r.readCode(shebangLang([]byte(text)), text, &shEnv{args: c.ws[1:], name: p, vars: r.exported(c.env)})
		return
	}
	fs := r.s.ctx.FS
	if fs == nil || !strings.HasPrefix(p, "/") {
		return
	}
	// A first look at the head: a binary (a NUL byte) is a program, not
	// read further.
	head, _, err := fs.ReadFile(p, 512)
	if err != nil || bytes.IndexByte(head, 0) >= 0 {
		return
	}
	data, trunc, err := fs.ReadFile(p, MaxScriptBytes)
	if err != nil || bytes.IndexByte(data, 0) >= 0 {
		return
	}
	if trunc {
		r.s.unknown(true, "the script %s is larger than the %d bytes read", p, MaxScriptBytes)
		return
	}
	r.s.onDisk++
	r.readCode(shebangLang(data), string(data), &shEnv{args: c.ws[1:], name: p, vars: r.exported(c.env)})
	r.s.onDisk--
}

// scriptFile reads a script named by a word (bash x.sh, python3 x.py).
func (c *shCall) scriptFile(lang, prog string, w sword, env *shEnv) {
	if w.out != nil && w.known {
		// A process substitution (bash <(cmd)): the script is cmd's
		// output. A command substitution ("$(cat f)") is the script's
		// path, not its text: a path not known, below.
		c.r.feed(lang, prog, w.out, env)
		return
	}
	if !w.known {
		c.r.s.opaque(prog, outProg(w), "%s runs a script whose path is not known statically: %s", prog, w.arg)
		return
	}
	if stdinPath(w.val) {
		c.runsStdin(lang, prog, env)
		return
	}
	p := c.r.path(w.val, false)
	c.r.s.add(Effect{Kind: Read, Program: prog, Path: p})
	c.r.readFile(lang, prog, p, env)
}

// stdinPath reports whether a path names the standard input of the
// program that opens it.
func stdinPath(p string) bool {
	switch p {
	case "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/proc/thread-self/fd/0":
		return true
	}
	return false
}

// runsStdin reads what a shell or interpreter runs when its script is its
// own standard input named as a file (bash /dev/stdin <<< CMD, source
// /dev/stdin), as for sh -s: the input the command gives it, if any.
func (c *shCall) runsStdin(lang, prog string, env *shEnv) {
	c.r.feed(lang, prog, c.in, env)
}

// shellText reads a word given to a shell as a script (sh -c, su -c, ssh
// HOST CMD, watch CMD).
func (c *shCall) shellText(prog string, w sword, env *shEnv) {
	if w.known {
		c.r.s.shellIn(w.val, env)
		return
	}
	if w.out != nil && w.out.kind == sNet {
		c.r.download(w.out, prog)
		return
	}
	c.r.s.opaque(prog, outProg(w), "%s runs a script not known statically: %s", prog, w.arg)
}

// codeText reads a word given to an interpreter as code (python -c).
func (c *shCall) codeText(lang string, w sword) {
	if w.known {
		c.r.readCode(lang, w.val, nil)
		return
	}
	if w.out != nil && w.out.kind == sNet {
		c.r.download(w.out, c.prog)
		return
	}
	c.r.s.opaque(c.prog, outProg(w), "%s runs code not known statically: %s", c.prog, w.arg)
}

func hShell(c *shCall) *shStream {
	args := c.args()
	cmdMode, stdinMode := false, false
	i := 0
loop:
	for ; i < len(args); i++ {
		a := args[i]
		if !a.known || len(a.val) < 2 || (a.val[0] != '-' && a.val[0] != '+') {
			break
		}
		switch a.val {
		case "--":
			i++
			break loop
		case "-o", "+o", "-O", "+O", "--rcfile", "--init-file":
			i++
			continue
		}
		if strings.HasPrefix(a.val, "--") {
			continue
		}
		if strings.Contains(a.val[1:], "c") {
			cmdMode = true
		}
		if strings.Contains(a.val[1:], "s") {
			stdinMode = true
		}
		if strings.HasSuffix(a.val, "o") || strings.HasSuffix(a.val, "O") {
			i++
		}
	}
	if i > len(args) {
		i = len(args) // -o with no option name after it
	}
	rest := args[i:]
	env := &shEnv{vars: c.r.exported(c.env), name: c.prog}
	switch {
	case cmdMode:
		if len(rest) == 0 {
			c.r.s.unknown(false, "%s -c without a script", c.prog)
			return nil
		}
		if len(rest) > 1 {
			env.name = rest[1].val
			env.args = rest[2:]
			if env.args == nil {
				env.args = []sword{}
			}
		}
		env.stdin = c.in
		c.shellText(c.prog, rest[0], env)
	case stdinMode || len(rest) == 0 || rest[0].known && rest[0].val == "-":
		if len(rest) > 0 && rest[0].val == "-" && !stdinMode {
			rest = rest[1:]
		}
		env.args = rest
		c.r.feed("sh", c.prog, c.in, env)
	default:
		env.args = rest[1:]
		env.name = rest[0].val
		env.stdin = c.in
		c.scriptFile("sh", c.prog, rest[0], env)
	}
	return c.filter()
}

func hPython(c *shCall) *shStream {
	args := c.args()
	prevArgv, prevSet := c.r.s.pyArgv, c.r.s.pyArgvSet
	defer func() { c.r.s.pyArgv, c.r.s.pyArgvSet = prevArgv, prevSet }()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.known || a.val == "-" || a.val == "" || a.val[0] != '-' {
			c.r.s.setPyArgv(a.val, args[i+1:])
			if a.known && a.val == "-" {
				c.r.feed("python", c.prog, c.in, nil)
				return c.filter()
			}
			c.scriptFile("python", c.prog, a, nil)
			return c.filter()
		}
		switch {
		case a.val == "-c" || (!strings.HasPrefix(a.val, "--") && strings.HasSuffix(a.val, "c") && strings.Trim(a.val[1:len(a.val)-1], "bBdEhiIOqsSuvx") == ""):
			if i+1 < len(args) {
				c.r.s.setPyArgv("-c", args[i+2:])
				c.codeText("python", args[i+1])
			}
			return c.filter()
		case strings.HasPrefix(a.val, "-c"):
			c.r.s.setPyArgv("-c", args[i+1:])
			c.codeText("python", shLit(a.val[2:]))
			return c.filter()
		case a.val == "-m" || strings.HasPrefix(a.val, "-m"):
			mod := strings.TrimPrefix(a.val, "-m")
			rest := args[i+1:]
			if mod == "" && i+1 < len(args) {
				mod, rest = args[i+1].val, args[i+2:]
			}
			shPythonModule(c, mod, rest)
			return c.filter()
		case a.val == "-W" || a.val == "-X" || a.val == "--check-hash-based-pycs":
			i++
		}
	}
	c.r.feed("python", c.prog, c.in, nil)
	return c.filter()
}

// argvUnknown stands for an argument of a Python program not known
// statically.
const argvUnknown = "\x00argv?"

// keepArgv saves the program arguments being read and returns a function
// that puts them back (deferred by the interpreter handlers).
func (s *state) keepArgv() func() {
	prev, set := s.pyArgv, s.pyArgvSet
	return func() { s.pyArgv, s.pyArgvSet = prev, set }
}

// setPyArgv records the arguments of the interpreter code read next
// (Python's sys.argv, Perl's and Ruby's ARGV, PHP's $argv, Node's
// process.argv): the script or -c/-e first, then the words after it on
// the command line.
func (s *state) setPyArgv(first string, rest []sword) {
	argv := make([]string, 0, 1+len(rest))
	argv = append(argv, first)
	for _, w := range rest {
		if !w.known || w.glob {
			argv = append(argv, argvUnknown)
			continue
		}
		argv = append(argv, w.val)
	}
	s.pyArgv, s.pyArgvSet = argv, true
}

// shPythonModule knows the few modules run with -m that act: http.server
// listens, pip and the rest are Runs judged by their argv.
func shPythonModule(c *shCall, mod string, rest []sword) {
	switch mod {
	case "http.server", "SimpleHTTPServer":
		port := "8000"
		p := c.parseOpts(rest, shOpts("-b --bind -d --directory -p --protocol"), false)
		if len(p.ops) > 0 {
			port = p.ops[0].arg
		}
		host := ""
		if b, ok := p.get("-b", "--bind"); ok {
			host = b.arg
		}
		c.r.s.add(Effect{Kind: Listen, Program: c.prog, Detail: &Detail{Host: host, Port: port}})
		dir := shLit(".")
		if d, ok := p.get("-d", "--directory"); ok {
			dir = d
		}
		c.file(Read, dir, func(e *Effect) { e.Recursive = true })
	}
}

func hNode(c *shCall) *shStream {
	args := c.args()
	if c.prog == "deno" || c.prog == "bun" {
		if len(args) > 0 && args[0].known && (args[0].val == "eval" || args[0].val == "run" || args[0].val == "x") {
			if args[0].val == "eval" && len(args) > 1 {
				c.codeText("node", args[len(args)-1])
				return c.filter()
			}
			args = args[1:]
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.known || a.val == "" || a.val[0] != '-' {
			if a.known && strings.Contains(a.val, "://") {
				c.connectURL(a)
				c.r.download(&shStream{kind: sNet, url: a.val, host: shURLHost(a.val)}, c.prog)
				return c.filter()
			}
			defer c.r.s.keepArgv()()
			c.r.s.setPyArgv(a.val, args[i+1:])
			c.scriptFile("node", c.prog, a, nil)
			return c.filter()
		}
		switch a.val {
		case "-e", "--eval", "-p", "--print":
			if i+1 < len(args) {
				defer c.r.s.keepArgv()()
				// node -e CODE A B: process.argv is [node, A, B].
				if i+2 < len(args) {
					first := args[i+2].val
					if !args[i+2].known {
						first = argvUnknown
					}
					c.r.s.setPyArgv(first, args[i+3:])
				} else {
					c.r.s.pyArgv, c.r.s.pyArgvSet = nil, true
				}
				c.codeText("node", args[i+1])
			}
			return c.filter()
		case "-":
			c.r.feed("node", c.prog, c.in, nil)
			return c.filter()
		case "-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--input-type", "--env-file":
			i++
		}
		if v, ok := strings.CutPrefix(a.val, "--eval="); ok {
			c.codeText("node", shLit(v))
			return c.filter()
		}
	}
	c.r.feed("node", c.prog, c.in, nil)
	return c.filter()
}

func hPerl(c *shCall) *shStream {
	args := c.args()
	var code []string
	codeKnown := true
	var codeWord sword
	inPlace, loop := false, false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.known || len(a.val) < 2 || a.val[0] != '-' {
			break
		}
		if a.val == "--" {
			i++
			break
		}
		s := a.val[1:]
	cluster:
		for j := 0; j < len(s); j++ {
			switch s[j] {
			case 'e', 'E':
				var w sword
				if j+1 < len(s) {
					w = shLit(s[j+1:])
				} else if i+1 < len(args) {
					i++
					w = args[i]
				}
				if !w.known {
					codeKnown = false
					codeWord = w
				}
				code = append(code, w.val)
				break cluster
			case 'i':
				inPlace = true
				break cluster
			case 'n', 'p':
				loop = true
			case 'M', 'm', 'I', 'F', 'x', 'C', 'd', 'D', 'V':
				if j+1 == len(s) && (s[j] == 'I') && i+1 < len(args) {
					i++
				}
				break cluster
			case 'l', '0':
				for j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9' {
					j++
				}
			}
		}
	}
	rest, done := c.interpCode("perl", code, codeKnown, codeWord, args[i:])
	if done {
		return c.filter()
	}
	if inPlace {
		c.files(Read, rest, false)
		c.files(Write, rest, false)
		return nil
	}
	if loop {
		c.files(Read, rest, false)
	}
	return c.filter()
}

// interpCode reads what a Perl or Ruby command line runs: its -e code, or
// the script named first among rest, or its input when there is neither
// (done: nothing else is read). It returns the operands left (the files
// -n, -p and -i read or write).
func (c *shCall) interpCode(lang string, code []string, codeKnown bool, codeWord sword, rest []sword) (left []sword, done bool) {
	defer c.r.s.keepArgv()()
	switch {
	case len(code) == 0 && len(rest) == 0:
		c.r.feed(lang, c.prog, c.in, nil)
		return nil, true
	case len(code) == 0:
		c.r.s.setPyArgv(rest[0].val, rest[1:])
		c.scriptFile(lang, c.prog, rest[0], nil)
		return rest[1:], false
	}
	c.r.s.setPyArgv("-e", rest)
	switch {
	case codeKnown:
		c.r.readCode(lang, strings.Join(code, "\n"), nil)
	default:
		c.codeText(lang, codeWord)
	}
	return rest, false
}

func hRuby(c *shCall) *shStream {
	args := c.args()
	var code []string
	codeKnown := true
	var codeWord sword
	inPlace, loop := false, false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.known || len(a.val) < 2 || a.val[0] != '-' {
			break
		}
		switch {
		case a.val == "-e" && i+1 < len(args):
			i++
			if !args[i].known {
				codeKnown, codeWord = false, args[i]
			}
			code = append(code, args[i].val)
		case strings.HasPrefix(a.val, "-e") && len(a.val) > 2:
			code = append(code, a.val[2:]) // ruby -e'code'
		case strings.HasPrefix(a.val, "-i"):
			inPlace = true
		case a.val == "-n" || a.val == "-p":
			loop = true
		case a.val == "-r" || a.val == "-I" || a.val == "-C" || a.val == "-E":
			i++
		}
	}
	if codeKnown && len(code) == 1 && strings.HasPrefix(strings.TrimSpace(code[0]), "httpd") && shHasWord(args[:i], "-run") {
		rubyHttpd(c, args[i:])
		return c.filter()
	}
	rest, done := c.interpCode("ruby", code, codeKnown, codeWord, args[i:])
	if done {
		return c.filter()
	}
	if inPlace {
		c.files(Write, rest, false)
	} else if loop {
		c.files(Read, rest, false)
	}
	return c.filter()
}

// rubyHttpd reads ruby -run -e httpd [DIR] [-p PORT] [-b ADDR]: un.rb's
// file server, on every interface unless -b says otherwise, of DIR (the
// working directory by default).
func rubyHttpd(c *shCall, rest []sword) {
	p := c.parseOpts(rest, shOpts("-p --port -b --bind-address"), false)
	host, port := "", "8080"
	if v, ok := p.get("-b", "--bind-address"); ok {
		host = v.arg
	}
	if v, ok := p.get("-p", "--port"); ok {
		port = v.arg
	}
	c.r.s.add(Effect{Kind: Listen, Program: c.prog, Detail: &Detail{Host: host, Port: port}})
	dir := shLit(".")
	if len(p.ops) > 0 {
		dir = p.ops[0]
	}
	c.file(Read, dir, func(e *Effect) { e.Recursive = true })
}

// shHasWord reports whether a known word equals w.
func shHasWord(ws []sword, w string) bool {
	for _, x := range ws {
		if x.known && x.val == w {
			return true
		}
	}
	return false
}

func hPhp(c *shCall) *shStream {
	args := c.args()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.known || a.val == "" || a.val[0] != '-' {
			defer c.r.s.keepArgv()()
			c.r.s.setPyArgv(a.val, args[i+1:])
			c.scriptFile("php", c.prog, a, nil)
			return c.filter()
		}
		switch a.val {
		case "-r", "-B", "-R", "-E":
			if i+1 < len(args) {
				defer c.r.s.keepArgv()()
				c.r.s.setPyArgv("Standard input code", args[i+2:])
				c.codeText("php", args[i+1])
			}
			if a.val == "-r" {
				return c.filter()
			}
			i++
		case "-f":
			if i+1 < len(args) {
				defer c.r.s.keepArgv()()
				c.r.s.setPyArgv(args[i+1].val, args[i+2:])
				c.scriptFile("php", c.prog, args[i+1], nil)
			}
			return c.filter()
		case "-S":
			if i+1 < len(args) {
				host, port, _ := strings.Cut(args[i+1].val, ":")
				c.r.s.add(Effect{Kind: Listen, Program: c.prog, Detail: &Detail{Host: host, Port: port}})
				// The built-in server serves the files under its
				// document root (-t), the working directory by default.
				root := shLit(".")
				if t, ok := c.parseOpts(args[i+2:], shOpts("-t -c -d"), false).get("-t"); ok {
					root = t
				}
				c.file(Read, root, func(e *Effect) { e.Recursive = true })
			}
			return c.filter()
		case "-d", "-c", "-z", "-t":
			i++
		}
	}
	c.r.feed("php", c.prog, c.in, nil)
	return c.filter()
}

// ---- builtins of the shell itself ----

// inline reads text in the current shell (eval, source): it sees and
// changes the script's variables, functions and aliases.
func (r *sh) inline(text string, in *shStream) {
	r.s.nested("shell", func() {
		if len(text) > MaxInput {
			r.s.unknown(true, "shell script of %d bytes, longer than the %d read", len(text), MaxInput)
			return
		}
		p := shParserPool.Get().(*syntax.Parser)
		f, err := p.Parse(strings.NewReader(text), "")
		shParserPool.Put(p)
		if err != nil {
			r.s.unknown(false, ShellSyntaxError+": %s", shShortErr(err))
			return
		}
		r.stmts(f.Stmts, in)
	})
}

// splitText splits a string into words as the shell would (env -S).
func (r *sh) splitText(text string) []sword {
	p := shParserPool.Get().(*syntax.Parser)
	defer shParserPool.Put(p)
	var ws []*syntax.Word
	for w, err := range p.WordsSeq(strings.NewReader(text)) {
		if err != nil {
			return []sword{{arg: text}}
		}
		ws = append(ws, w)
	}
	return r.words(ws, true)
}

func hEval(c *shCall) *shStream {
	w := shJoinWords(c.args())
	if w.known {
		c.r.inline(w.val, c.in)
		return nil
	}
	if w.out != nil && w.out.kind == sNet {
		c.r.download(w.out, "eval")
		return nil
	}
	c.r.s.opaque("sh", outProg(w), "eval of text not known statically: %s", w.arg)
	return nil
}

func hSource(c *shCall) *shStream {
	args := c.args()
	if len(args) == 0 {
		return nil
	}
	w := args[0]
	saved := c.r.args
	if len(args) > 1 {
		c.r.args = args[1:]
	}
	defer func() { c.r.args = saved }()
	if w.out != nil && w.known {
		// source <(cmd) runs cmd's output; source "$(cmd)" the file it
		// names (a path not known, below).
		switch w.out.kind {
		case sText:
			c.r.inline(w.out.text, c.in)
		case sFile:
			c.r.sourceFile(w.out.path)
		default:
			c.r.feed("sh", c.prog, w.out, nil)
		}
		return nil
	}
	if !w.known {
		c.r.s.opaque("sh", outProg(w), "%s of a script whose path is not known statically: %s", c.prog, w.arg)
		return nil
	}
	if stdinPath(w.val) {
		if c.in != nil && c.in.kind == sText {
			c.r.inline(c.in.text, nil)
		} else {
			c.runsStdin("sh", "sh", nil)
		}
		return nil
	}
	p := c.r.path(w.val, false)
	c.r.s.add(Effect{Kind: Read, Program: c.prog, Path: p})
	c.r.sourceFile(p)
	return nil
}

func (r *sh) sourceFile(p string) {
	if st, ok := r.fetched[p]; ok {
		r.download(st, "source")
		return
	}
	if text, ok := r.written[p]; ok {
		r.inline(text, nil)
		return
	}
	fs := r.s.ctx.FS
	if fs == nil || !strings.HasPrefix(p, "/") {
		r.s.add(Effect{Kind: Unknown, Detail: &Detail{Into: "sh", Reason: fmt.Sprintf("source runs the script %s, which the analysis cannot see", p)}, Path: p})
		return
	}
	data, trunc, err := fs.ReadFile(p, MaxScriptBytes)
	switch {
	case err != nil:
		r.s.add(Effect{Kind: Unknown, Detail: &Detail{Into: "sh", Reason: fmt.Sprintf("source runs the script %s, which could not be read", p)}, Path: p})
	case trunc:
		r.s.unknown(true, "source runs the script %s, larger than the %d bytes read", p, MaxScriptBytes)
	default:
		r.inline(string(data), nil)
	}
}

func hTrap(c *shCall) *shStream {
	args := c.args()
	if len(args) < 2 || args[0].known && (args[0].val == "-" || args[0].val == "-l" || args[0].val == "-p" || args[0].val == "") {
		return nil
	}
	c.shellText("trap", args[0], nil)
	return nil
}

func hCd(c *shCall) *shStream {
	// The directory left is $OLDPWD (and ~-) from here on.
	c.r.cow()
	if prev := c.r.s.cwd(); prev != "" && c.prog == "cd" {
		c.r.vars["OLDPWD"] = shVar{val: prev, known: true}
	} else {
		c.r.vars["OLDPWD"] = shVar{}
	}
	p := c.parseOpts(c.args(), nil, false)
	if len(p.ops) == 0 {
		c.r.s.ctx.Cwd = c.r.s.ctx.Home
		if c.r.s.ctx.Home == "" {
			// The home, not known: paths go on from "~" as "~/x" does.
			c.r.s.ctx.Cwd = "~"
		}
		return nil
	}
	w := p.ops[0]
	if !w.known || w.val == "-" {
		c.r.s.ctx.Cwd = lostCwd
		return nil
	}
	d := c.r.path(w.val, false)
	if strings.HasPrefix(d, "/") || d == "~" || strings.HasPrefix(d, "~/") {
		c.r.s.ctx.Cwd = d
	} else {
		c.r.s.ctx.Cwd = lostCwd
	}
	return nil
}

func hPopd(c *shCall) *shStream {
	c.r.s.ctx.Cwd = lostCwd
	return nil
}

func hAlias(c *shCall) *shStream {
	c.r.cow()
	for _, w := range c.args() {
		if !w.known {
			continue
		}
		name, val, ok := strings.Cut(w.val, "=")
		if !ok || name == "" || strings.HasPrefix(name, "-") {
			continue
		}
		if c.r.aliases == nil {
			c.r.aliases = map[string]string{}
		}
		c.r.aliases[name] = val
	}
	return nil
}

func hUnalias(c *shCall) *shStream {
	c.r.cow()
	for _, w := range c.args() {
		if w.known && w.val == "-a" {
			c.r.aliases = nil
		}
		delete(c.r.aliases, w.val)
	}
	return nil
}

func hUnset(c *shCall) *shStream {
	c.r.cow()
	fn := false
	for _, w := range c.args() {
		switch {
		case w.known && w.val == "-f":
			fn = true
		case w.known && strings.HasPrefix(w.val, "-"):
		case fn:
			delete(c.r.funcs, w.val)
		default:
			c.r.vars[w.val] = shVar{known: true}
		}
	}
	return nil
}

func hRead(c *shCall) *shStream {
	c.r.cow()
	p := c.parseOpts(c.args(), shOpts("-p -d -n -N -t -u -a -i -C -c -s"), false)
	for _, w := range p.ops {
		c.r.vars[w.val] = shVar{out: pidStream(c.in)}
	}
	if a, ok := p.get("-a"); ok {
		c.r.vars[a.val] = shVar{}
	}
	return nil
}

func hSet(c *shCall) *shStream {
	args := c.args()
	for i, w := range args {
		if w.known && (w.val == "--" || w.val == "-") {
			c.r.args = append([]sword{}, args[i+1:]...)
			return nil
		}
		if !w.known || !strings.HasPrefix(w.val, "-") && !strings.HasPrefix(w.val, "+") {
			c.r.args = append([]sword{}, args[i:]...)
			return nil
		}
		if w.val == "-o" || w.val == "+o" {
			return nil
		}
	}
	return nil
}

func hShift(c *shCall) *shStream {
	n := 1
	if a := c.args(); len(a) > 0 {
		if !a[0].known {
			c.r.args = []sword{{arg: "$@"}}
			return nil
		}
		n = shAtoi(a[0].val, 1)
	}
	if n > len(c.r.args) {
		n = len(c.r.args)
	}
	c.r.args = c.r.args[n:]
	return nil
}

func shAtoi(s string, d int) int {
	n := 0
	if s == "" {
		return d
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return d
		}
		n = n*10 + int(r-'0')
		if n > 1<<20 {
			return d
		}
	}
	return n
}

func hExport(c *shCall) *shStream {
	c.r.cow()
	export := c.prog == "export"
	for _, w := range c.args() {
		if w.known && strings.HasPrefix(w.val, "-") {
			export = export || strings.Contains(w.val, "x")
			continue
		}
		name, val, ok := strings.Cut(w.arg, "=")
		if !shIsAssignWord(name + "=") {
			continue
		}
		if !ok {
			v := c.r.vars[name]
			v.exported = v.exported || export
			c.r.vars[name] = v
			continue
		}
		if w.known {
			c.r.commandVar(name, shLit(val))
		} else {
			c.r.commandVar(name, sword{arg: val, out: w.out, dyn: w.dyn})
		}
		if w.known {
			c.r.vars[name] = shVar{val: val, known: true, exported: export}
		} else {
			c.r.vars[name] = shVar{exported: export}
		}
	}
	return nil
}

// ---- literal text and decoders ----

// decodeRound spends one decode round; past MaxDecodeRounds it records a
// limit Unknown and reports false.
func (r *sh) decodeRound(what string) bool {
	if r.s.decodes >= MaxDecodeRounds {
		r.s.unknown(true, "more than %d encoded payloads decoded (%s)", MaxDecodeRounds, what)
		return false
	}
	r.s.decodes++
	return true
}

func hEcho(c *shCall) *shStream {
	args := c.args()
	newline, escapes := true, false
	for len(args) > 0 && args[0].known && len(args[0].val) > 1 && args[0].val[0] == '-' && strings.Trim(args[0].val[1:], "neE") == "" {
		newline = newline && !strings.Contains(args[0].val, "n")
		escapes = strings.Contains(args[0].val, "e") || escapes && !strings.Contains(args[0].val, "E")
		args = args[1:]
	}
	w := shJoinWords(args)
	if !w.known {
		return shOutputOf("echo")
	}
	text := w.val
	if escapes && strings.Contains(text, "\\") {
		if !c.r.decodeRound("echo -e") {
			return shOutputOf("echo")
		}
		text, _, _ = expandFormat("%b", []string{text})
	}
	if newline {
		text += "\n"
	}
	return &shStream{kind: sText, text: text}
}

var printfWidthRE = regexp.MustCompile(`%[-+ #0']*(\*|[0-9]{5,})|\.[0-9]{5,}`)

func hPrintf(c *shCall) *shStream {
	c.r.cow()
	args := c.args()
	varName := ""
	if len(args) >= 2 && args[0].known && args[0].val == "-v" {
		varName, args = args[1].val, args[2:]
	}
	if len(args) > 0 && args[0].known && args[0].val == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return nil
	}
	vals := make([]string, len(args))
	for i, a := range args {
		if !a.known {
			if varName != "" {
				c.r.vars[varName] = shVar{}
			}
			return shOutputOf("printf")
		}
		vals[i] = a.val
	}
	if strings.Contains(strings.Join(vals, ""), "\\") && !c.r.decodeRound("printf") {
		return shOutputOf("printf")
	}
	if printfWidthRE.MatchString(vals[0]) {
		c.r.s.unknown(true, "printf with a field width too large to expand")
		return shOutputOf("printf")
	}
	text, _, err := expandFormat(vals[0], vals[1:])
	if err != nil {
		return shOutputOf("printf")
	}
	if varName != "" {
		c.r.vars[varName] = shVar{val: text, known: true}
		return nil
	}
	return &shStream{kind: sText, text: text}
}

// shDecodeBase64 decodes standard or URL base64 with or without padding,
// ignoring blanks.
func shDecodeBase64(s string) ([]byte, bool) {
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\t' || r == '\r' {
			return -1
		}
		return r
	}, s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

func hBase64(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-w --wrap -b --break"), false)
	c.files(Read, p.ops, false)
	if !p.has("-d", "-D", "--decode") {
		return c.filter(c.paths(p.ops)...)
	}
	in := c.in
	if len(p.ops) > 0 {
		in = nil
	}
	if in != nil && in.kind == sNet {
		// Decoded data from the network is still data from the network.
		return &shStream{kind: sNet, url: in.url, host: in.host, port: in.port, prog: in.prog}
	}
	if in == nil || in.kind != sText {
		return c.filter(c.paths(p.ops)...)
	}
	if !c.r.decodeRound(c.prog + " -d") {
		return c.filter()
	}
	var b []byte
	var ok bool
	if c.prog == "base32" {
		var err error
		b, err = base32.StdEncoding.DecodeString(strings.TrimSpace(in.text))
		ok = err == nil
	} else {
		b, ok = shDecodeBase64(in.text)
	}
	if !ok {
		c.r.s.unknown(false, "%s -d of text that is not valid", c.prog)
		return c.filter()
	}
	return &shStream{kind: sText, text: string(b)}
}

func hXxd(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-c -g -l -o -s -n"), false)
	if len(p.ops) >= 2 {
		// xxd [-r] INFILE OUTFILE: the second operand is written.
		if in := p.ops[0]; !in.known || in.val != "-" {
			c.file(Read, in, nil)
		}
		c.file(Write, p.ops[1], nil)
		return nil
	}
	c.files(Read, p.ops, false)
	rev := p.has("-r", "-revert")
	plain := p.has("-p", "-ps", "-plain", "-postscript")
	if !rev || len(p.ops) > 0 || c.in == nil || c.in.kind != sText {
		return c.filter(c.paths(p.ops)...)
	}
	if !plain {
		c.r.s.unknown(false, "xxd -r of a hex dump")
		return c.filter()
	}
	if !c.r.decodeRound("xxd -r -p") {
		return c.filter()
	}
	h := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\t' || r == '\r' {
			return -1
		}
		return r
	}, c.in.text)
	b, err := hex.DecodeString(h)
	if err != nil {
		c.r.s.unknown(false, "xxd -r -p of text that is not hex")
		return c.filter()
	}
	return &shStream{kind: sText, text: string(b)}
}

func hRev(c *shCall) *shStream {
	if len(c.args()) > 0 || c.in == nil || c.in.kind != sText {
		return hReadOps(c)
	}
	lines := strings.Split(c.in.text, "\n")
	for i, l := range lines {
		rs := []rune(l)
		for a, b := 0, len(rs)-1; a < b; a, b = a+1, b-1 {
			rs[a], rs[b] = rs[b], rs[a]
		}
		lines[i] = string(rs)
	}
	return &shStream{kind: sText, text: strings.Join(lines, "\n")}
}

func hOpenssl(c *shCall) *shStream {
	args := c.args()
	if len(args) == 0 || !args[0].known {
		return c.filter()
	}
	sub := args[0].val
	p := shParseSingleDash(args[1:], shOpts("-connect -in -out -pass -k -K -iv -md -cipher -servername -port -accept -CAfile -cert -key -proxy"))
	if f, ok := p.get("-in"); ok {
		c.file(Read, f, nil)
	}
	if f, ok := p.get("-out"); ok {
		c.file(Write, f, nil)
	}
	switch sub {
	case "s_client":
		target, _ := p.get("-connect")
		host, port, _ := strings.Cut(target.val, ":")
		if port == "" {
			port = "443"
		}
		c.r.s.add(Effect{Kind: Connect, Program: "openssl", Detail: &Detail{Host: host, Port: port}})
		if c.in != nil {
			c.sendStdin(host, port, "")
		}
		return &shStream{kind: sNet, host: host, port: port}
	case "s_server":
		port, _ := p.get("-accept", "-port")
		c.r.s.add(Effect{Kind: Listen, Program: "openssl", Detail: &Detail{Port: port.val}})
		return &shStream{kind: sNet, port: port.val}
	case "base64", "enc":
		if p.has("-d") && (sub == "base64" || p.has("-base64", "-a")) && c.in != nil && c.in.kind == sText {
			if _, hasIn := p.get("-in"); !hasIn && c.r.decodeRound("openssl base64 -d") {
				if b, ok := shDecodeBase64(c.in.text); ok {
					return &shStream{kind: sText, text: string(b)}
				}
			}
		}
	}
	return c.filter()
}

// trSet expands a tr set: ranges (a-z) and the escapes \n \t \\.
func trSet(s string) ([]rune, bool) {
	if strings.Contains(s, "[:") || strings.Contains(s, "[=") {
		return nil, false
	}
	var in []rune
	for _, r := range s {
		in = append(in, r)
	}
	var out []rune
	for i := 0; i < len(in); i++ {
		r := in[i]
		if r == '\\' && i+1 < len(in) {
			i++
			switch in[i] {
			case 'n':
				r = '\n'
			case 't':
				r = '\t'
			default:
				r = in[i]
			}
			out = append(out, r)
			continue
		}
		if i+2 < len(in) && in[i+1] == '-' && in[i+2] >= r {
			for c := r; c <= in[i+2]; c++ {
				out = append(out, c)
			}
			i += 2
			continue
		}
		out = append(out, r)
	}
	return out, len(out) <= 1024
}

// hTr applies tr to literal input (tr -d, tr SET1 SET2, rot13 and the
// like); other input passes as a command's output.
func hTr(c *shCall) *shStream {
	p := c.parseOpts(c.args(), nil, false)
	if c.in == nil || c.in.kind != sText || len(p.ops) == 0 || !p.ops[0].known || p.has("-c", "-C", "--complement", "-s", "--squeeze-repeats") {
		return c.filter()
	}
	set1, ok := trSet(p.ops[0].val)
	if !ok {
		return c.filter()
	}
	if p.has("-d", "--delete") {
		del := map[rune]bool{}
		for _, r := range set1 {
			del[r] = true
		}
		return &shStream{kind: sText, text: strings.Map(func(r rune) rune {
			if del[r] {
				return -1
			}
			return r
		}, c.in.text)}
	}
	if len(p.ops) < 2 || !p.ops[1].known {
		return c.filter()
	}
	set2, ok := trSet(p.ops[1].val)
	if !ok || len(set2) == 0 {
		return c.filter()
	}
	m := map[rune]rune{}
	for i, r := range set1 {
		if i < len(set2) {
			m[r] = set2[i]
		} else {
			m[r] = set2[len(set2)-1]
		}
	}
	return &shStream{kind: sText, text: strings.Map(func(r rune) rune {
		if t, ok := m[r]; ok {
			return t
		}
		return r
	}, c.in.text)}
}

// gunzipText decompresses literal gzip data (echo … | base64 -d | gunzip).
func (c *shCall) gunzipText() *shStream {
	if !c.r.decodeRound("gunzip") {
		return c.filter()
	}
	zr, err := gzip.NewReader(strings.NewReader(c.in.text))
	if err != nil {
		c.r.s.unknown(false, "%s of data that is not gzip", c.prog)
		return c.filter()
	}
	b, err := io.ReadAll(io.LimitReader(zr, MaxInput+1))
	if err != nil || len(b) > MaxInput {
		c.r.s.unknown(err == nil, "%s of data not read to its end", c.prog)
		return c.filter()
	}
	return &shStream{kind: sText, text: string(b)}
}

// outProg names the program whose output a word is ("" when none or more
// than one).
func outProg(w sword) string {
	if w.out != nil {
		return w.out.prog
	}
	return ""
}
