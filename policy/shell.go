package policy

import (
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// Shell helpers read commands the way a careful reviewer would skim them:
// they split a command line into simple commands and words, honouring
// quotes, and recognise the common shapes. They are heuristics, not a shell
// parser; the packs that use them say so.

// argumentHolders are the payload keys under which agents put tool input.
var argumentHolders = keys("arguments", "tool_input", "input", "params")

// commandKeys hold a shell command (a string, or an argv list).
var commandKeys = keys("command", "cmd", "script", "commands")

// keys boxes map keys once, so that lookups do not allocate.
func keys(names ...string) []ref.Val {
	out := make([]ref.Val, len(names))
	for i, n := range names {
		out[i] = types.String(n)
	}
	return out
}

// holders returns the payload itself and its argument objects.
func holders(payload ref.Val) (hs [5]traits.Mapper, n int) {
	top, ok := payload.(traits.Mapper)
	if !ok {
		return hs, 0
	}
	hs[0], n = top, 1
	for _, k := range argumentHolders {
		if v, found := top.Find(k); found {
			if m, ok := v.(traits.Mapper); ok {
				hs[n] = m
				n++
			}
		}
	}
	return hs, n
}

// stringsOf returns v as strings: a string, or the strings of a list.
func stringsOf(v ref.Val) []string {
	switch x := v.(type) {
	case types.String:
		return []string{string(x)}
	case traits.Lister:
		var out []string
		n, _ := x.Size().(types.Int)
		for i := types.Int(0); i < n; i++ {
			if s, ok := x.Get(i).(types.String); ok {
				out = append(out, string(s))
			}
		}
		return out
	}
	return nil
}

// shellCommand returns the shell command carried by a payload, "" if none.
// An argv list is written as a shell command line that reads back as the
// same words (see joinArgv); a "commands" list, which holds scripts, is
// joined with newlines; when several keys hold commands, they are joined
// with newlines.
func shellCommand(payload ref.Val) string {
	s, _ := shellCommandVal(payload).(types.String)
	return string(s)
}

// joinArgv writes an argv list as a shell command line whose words are
// exactly the list's elements. exec passes each element as it is, quotes
// and spaces included, so an element is written bare only when it is made
// of characters no shell treats specially (["rm", "-rf", "/"] reads
// "rm -rf /", which rules matching the text still recognise); any other
// element is single-quoted (an empty one too), each single quote in it
// written as quote, backslash, quote, quote.
// Joining with plain spaces would let an element such as "it's" or "\""
// open a quote that swallows the words after it when the line is parsed.
func joinArgv(argv []string) string {
	var b strings.Builder
	for i, w := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w != "" && strings.IndexFunc(w, notShellSafe) < 0 {
			b.WriteString(w)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(w, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}

// notShellSafe reports whether a shell may read r as anything but itself:
// only ASCII letters, digits and -_./=:,+@%^ are safe.
func notShellSafe(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("-_./=:,+@%^", r)
}

// shellCommandVal is shellCommand as a CEL string. A command held by a
// single string argument is returned as the payload's own value.
func shellCommandVal(payload ref.Val) ref.Val {
	var (
		first    string
		firstVal ref.Val
		rest     []string
	)
	hs, n := holders(payload)
	for _, m := range hs[:n] {
		for _, k := range commandKeys {
			v, found := m.Find(k)
			if !found {
				continue
			}
			var s string
			var sv ref.Val
			switch x := v.(type) {
			case types.String:
				s, sv = string(x), v
			default:
				if k == types.String("commands") {
					s = strings.Join(stringsOf(v), "\n") // scripts, one a line
				} else {
					s = joinArgv(stringsOf(v))
				}
			}
			switch {
			case s == "":
			case first == "":
				first, firstVal = s, sv
			default:
				rest = append(rest, s)
			}
		}
	}
	switch {
	case rest != nil:
		return types.String(first + "\n" + strings.Join(rest, "\n"))
	case firstVal != nil:
		return firstVal
	}
	return types.String(first)
}

// shellWord is one word of a simple command; redirect marks the target of a
// redirection (the word after > or <).
type shellWord struct {
	text     string
	redirect bool
}

// splitCommands splits a command line into simple commands (separated by
// ; & | newlines, parentheses, backquotes and $( ), each a list of words
// with quotes and backslashes removed.
func splitCommands(line string) [][]shellWord {
	var (
		cmds     [][]shellWord
		cur      []shellWord
		word     strings.Builder
		inWord   bool
		redirect bool
		quote    byte
		// subst counts $( ) substitutions opened inside double quotes: the
		// substitution is code, and the quote resumes after its ")".
		subst int
	)
	endWord := func() {
		if inWord {
			cur = append(cur, shellWord{text: word.String(), redirect: redirect})
			redirect = false
		}
		word.Reset()
		inWord = false
	}
	endCmd := func() {
		endWord()
		if len(cur) > 0 {
			cmds = append(cmds, cur)
		}
		cur = nil
		redirect = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				word.WriteByte(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(line):
				i++
				word.WriteByte(line[i])
			case c == '$' && i+1 < len(line) && line[i+1] == '(':
				endCmd()
				i++
				quote = 0
				subst++
			default:
				word.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote = c
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			if line[i] != '\n' {
				word.WriteByte(line[i])
				inWord = true
			}
		case c == ' ' || c == '\t':
			endWord()
		case c == ')' && subst > 0:
			endCmd()
			subst--
			quote = '"'
		case c == ';' || c == '&' || c == '|' || c == '\n' || c == '(' || c == ')' || c == '`':
			endCmd()
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			endCmd()
			i++
		case c == '>' || c == '<':
			endWord()
			for i+1 < len(line) && (line[i+1] == '>' || line[i+1] == '&') {
				i++
			}
			redirect = true
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

// commandWrappers run the command that follows them.
var commandWrappers = map[string]bool{
	"sudo": true, "doas": true, "env": true, "nohup": true, "time": true, "exec": true,
	"command": true, "nice": true, "timeout": true, "xargs": true, "stdbuf": true, "builtin": true,
}

// commandStart returns the index of the command word in a simple command,
// skipping variable assignments, wrappers and their options.
func commandStart(words []shellWord) int {
	i := 0
	for i < len(words) {
		w := words[i].text
		switch {
		case words[i].redirect:
		case isAssignment(w):
		case commandWrappers[baseName(w)]:
			if baseName(w) == "timeout" {
				for i+1 < len(words) && strings.HasPrefix(words[i+1].text, "-") {
					i++
				}
				i++ // the duration
			}
		case strings.HasPrefix(w, "-") && i > 0 && commandWrappers[baseName(words[i-1].text)]:
		default:
			return i
		}
		i++
	}
	return len(words)
}

func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for _, c := range w[:eq] {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func baseName(w string) string {
	if i := strings.LastIndexByte(w, '/'); i >= 0 {
		return w[i+1:]
	}
	return w
}

// shellPaths returns the words of a command line that name paths which can
// leave the working directory: absolute paths, home paths and paths with a
// ".." segment. Command words themselves (/usr/bin/python, and wrappers
// such as /usr/bin/env before them) are skipped.
func shellPaths(line string) []string {
	var out []string
	for _, cmd := range splitCommands(line) {
		start := commandStart(cmd)
		for i, w := range cmd {
			if i <= start && !w.redirect {
				continue // the command word and the wrappers before it
			}
			if p, ok := pathInWord(w.text); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// pathInWord extracts a path from a word such as /etc/passwd, ~/x,
// --output=/tmp/x or of=/dev/sda.
func pathInWord(w string) (string, bool) {
	if strings.Contains(w, "://") {
		return "", false
	}
	if eq := strings.IndexByte(w, '='); eq >= 0 && !strings.HasPrefix(w, "/") && !strings.HasPrefix(w, "~") {
		w = w[eq+1:]
	}
	if strings.HasPrefix(w, "-") {
		return "", false
	}
	w = strings.Replace(w, "${HOME}", "~", 1)
	w = strings.Replace(w, "$HOME", "~", 1)
	switch {
	case strings.HasPrefix(w, "/"), w == "~", strings.HasPrefix(w, "~/"):
		return w, true
	case w == "..", strings.HasPrefix(w, "../"), strings.HasSuffix(w, "/.."), strings.Contains(w, "/../"):
		return w, true
	}
	return "", false
}

// pathKeys are argument names that hold a file system path.
var pathKeys = keys(
	"path", "file_path", "filepath", "file", "filename", "dir", "directory", "cwd",
	"working_directory", "workdir", "target", "destination", "dest", "source", "src",
	"notebook_path", "old_path", "new_path", "paths", "files",
)

// actionPaths returns the paths an action touches: path-like arguments
// and the paths in its shell command.
func actionPaths(payload ref.Val) []string {
	var out []string
	hs, n := holders(payload)
	for i, m := range hs[:n] {
		if i == 0 && n > 1 {
			continue // with argument objects, top-level keys describe the call, not paths
		}
		for _, k := range pathKeys {
			if v, found := m.Find(k); found {
				out = append(out, stringsOf(v)...)
			}
		}
	}
	return append(out, shellPaths(shellCommand(payload))...)
}
