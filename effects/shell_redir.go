package effects

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// fdTarget is what a file descriptor of a command is connected to.
type fdTarget struct {
	path   string    // a file
	append bool      // opened for appending
	net    *shStream // a /dev/tcp or /dev/udp connection (kind sNet)
	in     *shStream // literal input (here-document, here-string)
}

// redirState is what a statement's redirections leave its command with.
type redirState struct {
	stdin       *shStream
	stdoutTaken bool // the output goes to a file or the network, not down a pipe
	outPath     string
	outAppend   bool
	fds         fdTable
}

// shDevNull reports paths that reading or writing does nothing to.
func shDevNull(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero", "/dev/random", "/dev/urandom", "-":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/")
}

// shNetPath parses /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT.
func shNetPath(p string) (*shStream, bool) {
	var rest string
	switch {
	case strings.HasPrefix(p, "/dev/tcp/"):
		rest = p[len("/dev/tcp/"):]
	case strings.HasPrefix(p, "/dev/udp/"):
		rest = p[len("/dev/udp/"):]
	default:
		return nil, false
	}
	host, port, _ := strings.Cut(rest, "/")
	return &shStream{kind: sNet, host: host, port: port}, true
}

func (r *sh) redirs(list []*syntax.Redirect, in *shStream) redirState {
	rd := redirState{stdin: in}
	if len(list) == 0 && r.fds == nil {
		return rd
	}
	fds := r.s.mem.fdTable(len(r.fds), len(r.fds)+len(list)+1)
	copy(fds, r.fds)
	var sent []*shStream
	connect := func(ns *shStream) {
		r.s.add(Effect{Kind: Connect, Detail: &Detail{Host: ns.host, Port: ns.port}})
	}
	for _, x := range list {
		n := -1
		if x.N != nil {
			if v, err := strconv.Atoi(x.N.Value); err == nil {
				n = v
			}
		}
		def := func(d int) int {
			if n >= 0 {
				return n
			}
			return d
		}
		switch x.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			fds.set(def(0), fdTarget{in: r.heredoc(x)})
			continue
		case syntax.WordHdoc:
			w := r.joinWord(x.Word)
			st := &shStream{kind: sText, text: w.val + "\n"}
			if !w.known {
				st = shOutputOf("")
				if w.out != nil {
					st = w.out
				}
			}
			fds.set(def(0), fdTarget{in: st})
			continue
		}
		w := r.redirWord(x.Word)
		switch x.Op {
		case syntax.DplIn, syntax.DplOut:
			if w.known {
				if m, err := strconv.Atoi(w.val); err == nil {
					d := 1
					if x.Op == syntax.DplIn {
						d = 0
					}
					fds.set(def(d), fds.at(m))
					continue
				}
				if w.val == "-" {
					fds.del(def(1))
					continue
				}
			}
		}
		if !w.known {
			switch x.Op {
			case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
				// The command reads a file it names at run time: whatever
				// it does with its input (a shell runs it, nc sends it) is
				// done with data the reader cannot name, as with
				// cat "$F" | cmd.
				r.s.unknown(false, "input redirection: read of a path not known statically: %s", w.arg)
				fds.set(def(0), fdTarget{in: r.s.mem.stream(shStream{kind: sOutput, lost: w.arg})})
			default:
				r.s.unknown(false, "redirection target not known statically: %s", w.arg)
			}
			continue
		}
		p := w.val
		ns, isNet := shNetPath(p)
		if isNet {
			connect(ns)
		}
		target := fdTarget{net: ns}
		if !isNet && !shDevNull(p) {
			target.path = r.path(p, false)
		}
		switch x.Op {
		case syntax.RdrIn, syntax.DplIn:
			if target.path != "" {
				r.s.add(Effect{Kind: Read, Path: target.path})
			}
			if w.out != nil {
				target.in = w.out
			}
			fds.set(def(0), target)
		case syntax.RdrInOut:
			if target.path != "" {
				r.s.add(Effect{Kind: Read, Path: target.path})
				r.s.add(Effect{Kind: Write, Path: target.path})
			}
			fds.set(def(0), target)
		case syntax.RdrOut, syntax.RdrClob, syntax.AppOut, syntax.AppClob, syntax.DplOut:
			target.append = x.Op == syntax.AppOut || x.Op == syntax.AppClob
			if target.path != "" {
				r.s.add(Effect{Kind: Write, Path: target.path, Append: x.Op == syntax.AppOut || x.Op == syntax.AppClob})
			}
			if x.Op == syntax.DplOut && n < 0 {
				fds.set(1, target)
				fds.set(2, target)
			} else {
				fds.set(def(1), target)
			}
		case syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
			target.append = x.Op == syntax.AppAll || x.Op == syntax.AppAllClob
			if target.path != "" {
				r.s.add(Effect{Kind: Write, Path: target.path, Append: x.Op == syntax.AppAll || x.Op == syntax.AppAllClob})
			}
			fds.set(1, target)
			fds.set(2, target)
		}
	}
	for _, fd := range []int{1, 2} {
		t, ok := fds.get(fd)
		if !ok {
			continue
		}
		if fd == 1 {
			rd.stdoutTaken = true
			rd.outPath, rd.outAppend = t.path, t.append
		}
		if t.net != nil {
			dup := false
			for _, s := range sent {
				if s == t.net {
					dup = true
				}
			}
			if !dup {
				sent = append(sent, t.net)
				r.s.add(Effect{Kind: Send, Detail: &Detail{Host: t.net.host, Port: t.net.port, Source: "output"}})
			}
		}
	}
	if t, ok := fds.get(0); ok {
		switch {
		case t.in != nil:
			rd.stdin = t.in
		case t.net != nil:
			rd.stdin = t.net
		case t.path != "":
			rd.stdin = &shStream{kind: sFile, path: t.path}
		default:
			rd.stdin = nil
		}
	}
	rd.fds = fds
	return rd
}

// heredoc returns a here-document's text: literal when its delimiter is
// quoted, expanded otherwise.
func (r *sh) heredoc(x *syntax.Redirect) *shStream {
	quoted := false
	if x.Word != nil {
		for _, p := range x.Word.Parts {
			switch p := p.(type) {
			case *syntax.SglQuoted, *syntax.DblQuoted:
				quoted = true
			case *syntax.Lit:
				if strings.Contains(p.Value, "\\") {
					quoted = true
				}
			}
		}
	}
	if x.Hdoc == nil {
		return &shStream{kind: sText}
	}
	if quoted {
		var sb strings.Builder
		for _, p := range x.Hdoc.Parts {
			if l, ok := p.(*syntax.Lit); ok {
				sb.WriteString(l.Value)
			}
		}
		return &shStream{kind: sText, text: sb.String()}
	}
	w := r.document(x.Hdoc)
	if !w.known {
		return shOutputOf("")
	}
	return &shStream{kind: sText, text: w.val}
}

// redirWord evaluates a redirection target: no field splitting, and a
// pattern is expanded (through ctx.FS) only when it matches one path, as
// bash does.
func (r *sh) redirWord(w *syntax.Word) sword {
	if r.s.ctx.FS != nil {
		if ws := r.words([]*syntax.Word{w}, false); len(ws) == 1 && ws[0].known && !ws[0].glob {
			return ws[0]
		}
	}
	return r.joinWord(w)
}

// fdTable maps file descriptors to what they are connected to (a slice:
// a statement has few).
type fdTable []fdEntry

type fdEntry struct {
	fd int
	t  fdTarget
}

func (f fdTable) get(fd int) (fdTarget, bool) {
	for _, e := range f {
		if e.fd == fd {
			return e.t, true
		}
	}
	return fdTarget{}, false
}

func (f fdTable) at(fd int) fdTarget {
	t, _ := f.get(fd)
	return t
}

func (f *fdTable) set(fd int, t fdTarget) {
	for i := range *f {
		if (*f)[i].fd == fd {
			(*f)[i].t = t
			return
		}
	}
	*f = append(*f, fdEntry{fd, t})
}

func (f *fdTable) del(fd int) {
	for i := range *f {
		if (*f)[i].fd == fd {
			*f = append((*f)[:i], (*f)[i+1:]...)
			return
		}
	}
}
