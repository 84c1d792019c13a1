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
		return
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

// joinArgv writes an argv list as a shell command line that reads back as
// exactly these words: an element made only of characters no shell treats
// specially stays bare, any other is single-quoted (a single quote in it
// closes the quote, is escaped, and opens a new one).
func joinArgv(argv []string) string {
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
