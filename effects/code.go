package effects

import (
	"regexp"
	"strings"
)

// shellReader reads a shell command line found in interpreter code or a
// tool call. It is the shell reader; tests replace it to see exactly which
// command lines the interpreter readers hand over.
var shellReader func(s *state, script string)

func init() { shellReader = (*state).shell }

// code reads code in an interpreter's language. A language it does not
// know, or code longer than MaxInput, is an Unknown effect.
func (s *state) code(lang, code string) {
	if len(code) > MaxInput {
		s.unknown(true, "%s code longer than %d bytes", lang, MaxInput)
		return
	}
	l := codeLang(lang)
	switch l {
	case "python":
		s.nested("python", func() { s.python(code) })
	case "sh":
		shellReader(s, code)
	case "node", "perl", "ruby", "php":
		s.nested(l, func() { s.scanCode(l, code) })
	default:
		s.unknown(false, "code in a language not read: %q", snippet(lang))
		s.socketShellScan(lang, code)
		// Its commands given literally (R's system("..."), Lua's
		// os.execute) are still read, and other runners are code run
		// unread, as for those interpreters run from the shell.
		s.foreignCode(l, code)
		return
	}
	if l == "node" {
		s.socketShellScan(l, code)
	}
	if l != "sh" && forkLoopRE.MatchString(code) {
		s.unknown(false, "fork in an endless loop (a fork bomb) in %s code", l)
	}
}

// forkLoopRE finds a process fork inside a loop that does not end — while
// True, while 1, for (;;), loop do, or Perl's fork while fork — the fork
// bomb of an interpreter. A bounded pre-fork loop (for i in range(4)) is
// not one.
var forkLoopRE = regexp.MustCompile(`(?s)(?:\bwhile\s*\(?\s*(?:True|true|1)\s*\)?\s*[:{]?|\bfor\s*\(\s*;\s*;\s*\)|\bloop\s*(?:do\b|\{)|\bwhile\s*:)[^\n]{0,60}(?:\n[ \t]+[^\n]{0,80}){0,3}?\b(?:os\.fork|fork|pcntl_fork|Process\.fork)\s*\(?|\bfork\s+(?:while|until)\s+(?:fork|1)\b`)

// codeLang names an interpreter's language from the names agents and
// tools give it ("python3.12", "py", "nodejs", "javascript", "bash").
func codeLang(lang string) string {
	l := strings.ToLower(strings.TrimSpace(lang))
	if i := strings.LastIndexByte(l, '/'); i >= 0 {
		l = l[i+1:]
	}
	l = strings.TrimRight(l, "0123456789.")
	switch l {
	case "python", "py", "ipython", "python-", "pypy", "jupyter", "ipykernel":
		return "python"
	case "node", "nodejs", "js", "javascript", "deno", "bun", "typescript", "ts":
		return "node"
	case "perl":
		return "perl"
	case "ruby", "rb", "irb":
		return "ruby"
	case "php", "php-cli":
		return "php"
	case "sh", "bash", "shell", "zsh", "dash", "ksh", "busybox":
		return "sh"
	}
	return l
}

// JoinArgv writes an argv list as a shell command line that reads back as
// exactly these words: an element made only of characters no shell treats
// specially (ASCII letters, digits and -_./=:,+@%^) stays bare, any other
// is single-quoted (an empty one too; a single quote in it closes the
// quote, is escaped, and opens a new one). Joining with plain spaces would
// let an element such as "it's" open a quote that swallows later words.
func JoinArgv(argv []string) string {
	var b strings.Builder
	for i, w := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w != "" && strings.IndexFunc(w, shellSpecial) < 0 {
			b.WriteString(w)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(w, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}

// shellSpecial reports whether a shell may read r as other than itself.
func shellSpecial(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("-_./=:,+@%^", r)
}

var (
	foreignSocketRE = regexp.MustCompile(`(?i)\bsocket\b|/inet/tcp/|/inet/udp/|\bztcp\b|TCPSocket|TCPClient|createServer|net\.Dial|java\.net\.Socket|\bconnect\s*\(`)
	foreignExecRE   = regexp.MustCompile(`/bin/(?:ba|z|da|k)?sh\b|\bsh\s+-i\b|\bexec\b|\bpopen\b|ProcessBuilder|\brun\s*\(|os\.execute|\bsystem\s*\(|\|&\s*getline|child_process|\bspawn\b|>&\$REPLY|\biex\b|Invoke-Expression|exec\.Command`)
	foreignIPRE     = regexp.MustCompile(`\b((?:[0-9]{1,3}\.){3}[0-9]{1,3})\b`)
	foreignPortRE   = regexp.MustCompile(`\b([1-9][0-9]{1,4})\b`)
)

// socketShellScan is the conservative reading of code in a language the
// analysis does not parse (Lua, Tcl, Julia, JavaScript on the JVM, awk's
// /inet files, zsh's ztcp) and a fallback for Node: code that both opens a
// network socket and runs commands or a shell has the shape of a reverse
// or bind shell, and is reported as one (a Download into a shell with the
// host and port named in the code, and no URL).
func (s *state) socketShellScan(lang, code string) {
	if len(code) > MaxInput || !foreignSocketRE.MatchString(code) || !foreignExecRE.MatchString(code) {
		return
	}
	for _, e := range s.out {
		if e.Kind == Download && e.Into() != "" && e.URL() == "" {
			return
		}
	}
	host, port := "", ""
	rest := code
	if m := foreignIPRE.FindStringSubmatchIndex(code); m != nil {
		host = code[m[2]:m[3]]
		rest = code[m[3]:]
	}
	if m := foreignPortRE.FindStringSubmatch(rest); m != nil {
		port = m[1]
	}
	s.add(Effect{Kind: Download, Program: lang, Detail: &Detail{Host: host, Port: port, Into: "sh", Reason: "code in " + lang + " that opens a network socket and runs commands"}})
}

var foreignOpenRE = regexp.MustCompile(`(?:\bopen|readFile(?:Sync)?|File\.read|file_get_contents|slurp)\s*\(\s*["'](/[^"']+)["']`)

// socketUploadScan is the conservative reading of code in a language the
// analysis does not parse that opens a network socket: each absolute path
// the code opens by a literal name is read and may be sent to the host the
// code names (a Read and a Send of it).
func (s *state) socketUploadScan(lang, code string) {
	if len(code) > MaxInput || !foreignSocketRE.MatchString(code) {
		return
	}
	host, port := "", ""
	if m := foreignIPRE.FindStringSubmatchIndex(code); m != nil {
		host = code[m[2]:m[3]]
		if pm := foreignPortRE.FindStringSubmatch(code[m[3]:]); pm != nil {
			port = pm[1]
		}
	}
	for _, m := range foreignOpenRE.FindAllStringSubmatch(code, 8) {
		s.add(Effect{Kind: Read, Program: lang, Path: m[1]})
		s.add(Effect{Kind: Send, Program: lang, Detail: &Detail{Host: host, Port: port, Source: m[1]}})
	}
}
