package effects

import (
	"path"
	"regexp"
	"strconv"
	"strings"
)

// The Node, Perl, Ruby and PHP readers are a careful scanner, not a
// parser: a tokenizer that knows each language's strings, comments and
// command quotes, then reads calls of the functions that run commands,
// touch files, open sockets and send signals, with their literal
// arguments (literal strings, concatenations of them, and variables
// assigned a literal once). A call it knows whose arguments it cannot
// compute is an Unknown; so is code that builds code (eval and the like).
// What it does not see: calls through aliases and computed names, code in
// regular expressions it mistakes for division (and the reverse), and
// data flow beyond one literal assignment. docs/effects.md says so.

type scTokKind uint8

const (
	tkIdent scTokKind = iota + 1
	tkStr             // a string literal (s is its value when known)
	tkCmd             // a command quote: backticks, qx, %x
	tkNum
	tkPunct
)

type scTok struct {
	k     scTokKind
	s     string
	known bool // tkStr/tkCmd: no interpolation the scanner could not fill
	nl    bool // a newline precedes the token
}

// scanner holds one reading.
type scanner struct {
	s            *state
	lang         string
	src          string
	toks         []scTok
	vars         map[string]scTok
	conns        []Effect
	shells       []string
	dup          bool
	unknownProc  bool
	unterminated bool
	mods         map[string]bool    // Node: the modules loaded (see modules)
	readCmds     map[string]bool    // commands read where a runner runs them
	funcs        map[string]*scFunc // functions the code defines, by name (code_funcs.go)
	funcList     []*scFunc          // every definition, in order
	defs         map[*scTok]*scFunc // the token each definition starts at
	depth        int                // calls of them being read
	inlines      int                // calls of them read
	limited      bool               // a bound of those was reached
	evalHidden   bool               // code not known is evaluated
	evalURLs     []string           // URLs named in the code evaluated
}

func (s *state) scanCode(lang, code string) {
	sc := &scanner{s: s, lang: lang, src: code, vars: map[string]scTok{}}
	sc.tokenize()
	if sc.unterminated {
		s.unknown(false, "%s: a string or quote that does not end: the code may be read wrong", lang)
		// The interpreter refuses code whose string does not end, so this
		// is more often the scanner misreading a quote it does not know
		// (Ruby ?", a regular expression taken for a division), which
		// hides the calls after it: the commands given literally to a
		// runner anywhere in the text are read, and a runner whose command
		// is not literal runs code unread.
		s.unterminatedRunners(lang, code)
	}
	sc.collectFuncs()
	sc.read()
	sc.readUncalled()
	sc.finish()
	sc.evalDownloads()
	if !sc.unterminated {
		// Balanced quotes can still be misread (a regular expression
		// taken for a division, if (x) /"/.test(s)), hiding a call: a
		// command given literally to a runner that the reading did not
		// meet is read too.
		sc.missedRunners(code)
	}
	if lang == "node" && (sc.modules()["child_process"] || sc.modules()["node:child_process"]) && nodeComputedMemberRE.MatchString(code) {
		// require("child_process")["exec"+"Sync"](…), cp[name](…): which
		// function runs, and what, is known only at run time.
		s.opaque("node", "", "node: a child_process function chosen at run time")
	}
}

// nodeComputedMemberRE is a member chosen by an expression that is not a
// plain string (one the reader reads: require("child_process")["exec"]):
// X["exec"+"Sync"], X[name], X[f()].
var nodeComputedMemberRE = regexp.MustCompile("[A-Za-z_$)][\\w$]*\\s*\\[\\s*(?:[\"'`][^\"'`]*[\"'`]\\s*\\+|[A-Za-z_$(])")

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// tokenize splits the source into tokens. Dotted names ("fs.unlinkSync",
// "File::Path::rmtree", "$sock->connect") are one identifier token.
func (sc *scanner) tokenize() {
	src := sc.src
	nl := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			nl = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == '#' && sc.lang != "node" && !(sc.lang == "php" && strings.HasPrefix(src[i:], "#[")):
			i = skipLine(src, i)
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/' && (sc.lang == "node" || sc.lang == "php"):
			i = skipLine(src, i)
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*' && (sc.lang == "node" || sc.lang == "php"):
			if j := strings.Index(src[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(src)
			}
			continue
		case c == '=' && nl && sc.lang == "perl" && isIdentStart(byte(at(src, i+1))):
			// POD: skip to =cut.
			if j := strings.Index(src[i:], "\n=cut"); j >= 0 {
				i = skipLine(src, i+j+1)
			} else {
				i = len(src)
			}
			continue
		case c == '\'' || c == '"' || c == '`':
			val, known, end := sc.quoted(src, i+1, c, c)
			k := tkStr
			if c == '`' && sc.lang != "node" {
				k = tkCmd
			} else if c == '`' {
				// A JavaScript template literal: ${} is interpolation.
				known = known && !strings.Contains(val, "${")
			}
			if c == '\'' && sc.lang != "node" {
				known = true
			}
			sc.push(scTok{k: k, s: val, known: known}, &nl)
			i = end
			continue
		case c == '%' && sc.lang == "ruby" && i+2 < len(src) && strings.IndexByte("xqQwWi", src[i+1]) >= 0 && !isIdentChar(src[i+2]) && src[i+2] != ' ':
			open := src[i+2]
			val, known, end := sc.quoted(src, i+3, open, closer(open))
			k := tkStr
			if src[i+1] == 'x' {
				k = tkCmd
			}
			sc.push(scTok{k: k, s: val, known: known || src[i+1] == 'q'}, &nl)
			i = end
			continue
		case c == '/' && sc.lang != "php" && sc.regexStart():
			// A regular expression literal: skipped, so that quotes in
			// it do not open strings.
			i = skipRegex(src, i+1, '/')
			for i < len(src) && isIdentChar(src[i]) {
				i++ // flags
			}
			sc.push(scTok{k: tkPunct, s: "regex"}, &nl)
			continue
		case c == '%' && sc.lang == "ruby" && strings.HasPrefix(src[i:], "%r") && i+2 < len(src) && !isIdentChar(src[i+2]) && src[i+2] != ' ':
			i = skipRegex(src, i+3, closer(src[i+2]))
			for i < len(src) && isIdentChar(src[i]) {
				i++
			}
			sc.push(scTok{k: tkPunct, s: "regex"}, &nl)
			continue
		case c == '<' && strings.HasPrefix(src[i:], "<<") && sc.lang != "node":
			if tok, end, ok := sc.heredoc(src, i); ok {
				sc.push(tok, &nl)
				i = end
				continue
			}
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && (isIdentChar(src[j]) || src[j] == '.') {
				j++
			}
			sc.push(scTok{k: tkNum, s: src[i:j], known: true}, &nl)
			i = j
			continue
		case isIdentStart(c) || (c == '$' || c == '@') && i+1 < len(src) && (isIdentStart(src[i+1]) || src[i+1] == '{'):
			j := i
			if c == '$' || c == '@' {
				j++
			}
			for j < len(src) {
				switch {
				case isIdentChar(src[j]):
					j++
				case src[j] == '.' && sc.lang != "perl" && sc.lang != "php" && j+1 < len(src) && isIdentStart(src[j+1]):
					j++
				case strings.HasPrefix(src[j:], "::") && j+2 < len(src) && isIdentStart(src[j+2]):
					j += 2
				case strings.HasPrefix(src[j:], "->") && j+2 < len(src) && isIdentStart(src[j+2]):
					j += 2
				case src[j] == '{' && j == i+1 && (c == '$' || c == '@'):
					// ${name}, @{...}; a one-letter word before a brace
					// (Perl q{...}) is not one.
					j++
				case src[j] == '}' && strings.HasPrefix(src[i:], "${"):
					j++
				default:
					goto done
				}
			}
		done:
			word := src[i:j]
			// Perl quote-like operators: q qq qw qx with any delimiter.
			if sc.lang == "perl" && (word == "m" || word == "qr" || word == "s" || word == "tr" || word == "y") {
				k := j
				for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
					k++
				}
				if k < len(src) && !isIdentChar(src[k]) && strings.IndexByte(",;=)}>-", src[k]) < 0 && src[k] != ' ' {
					open := src[k]
					end := skipRegex(src, k+1, closer(open))
					if word == "s" || word == "tr" || word == "y" {
						if open != closer(open) {
							for end < len(src) && (src[end] == ' ' || src[end] == '\t' || src[end] == '\n') {
								end++
							}
							if end < len(src) {
								end = skipRegex(src, end+1, closer(src[end]))
							}
						} else {
							end = skipRegex(src, end, open)
						}
					}
					for end < len(src) && isIdentChar(src[end]) {
						end++
					}
					sc.push(scTok{k: tkPunct, s: "regex"}, &nl)
					i = end
					continue
				}
			}
			if sc.lang == "perl" && (word == "q" || word == "qq" || word == "qw" || word == "qx") {
				k := j
				for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
					k++
				}
				if k < len(src) && !isIdentChar(src[k]) && src[k] != ',' && src[k] != ';' && src[k] != '=' && src[k] != ')' {
					val, known, end := sc.quoted(src, k+1, src[k], closer(src[k]))
					kind := tkStr
					if word == "qx" {
						kind = tkCmd
					}
					sc.push(scTok{k: kind, s: val, known: known || word == "q" || word == "qw"}, &nl)
					i = end
					continue
				}
			}
			sc.push(scTok{k: tkIdent, s: word}, &nl)
			i = j
			continue
		}
		sc.push(scTok{k: tkPunct, s: string(c)}, &nl)
		i++
	}
}

// regexStart reports whether a "/" here starts a regular expression
// rather than a division: at the start, after an operator or an opening
// bracket, or after a keyword that takes an expression.
func (sc *scanner) regexStart() bool {
	if len(sc.toks) == 0 {
		return true
	}
	t := sc.toks[len(sc.toks)-1]
	switch t.k {
	case tkPunct:
		return t.s != ")" && t.s != "]" && t.s != "}" && t.s != "regex"
	case tkIdent:
		switch t.s {
		case "return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw",
			"yield", "await", "and", "or", "not", "if", "unless", "when", "split", "grep", "map", "join":
			return true
		}
	}
	return false
}

// skipRegex returns the index after a regular expression body that ends
// with end (escapes and, for "/", character classes honoured).
func skipRegex(src string, i int, end byte) int {
	class := false
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\\':
			i += 2
			continue
		case c == '\n' && end == '/':
			return i // not a regular expression after all: stop at the line
		case end == '/' && c == '[':
			class = true
		case end == '/' && c == ']':
			class = false
		case c == end && !class:
			return i + 1
		}
		i++
	}
	return len(src)
}

func at(s string, i int) rune {
	if i < len(s) {
		return rune(s[i])
	}
	return 0
}

func skipLine(src string, i int) int {
	if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(src)
}

func closer(open byte) byte {
	switch open {
	case '(':
		return ')'
	case '[':
		return ']'
	case '{':
		return '}'
	case '<':
		return '>'
	}
	return open
}

func (sc *scanner) push(t scTok, nl *bool) {
	t.nl = *nl
	*nl = false
	sc.toks = append(sc.toks, t)
}

// quoted reads a quoted text from src[i:] up to the closing delimiter,
// decoding backslash escapes and filling interpolated variables the
// scanner knows; known is false when a variable it does not know is
// interpolated.
func (sc *scanner) quoted(src string, i int, open, close byte) (string, bool, int) {
	var b strings.Builder
	known := true
	depth := 0
	// Escapes are decoded in every JavaScript string and in the other
	// languages' double-quoted ones; variables are interpolated in
	// JavaScript template literals and the others' double-quoted strings.
	escapes := open != '\'' || sc.lang == "node"
	interp := open != '\'' && (sc.lang != "node" || open == '`')
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src):
			e := src[i+1]
			i += 2
			if !escapes {
				if e != close && e != '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(e)
				continue
			}
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'u':
				// \uXXXX and \u{X...} (JavaScript, Ruby, PHP).
				hexs, next := "", i
				if next < len(src) && src[next] == '{' {
					if k := strings.IndexByte(src[next:], '}'); k > 0 {
						hexs, next = src[next+1:next+k], next+k+1
					}
				} else if next+4 <= len(src) {
					hexs, next = src[next:next+4], next+4
				}
				if v, err := strconv.ParseUint(hexs, 16, 32); err == nil && hexs != "" && sc.lang != "perl" {
					b.WriteRune(rune(v))
					i = next
				} else {
					b.WriteString(`\u`)
				}
			case 'x':
				j := i
				for j < len(src) && j < i+2 && strings.IndexByte("0123456789abcdefABCDEF", src[j]) >= 0 {
					j++
				}
				if v, err := strconv.ParseUint(src[i:j], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i = j
				} else {
					b.WriteString(`\x`)
				}
			default:
				if e >= '0' && e <= '7' {
					j := i - 1
					for j < len(src) && j < i+2 && src[j] >= '0' && src[j] <= '7' {
						j++
					}
					v, _ := strconv.ParseUint(src[i-1:j], 8, 16)
					b.WriteByte(byte(v))
					i = j
					continue
				}
				b.WriteByte(e)
			}
		case c == open && open != close:
			depth++
			b.WriteByte(c)
			i++
		case c == close && depth > 0:
			depth--
			b.WriteByte(c)
			i++
		case c == close:
			return b.String(), known, i + 1
		case interp && sc.lang == "perl" && strings.HasPrefix(src[i:], "$ENV{HOME}"):
			b.WriteString("~")
			i += len("$ENV{HOME}")
		case interp && (c == '$' || c == '@' && sc.lang == "perl" || c == '#' && sc.lang == "ruby") && i+1 < len(src):
			name, end := interpName(src, i, sc.lang)
			if name == "" {
				b.WriteByte(c)
				i++
				continue
			}
			if v, ok := sc.vars[name]; ok && v.known {
				b.WriteString(v.s)
			} else {
				known = false
				b.WriteString(src[i:end])
			}
			i = end
		default:
			b.WriteByte(c)
			i++
		}
	}
	sc.unterminated = true
	return b.String(), false, len(src)
}

// interpName reads an interpolated variable at src[i:]: $x, ${x}, #{x}
// (Ruby), ${x} (JavaScript template); it returns the variable's name as
// the scanner stores it ("$x" in Perl and PHP, "x" in Ruby and Node).
func interpName(src string, i int, lang string) (string, int) {
	c := src[i]
	switch {
	case (c == '#' || c == '$' && lang == "node") && src[i+1] == '{':
		j := strings.IndexByte(src[i:], '}')
		if j < 0 {
			return "", i
		}
		return strings.TrimSpace(src[i+2 : i+j]), i + j + 1
	case c == '$' && src[i+1] == '{':
		j := strings.IndexByte(src[i:], '}')
		if j < 0 {
			return "", i
		}
		return "$" + strings.TrimSpace(src[i+2:i+j]), i + j + 1
	case (c == '$' || c == '@') && lang != "node" && lang != "ruby" && isIdentStart(src[i+1]):
		j := i + 1
		for j < len(src) && isIdentChar(src[j]) {
			j++
		}
		return "$" + src[i+1:j], j
	}
	return "", i
}

// heredoc reads a here-document (<<EOF, <<"EOF", <<'EOF', <<~EOF, <<<EOF in
// PHP) as a string token; its body starts on the next line.
func (sc *scanner) heredoc(src string, i int) (scTok, int, bool) {
	j := i + 2
	if sc.lang == "php" && strings.HasPrefix(src[j:], "<") {
		j++
	}
	if j < len(src) && (src[j] == '~' || src[j] == '-') {
		j++
	}
	raw := false
	q := byte(0)
	if j < len(src) && (src[j] == '"' || src[j] == '\'') {
		q = src[j]
		raw = q == '\''
		j++
	}
	k := j
	for k < len(src) && isIdentChar(src[k]) {
		k++
	}
	if k == j {
		return scTok{}, 0, false
	}
	tag := src[j:k]
	if q != 0 {
		if k >= len(src) || src[k] != q {
			return scTok{}, 0, false
		}
		k++
	}
	eol := strings.IndexByte(src[k:], '\n')
	if eol < 0 {
		return scTok{}, 0, false
	}
	body := src[k+eol+1:]
	var b strings.Builder
	end := len(src)
	for off := 0; off < len(body); {
		line := body[off:]
		if n := strings.IndexByte(line, '\n'); n >= 0 {
			line = line[:n]
		}
		if strings.TrimSpace(strings.TrimSuffix(line, ";")) == tag {
			end = k + eol + 1 + off + len(line)
			break
		}
		b.WriteString(line)
		b.WriteByte('\n')
		off += len(line) + 1
	}
	text := b.String()
	known := raw || !strings.ContainsAny(text, "$#@")
	// The rest of the first line (");" after "<<EOF") is read as code:
	// splice it back in by tokenizing it later is not needed for calls.
	rest := src[k : k+eol]
	if strings.TrimSpace(rest) != "" {
		sub := &scanner{s: sc.s, lang: sc.lang, src: rest, vars: sc.vars}
		sub.tokenize()
		sc.toks = append(sc.toks, scTok{k: tkStr, s: text, known: known})
		sc.toks = append(sc.toks, sub.toks...)
		return scTok{k: tkPunct, s: ";"}, end, true
	}
	return scTok{k: tkStr, s: text, known: known}, end, true
}

// read walks the tokens: literal assignments are remembered, known calls
// are read.
func (sc *scanner) read() {
	t := sc.toks
	for i := 0; i < len(t); i++ {
		tok := t[i]
		if f := sc.defs[&t[i]]; f != nil {
			// A function's definition: read at its calls (code_funcs.go).
			i += f.end - f.start - 1
			continue
		}
		switch tok.k {
		case tkCmd:
			sc.shellCmd(tok, "command quote")
			continue
		case tkStr:
			// obj["exec"](...): a method named by a string.
			if tok.known && i+2 < len(t) && t[i+1].s == "]" && t[i+2].s == "(" && i > 0 && t[i-1].s == "[" {
				args, _ := sc.callArgs(i + 2)
				name := tok.s
				if i > 1 && t[i-2].k == tkIdent {
					name = t[i-2].s + "." + tok.s
				}
				sc.call(name, args)
			}
			continue
		case tkIdent:
		default:
			continue
		}
		// name OP= value (d += x, $s .= $x, s <<= 1), name << x (Ruby's
		// append): a variable stays a literal only when both sides of a
		// + or . are, joined; anything else leaves it not known, not at
		// its old value (let d = ""; d += chunk; eval(d) runs the chunks).
		if j, op, ok := compoundAssign(t, i); ok {
			old, had := sc.vars[scVarName(tok.s)]
			v, n := sc.expr(t[j:])
			if had && old.known && n > 0 && (op == "+" || op == ".") {
				sc.vars[scVarName(tok.s)] = scTok{k: tkStr, s: old.s + v.s, known: true}
			} else {
				delete(sc.vars, scVarName(tok.s))
			}
			continue
		}
		if dot := strings.LastIndexByte(tok.s, '.'); dot > 0 && scMutators[tok.s[dot+1:]] {
			// s.concat(x), s.replace(y), s.insert(0, z): Ruby's strings
			// change in place.
			delete(sc.vars, scVarName(tok.s[:dot]))
		}
		// name = literal ;
		if i+2 < len(t) && t[i+1].k == tkPunct && t[i+1].s == "=" && !(i+2 < len(t) && t[i+2].s == "=") {
			if v, n := sc.expr(t[i+2:]); n > 0 {
				sc.vars[scVarName(tok.s)] = v
			} else {
				delete(sc.vars, scVarName(tok.s))
			}
			continue
		}
		name := tok.s
		if v, ok := sc.vars[scVarName(name)]; ok && v.known && i+1 < len(t) && t[i+1].s == "(" {
			// $f = "system"; $f("id"): a function named by a variable.
			name = v.s
		}
		if sc.lang == "node" && scRunnerValues[name] && i > 0 && (t[i-1].s == "(" || t[i-1].s == ",") &&
			i+1 < len(t) && (t[i+1].s == ")" || t[i+1].s == ",") {
			// .then(eval): code run with an argument not read.
			sc.evalHidden = true
			sc.s.opaque(sc.lang, "", "node: %s given as a value, run on code not read", name)
			continue
		}
		args, _ := sc.callArgs(i + 1)
		if f, ok := sc.funcs[name]; ok && i+1 < len(t) && t[i+1].s == "(" &&
			!(i > 0 && (strings.EqualFold(t[i-1].s, "function") || t[i-1].s == "sub")) {
			// A function the code defines (code_funcs.go).
			sc.inline(f, args)
		}
		sc.call(name, args)
	}
}

// scMutators are methods that change a string in place (Ruby).
var scMutators = map[string]bool{"concat": true, "replace": true, "insert": true, "prepend": true,
	"gsub!": true, "sub!": true, "tr!": true, "clear": true, "squeeze!": true, "delete!": true}

// compoundAssign reports whether t[i] starts NAME OP= VALUE (+=, .=, -=,
// ||=, <<=, ??=, …) or NAME << VALUE, with the index of VALUE and the
// operator's first character.
func compoundAssign(t []scTok, i int) (int, string, bool) {
	j := i + 1
	if j >= len(t) || t[j].k != tkPunct || !strings.Contains("+-*/.|&^%<>?", t[j].s) {
		return 0, "", false
	}
	op := t[j].s
	j++
	if (op == "<" || op == ">" || op == "?" || op == "|" || op == "&" || op == "*") && j < len(t) && t[j].k == tkPunct && t[j].s == op {
		j++ // <<=, >>=, ??=, ||=, &&=, **=
		if op == "<" && (j >= len(t) || t[j].s != "=") {
			return j, op, true // Ruby's s << x
		}
	}
	if j >= len(t) || t[j].k != tkPunct || t[j].s != "=" || j+1 < len(t) && t[j+1].s == "=" {
		return 0, "", false
	}
	return j + 1, op, true
}

// scVarName keeps a variable's name as interpolation finds it.
func scVarName(n string) string {
	if i := strings.LastIndexAny(n, " "); i >= 0 {
		n = n[i+1:]
	}
	return n
}

// callArgs returns the argument token lists of a call starting at t[i]:
// "(" args ")" or, without parentheses, the tokens up to the end of the
// statement.
func (sc *scanner) callArgs(i int) ([][]scTok, int) {
	t := sc.toks
	if i >= len(t) {
		return nil, i
	}
	var args [][]scTok
	var cur []scTok
	depth := 0
	paren := t[i].k == tkPunct && t[i].s == "("
	j := i
	if paren {
		j++
	}
	for ; j < len(t); j++ {
		tok := t[j]
		if !paren && depth == 0 && (tok.nl && sc.lang == "ruby" && j > i || tok.k == tkIdent && (tok.s == "or" || tok.s == "and" || tok.s == "if" || tok.s == "unless" || tok.s == "do")) {
			break
		}
		if tok.k == tkPunct {
			switch tok.s {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					if paren {
						j++
					}
					goto end
				}
				depth--
			case ",":
				if depth == 0 {
					args = append(args, cur)
					cur = nil
					continue
				}
			case ";":
				if depth == 0 {
					goto end
				}
			case "|":
				if depth == 0 && !paren && j+1 < len(t) && t[j+1].s == "|" {
					goto end
				}
			}
		}
		cur = append(cur, tok)
	}
end:
	if len(cur) > 0 {
		args = append(args, cur)
	}
	return args, j
}

// expr computes a literal expression: strings, numbers and known
// variables joined by + (Node, Ruby) or . (Perl, PHP); n is 0 when it is
// not one.
func (sc *scanner) expr(t []scTok) (scTok, int) {
	var b strings.Builder
	n := 0
	want := true
	for n < len(t) {
		tok := t[n]
		if want {
			switch tok.k {
			case tkStr, tkNum:
				if !tok.known {
					return scTok{}, 0
				}
				b.WriteString(tok.s)
			case tkIdent:
				if k := homeExpr(t[n:]); k > 1 {
					b.WriteString("~")
					want = false
					n += k
					continue
				}
				if v, k := sc.argvExpr(t[n:]); k > 0 {
					b.WriteString(v)
					want = false
					n += k
					continue
				}
				v, ok := sc.vars[scVarName(tok.s)]
				if !ok && homeNames[tok.s] {
					v, ok = scTok{k: tkStr, s: "~", known: true}, true
				}
				if !ok {
					return scTok{}, 0
				}
				b.WriteString(v.s)
			default:
				return scTok{}, 0
			}
			want = false
			n++
			continue
		}
		if tok.k == tkPunct && (tok.s == "+" || tok.s == ".") {
			want = true
			n++
			continue
		}
		break
	}
	if n == 0 || want {
		return scTok{}, 0
	}
	return scTok{k: tkStr, s: b.String(), known: true}, n
}

// argvExpr reads an element of the program's arguments given by a literal
// index (Perl $ARGV[0], Ruby ARGV[0], PHP $argv[1], Node
// process.argv[2]) when the command line is known and the element is
// known: its value and the tokens it takes.
func (sc *scanner) argvExpr(t []scTok) (string, int) {
	if !sc.s.pyArgvSet || len(t) < 4 || t[1].s != "[" || t[2].k != tkNum || t[3].s != "]" {
		return "", 0
	}
	i, err := strconv.Atoi(t[2].s)
	if err != nil || i < 0 {
		return "", 0
	}
	switch {
	case sc.lang == "perl" && t[0].s == "$ARGV", sc.lang == "ruby" && t[0].s == "ARGV":
		i++ // the first argument after the script
	case sc.lang == "php" && t[0].s == "$argv":
	case sc.lang == "node" && t[0].s == "process.argv":
		i-- // argv[0] is node itself
	default:
		return "", 0
	}
	if i < 0 || i >= len(sc.s.pyArgv) || sc.s.pyArgv[i] == argvUnknown {
		return "", 0
	}
	return sc.s.pyArgv[i], 4
}

// homeExpr returns how many tokens at the start of t spell the agent's
// home directory with a call or an index: os.homedir(), Dir.home(),
// require("os").homedir(), $ENV{HOME}, ENV["HOME"], process.env["HOME"],
// getenv("HOME"), $_SERVER['HOME']; 0 when they do not.
func homeExpr(t []scTok) int {
	is := func(i int, s string) bool { return i < len(t) && t[i].s == s && (t[i].k != tkStr || t[i].known) }
	home := func(i int) bool { return i < len(t) && t[i].s == "HOME" && (t[i].k != tkStr || t[i].known) }
	switch {
	case len(t) == 0 || t[0].k != tkIdent:
		return 0
	case homeNames[t[0].s] && is(1, "(") && is(2, ")"):
		return 3
	case t[0].s == "require" && is(1, "(") && is(2, "os") && is(3, ")") && is(4, ".") && is(5, "homedir") && is(6, "(") && is(7, ")"):
		return 8
	case (t[0].s == "$ENV" || t[0].s == "$_SERVER" || t[0].s == "$_ENV" || t[0].s == "ENV" || t[0].s == "process.env") &&
		(is(1, "{") && home(2) && is(3, "}") || is(1, "[") && home(2) && is(3, "]")):
		return 4
	case (t[0].s == "getenv" || t[0].s == "os.getenv" || t[0].s == "ENV.fetch" || t[0].s == "System.getenv" || t[0].s == "Deno.env.get") && is(1, "(") && home(2) && is(3, ")"):
		return 4
	}
	return 0
}

// homeNames are expressions for the agent's home directory.
var homeNames = map[string]bool{"process.env.HOME": true, "os.homedir": true, "Dir.home": true,
	"$ENV{HOME}": true, "$_SERVER.HOME": true}

// lit returns an argument's literal value.
// pathWrappers are the functions that only normalise a path.
var pathWrappers = map[string]bool{"File.expand_path": true, "File.absolute_path": true, "File.join": true,
	"path.resolve": true, "path.join": true, "path.normalize": true, "realpath": true}

func (sc *scanner) lit(arg []scTok) (string, bool) {
	// Perl and Ruby allow "my $x", named arguments are skipped by callers.
	v, n := sc.expr(arg)
	if n == 0 || n != len(arg) && !(n < len(arg) && arg[n].s == ")") {
		return "", false
	}
	return v.s, true
}

// litStrings returns the literal values of a list argument ([..], or
// several arguments).
func (sc *scanner) litStrings(args [][]scTok) ([]string, bool) {
	var out []string
	for _, a := range args {
		if len(a) > 0 && a[0].k == tkPunct && a[0].s == "[" {
			inner := a[1:]
			if len(inner) > 0 && inner[len(inner)-1].s == "]" {
				inner = inner[:len(inner)-1]
			}
			var parts [][]scTok
			var cur []scTok
			for _, tok := range inner {
				if tok.k == tkPunct && tok.s == "," {
					parts = append(parts, cur)
					cur = nil
					continue
				}
				cur = append(cur, tok)
			}
			if len(cur) > 0 {
				parts = append(parts, cur)
			}
			l, ok := sc.litStrings(parts)
			if !ok {
				return nil, false
			}
			out = append(out, l...)
			continue
		}
		s, ok := sc.lit(a)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func argText(args [][]scTok) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		for _, t := range a {
			if t.k == tkStr {
				b.WriteString(strconv.Quote(t.s))
			} else {
				b.WriteString(t.s)
			}
		}
	}
	return snippet(b.String())
}

func (sc *scanner) unknownf(format string, args ...any) {
	sc.s.unknown(false, sc.lang+": "+format, args...)
}

func (sc *scanner) add(e Effect) {
	if e.Program == "" {
		e.Program = sc.lang
	}
	sc.s.add(e)
}

// shellCmd reads a command line given to a shell.
func (sc *scanner) shellCmd(t scTok, what string) {
	if !t.known {
		sc.unknownProc = true
		if scTextHidden(t.s) {
			sc.s.runsHidden("sh", sc.lang+": %s with a command not known before run time: %s", what, snippet(t.s))
		} else {
			sc.unknownf("%s with a command not known before run time: %s", what, snippet(t.s))
		}
		return
	}
	sc.noteShell(t.s)
	sc.ran(t.s)
	sc.s.nested("sh", func() { shellReader(sc.s, t.s) })
}

var (
	// scRunnerLitRE finds a command given as a literal string to a
	// command runner of Node, Perl, Ruby or PHP, or in backticks, in
	// text the scanner could not tokenize.
	scRunnerLitRE = regexp.MustCompile("\\b(?:system|exec|execSync|execFile|execFileSync|spawn|spawnSync|shell_exec|passthru|popen|proc_open|pcntl_exec|qx)(?:\\s*[({]\\s*|\\s+)(?:\"([^\"\\n]*)\"|'([^'\\n]*)')|`([^`\\n]*)`")
	// scRunnerRE finds any call of those runners, and backticks.
	scRunnerRE = regexp.MustCompile("\\b(?:system|exec|execSync|execFile|execFileSync|spawn|spawnSync|shell_exec|passthru|popen|proc_open|pcntl_exec|qx)\\b|`[^`\\n]*`")
)

// missedRunners reads the commands given literally to a runner in the
// text that the token reading did not read.
func (sc *scanner) missedRunners(code string) {
	if !scRunnerRE.MatchString(code) {
		return
	}
	for _, m := range scRunnerLitRE.FindAllStringSubmatch(code, 64) {
		cmd := m[1] + m[2] + m[3]
		if strings.TrimSpace(cmd) == "" || sc.readCmds[cmd] || m[3] != "" && sc.lang == "node" {
			continue // read already; a Node template literal is not a command
		}
		if f := strings.Fields(cmd); len(f) > 0 && sc.readCmds[f[0]] {
			continue // its program was read with list arguments
		}
		sc.ran(cmd)
		sc.s.nested("sh", func() { shellReader(sc.s, cmd) })
	}
}

// unterminatedRunners reads, in code whose tokens could not be trusted,
// the literal commands given to command runners (as shell) and records
// code run unread when a runner is called with anything else.
func (s *state) unterminatedRunners(lang, code string) {
	found := scRunnerLitRE.FindAllStringSubmatch(code, 64)
	for _, m := range found {
		cmd := m[1] + m[2] + m[3]
		if strings.TrimSpace(cmd) == "" {
			continue
		}
		s.nested("sh", func() { shellReader(s, cmd) })
	}
	if len(scRunnerRE.FindAllStringIndex(code, 65)) > len(found) {
		s.runsHidden(lang, "%s: a command runner in code the scanner could not read", lang)
	}
}

// scBlock returns the tokens inside a leading { ... } block.
func scBlock(toks []scTok) []scTok {
	depth := 0
	for i, t := range toks {
		switch {
		case t.k == tkPunct && t.s == "{":
			depth++
		case t.k == tkPunct && t.s == "}":
			depth--
			if depth == 0 {
				return toks[1:i]
			}
		}
	}
	return nil
}

// scAfterBlock drops a leading { ... } block from a call's arguments (Perl's
// indirect object: system { "sh" } "sh", "-c", CMD).
func scAfterBlock(args [][]scTok) [][]scTok {
	depth := 0
	for i, t := range args[0] {
		switch {
		case t.k == tkPunct && t.s == "{":
			depth++
		case t.k == tkPunct && t.s == "}":
			depth--
		}
		if depth == 0 && t.k == tkPunct && t.s == "}" {
			rest := args[0][i+1:]
			if len(rest) == 0 {
				return args[1:]
			}
			return append([][]scTok{rest}, args[1:]...)
		}
	}
	return args
}

// loadsFile reads a load of a code file (Perl require/do, Ruby load and
// require, PHP include): a file named at run time runs code unread; a
// module named literally or by a bare name is left to the other rules.
func (sc *scanner) loadsFile(fn string, args [][]scTok) {
	if len(args) == 0 || len(args[0]) == 0 {
		return
	}
	first := args[0][0]
	if first.s == "{" || first.k == tkIdent && !strings.HasPrefix(first.s, "$") && !strings.HasPrefix(first.s, "@") &&
		!(len(args[0]) > 1 && (args[0][1].s == "[" || args[0][1].s == "(" || args[0][1].s == ".")) {
		return // do { BLOCK }, require Foo::Bar
	}
	if _, ok := sc.lit(args[0]); ok {
		return
	}
	sc.s.runsHidden(sc.lang, sc.lang+": %s of a file not known before run time: %s", fn, argText(args))
}

// scTextHidden reports whether the text of a command the scanner could
// not fill starts with no literal word: a string that opens with an
// interpolation ("$cmd", "#{c}", `$c`) or is empty. "rm -rf $dir" starts
// with its program and is read for it.
func scTextHidden(s string) bool {
	s = strings.TrimLeft(s, "\"'`( \t")
	return s == "" || s[0] == '$' || s[0] == '@' || s[0] == '{' || strings.HasPrefix(s, "#{")
}

// scFirstArg is the first token of a program's argv given as arguments or
// as a list ([$prog, "-x"]); a zero token when there is none.
func scFirstArg(args [][]scTok) scTok {
	if len(args) == 0 || len(args[0]) == 0 {
		return scTok{}
	}
	if args[0][0].s == "[" && args[0][0].k == tkPunct {
		if len(args[0]) > 1 {
			return args[0][1]
		}
		return scTok{}
	}
	return args[0][0]
}

func (sc *scanner) noteShell(cmd string) {
	f := strings.Fields(cmd)
	if len(f) > 0 && commandReaders[strings.TrimRight(path.Base(f[0]), "0123456789.")] {
		sc.shells = append(sc.shells, path.Base(f[0]))
	}
}

// runArgs reads a call that runs a program: one string is a shell command
// line (as system and exec take it in Perl, Ruby and PHP), several
// strings or a list are its argv.
func (sc *scanner) runArgs(fn string, args [][]scTok) {
	// Ruby and Perl allow an environment hash first; options come last.
	for len(args) > 0 && len(args[0]) > 0 && args[0][0].s == "{" {
		args = args[1:]
	}
	if len(args) == 0 {
		sc.unknownProc = true
		sc.unknownf("%s with no command read", fn)
		return
	}
	if len(args) == 1 && !(len(args[0]) > 0 && args[0][0].s == "[") {
		s, ok := sc.lit(args[0])
		if !ok {
			if len(args[0]) > 0 && args[0][0].k != tkStr && args[0][0].k != tkCmd {
				// A variable, a call, ARGV[0]: none of the command
				// is known.
				sc.unknownProc = true
				sc.s.runsHidden("sh", sc.lang+": %s with a command not known before run time: %s", fn, argText(args))
				return
			}
			s = argText(args)
		}
		sc.shellCmd(scTok{k: tkCmd, s: s, known: ok}, fn)
		return
	}
	words, ok := sc.litStrings(args)
	if !ok {
		// Options objects or hashes at the end are not argv.
		if w, ok2 := sc.litStrings(args[:len(args)-1]); ok2 && len(w) > 0 {
			words, ok = w, true
		}
	}
	if !ok || len(words) == 0 {
		sc.unknownProc = true
		if first := scFirstArg(args); first.k != tkStr || !first.known {
			// The program itself is not known: it runs unread.
			sc.s.runsHidden("program", sc.lang+": %s of a command not known before run time: %s", fn, argText(args))
		} else {
			sc.unknownf("%s of a command not known before run time: %s", fn, argText(args))
		}
		return
	}
	line := JoinArgv(words)
	sc.noteShell(line)
	sc.ran(words[0])
	sc.s.nested("sh", func() { shellReader(sc.s, line) })
}

// ran notes a command (or program) the scanner read where it is run.
func (sc *scanner) ran(cmd string) {
	if sc.readCmds == nil {
		sc.readCmds = map[string]bool{}
	}
	sc.readCmds[cmd] = true
}

func (sc *scanner) path(fn string, arg []scTok) (string, bool) {
	// A path normalised by the language's own function is that path:
	// File.expand_path("~/x") (Ruby), path.resolve("x") / path.join("a",
	// "b") with literal parts (Node), realpath("x") (PHP).
	if len(arg) >= 4 && arg[0].k == tkIdent && pathWrappers[arg[0].s] && arg[1].s == "(" {
		var parts []string
		ok := true
		for _, t := range arg[2:] {
			switch {
			case t.s == ")":
			case t.s == ",":
			case t.k == tkStr && t.known:
				parts = append(parts, t.s)
			default:
				ok = false
			}
		}
		if ok && len(parts) > 0 {
			return sc.s.resolve(path.Join(parts...)), true
		}
	}
	s, ok := sc.lit(arg)
	if !ok || s == "" {
		sc.unknownf("%s of a path not known before run time: %s", fn, argText([][]scTok{arg}))
		return "", false
	}
	return sc.s.resolve(s), true
}

func (sc *scanner) fileOp(k Kind, fn string, args [][]scTok, recursive bool) {
	if len(args) == 0 {
		sc.unknownf("%s with no path read", fn)
		return
	}
	for _, a := range args {
		if len(a) > 0 && (a[0].s == "{" || a[0].k == tkPunct && a[0].s == ":") {
			continue // options
		}
		if p, ok := sc.path(fn, a); ok {
			sc.add(Effect{Kind: k, Path: p, Recursive: recursive})
		}
	}
}

func (sc *scanner) connect(host, port string) {
	e := Effect{Kind: Connect, Detail: &Detail{Host: strings.ToLower(host), Port: port}}
	if strings.Contains(host, "://") {
		e.detail().URL = host
		e.detail().Host, e.detail().Port = urlHostPort(host)
	}
	sc.add(e)
	sc.conns = append(sc.conns, e)
}

// hostPort finds a host and a port among literal arguments: a number is
// the port, a name or address the host ("h:p" holds both).
func (sc *scanner) hostPort(args [][]scTok) (host, port string, ok bool) {
	for _, a := range args {
		for k := 0; k < len(a); k++ {
			v, n := sc.expr(a[k:])
			if n == 0 {
				continue
			}
			k += n - 1
			s := v.s
			if strings.HasPrefix(s, "tcp://") || strings.HasPrefix(s, "udp://") || strings.HasPrefix(s, "ssl://") || strings.HasPrefix(s, "tls://") {
				s = s[6:]
			}
			if _, err := strconv.Atoi(s); err == nil {
				if port == "" {
					port = s
				}
				continue
			}
			if h, p, found := strings.Cut(s, ":"); found && !strings.Contains(p, ":") && p != "" {
				if _, err := strconv.Atoi(p); err == nil {
					host, port = h, p
					continue
				}
			}
			if host == "" && (strings.ContainsAny(s, ".:") || s == "localhost") && !strings.ContainsAny(s, " /") {
				host = s
			}
		}
	}
	return host, port, host != "" || port != ""
}

// finish recognises a reverse shell: a connection opened and a shell run
// with its streams on it (a dup of a handle, a pipe, or a command the
// scanner could not read) in the same code.
func (sc *scanner) finish() {
	if len(sc.conns) == 0 || len(sc.shells) == 0 && !sc.unknownProc {
		return
	}
	if !sc.dup && !sc.unknownProc && !strings.Contains(sc.src, "<&") && !strings.Contains(sc.src, ">&") {
		return
	}
	progs := sc.shells
	if len(progs) == 0 {
		progs = []string{"sh"}
	}
	for _, c := range sc.conns {
		for _, p := range progs {
			sc.add(Effect{Kind: Download, Detail: &Detail{Host: c.Host(), Port: c.Port(), URL: c.URL(), Into: p}})
			sc.add(Effect{Kind: Send, Detail: &Detail{Host: c.Host(), Port: c.Port(), URL: c.URL(), Source: "output"}})
		}
	}
}

// last returns the last component of a dotted name.
func last(name string) string {
	if i := strings.LastIndexAny(name, ".:>"); i >= 0 {
		return name[i+1:]
	}
	return name
}

// call reads one call by its name.
func (sc *scanner) call(name string, args [][]scTok) {
	switch sc.lang {
	case "node":
		sc.node(name, args)
	case "perl":
		sc.perl(name, args)
	case "ruby":
		sc.ruby(name, args)
	case "php":
		sc.php(strings.ToLower(name), args)
	}
}

func (sc *scanner) evalCode(fn string, args [][]scTok) {
	if len(args) == 0 {
		return
	}
	if s, ok := sc.lit(args[0]); ok {
		lang := sc.lang
		sc.s.nested(lang, func() { sc.s.scanCode(lang, s) })
		return
	}
	sc.s.opaque(sc.lang, "", sc.lang+": %s of code not known before run time: %s", fn, argText(args))
	sc.evalHidden = true
	for _, arg := range args {
		for _, tok := range arg {
			if tok.k == tkStr && tok.known && strings.Contains(tok.s, "://") {
				sc.evalURLs = append(sc.evalURLs, tok.s)
			}
		}
	}
}

func (sc *scanner) signal(sig string, targets []string) {
	sig = strings.TrimPrefix(strings.ToUpper(sig), "SIG")
	if n, ok := pySignals[sig]; ok {
		sig = n
	}
	if sig == "" {
		sig = "TERM"
	}
	sc.add(Effect{Kind: Signal, Detail: &Detail{Signal: sig, Targets: targets}})
}

func (sc *scanner) litOr(arg []scTok, dflt string) string {
	if s, ok := sc.lit(arg); ok {
		return s
	}
	return dflt
}

func (sc *scanner) node(name string, args [][]scTok) {
	fn := last(name)
	uses := func(mod string) bool { return sc.modules()[mod] }
	switch fn {
	case "exec", "execSync":
		if uses("child_process") {
			if len(args) > 0 {
				sc.runArgs(fn, args[:1])
			}
		}
	case "spawn", "spawnSync", "execFile", "execFileSync", "fork":
		if uses("child_process") && len(args) > 0 {
			a := args
			if len(a) > 2 {
				a = a[:2]
			}
			if len(a) == 2 && !(len(a[1]) > 0 && a[1][0].s == "[") {
				a = a[:1]
			}
			if len(a) == 1 {
				if s, ok := sc.lit(a[0]); ok {
					line := JoinArgv([]string{s})
					sc.noteShell(line)
					sc.ran(s)
					sc.s.nested("sh", func() { shellReader(sc.s, line) })
					return
				}
			}
			sc.runArgs(fn, a)
			if strings.Contains(argText(args), "shell") {
				sc.unknownf("%s with a shell option", fn)
			}
		}
	case "eval", "Function", "runInNewContext", "runInThisContext", "runInContext", "Script":
		sc.evalCode(fn, args)
	case "require":
		if len(args) > 0 {
			if _, ok := sc.lit(args[0]); !ok {
				// A module file named at run time runs unread (as
				// bash "$F" does).
				sc.s.runsHidden("node", "node: require of a module not known before run time: %s", argText(args))
			}
		}
	case "kill":
		if strings.HasPrefix(name, "process") && len(args) > 0 {
			sig := "TERM"
			if len(args) > 1 {
				sig = sc.litOr(args[1], "?")
			}
			sc.signal(sig, []string{sc.litOr(args[0], "?")})
		}
	case "connect", "createConnection":
		if uses("net") || uses("tls") {
			if h, p, ok := sc.hostPort(args); ok {
				sc.connect(h, p)
			} else {
				sc.unknownf("%s to an address not known before run time: %s", fn, argText(args))
			}
		}
	case "pipe":
		sc.dup = true
	case "request", "get", "fetch", "post", "put", "patch":
		if fn != "fetch" && !(uses("http") || uses("https") || uses("axios") || strings.HasPrefix(name, "axios")) {
			return
		}
		if len(args) == 0 {
			return
		}
		u, ok := sc.lit(args[0])
		if !ok || !strings.Contains(u, "://") {
			if h, p, ok := sc.hostPort(args); ok && (fn == "request" || fn == "get") {
				sc.connect(h, p)
				return
			}
			sc.unknownf("%s of a URL not known before run time: %s", fn, argText(args))
			return
		}
		sc.connect(u, "")
		body := fn == "post" || fn == "put" || fn == "patch" || strings.Contains(argText(args[1:]), "body")
		if body {
			e := sc.conns[len(sc.conns)-1]
			sc.add(Effect{Kind: Send, Detail: &Detail{URL: e.URL(), Host: e.Host(), Port: e.Port(), Source: sc.dataSource(args[1:])}})
		}
	default:
		if strings.HasPrefix(name, "Deno.") {
			// Deno's file API: Deno.removeSync(p, {recursive: true}),
			// Deno.writeTextFile(p, s), Deno.readTextFile(p), ….
			if f, ok := denoFS[strings.TrimSuffix(fn, "Sync")]; ok {
				sc.fsOp(f, nodeFS[f], args)
			}
			return
		}
		if !uses("fs") && !uses("fs/promises") && !uses("fs-extra") {
			return
		}
		k, ok := nodeFS[strings.TrimSuffix(fn, "Sync")]
		if !ok {
			return
		}
		sc.fsOp(fn, k, args)
	}
}

// modules returns the Node modules the code loads: the literal values
// (concatenations included) given to require() and import, and any string
// naming one of the modules the reader knows.
func (sc *scanner) modules() map[string]bool {
	if sc.mods != nil {
		return sc.mods
	}
	sc.mods = map[string]bool{}
	for i, t := range sc.toks {
		if t.k == tkIdent && (t.s == "require" || t.s == "import" || t.s == "from") && i+1 < len(sc.toks) {
			j := i + 1
			if sc.toks[j].s == "(" {
				j++
			}
			if v, n := sc.expr(sc.toks[j:]); n > 0 {
				sc.mods[strings.TrimPrefix(v.s, "node:")] = true
			}
		}
		if t.k == tkStr && t.known {
			sc.mods[strings.TrimPrefix(t.s, "node:")] = true
		}
	}
	return sc.mods
}

// dataSource says what a request body sends: the path of a file read in
// it, "data" otherwise.
func (sc *scanner) dataSource(args [][]scTok) string {
	for _, a := range args {
		for k, t := range a {
			if t.k == tkIdent && (strings.Contains(t.s, "readFile") || strings.Contains(t.s, "file_get_contents") ||
				t.s == "File.read" || t.s == "IO.read" || strings.HasSuffix(t.s, "createReadStream")) && k+2 < len(a) {
				if s, n := sc.expr(a[k+2:]); n > 0 {
					return sc.s.resolve(s.s)
				}
			}
		}
	}
	return "data"
}

// denoFS are Deno's file functions (without Sync) as the Node function
// whose effect they have.
var denoFS = map[string]string{"remove": "rm", "writeTextFile": "writeFile", "writeFile": "writeFile",
	"readTextFile": "readFile", "readFile": "readFile", "readDir": "readdir", "rename": "rename",
	"copyFile": "copyFile", "chmod": "chmod", "chown": "chown", "mkdir": "mkdir", "symlink": "symlink",
	"link": "link", "truncate": "truncate", "open": "open", "create": "writeFile"}

// nodeFS are Node's fs functions (without Sync) by effect.
var nodeFS = map[string]Kind{"unlink": Delete, "rm": Delete, "rmdir": Delete, "writeFile": Write,
	"appendFile": Write, "createWriteStream": Write, "readFile": Read, "createReadStream": Read,
	"readdir": Read, "opendir": Read, "rename": Move, "copyFile": Read, "cp": Read, "chmod": Chmod,
	"lchmod": Chmod, "chown": Chown, "lchown": Chown, "mkdir": Create, "symlink": Create, "link": Create,
	"truncate": Write, "open": Read, "remove": Delete, "outputFile": Write, "emptyDir": Delete,
	"move": Move, "copy": Read}

func (sc *scanner) fsOp(fn string, k Kind, args [][]scTok) {
	if len(args) == 0 {
		return
	}
	p, ok := sc.path(fn, args[0])
	if !ok {
		return
	}
	base := strings.TrimSuffix(fn, "Sync")
	rest := argText(args[1:])
	switch k {
	case Delete:
		sc.add(Effect{Kind: Delete, Path: p, Recursive: strings.Contains(rest, "recursive") || base == "remove" || base == "emptyDir"})
	case Write:
		sc.add(Effect{Kind: Write, Path: p, Append: base == "appendFile" || strings.Contains(rest, `"a"`)})
	case Read:
		if base == "open" && len(args) > 1 {
			if m, ok := sc.lit(args[1]); !ok || strings.ContainsAny(m, "wa+") {
				sc.add(Effect{Kind: Write, Path: p})
				return
			}
		}
		sc.add(Effect{Kind: Read, Path: p, Recursive: base == "cp" && strings.Contains(rest, "recursive")})
		if (base == "copyFile" || base == "cp" || base == "copy") && len(args) > 1 {
			if d, ok := sc.path(fn, args[1]); ok {
				sc.add(Effect{Kind: Write, Path: d})
			}
		}
	case Move:
		if len(args) > 1 {
			if d, ok := sc.path(fn, args[1]); ok {
				sc.add(Effect{Kind: Move, Path: p, Dest: d})
			}
		}
	case Chmod, Chown:
		mode := "?"
		if len(args) > 1 {
			mode = sc.litOr(args[1], "?")
			if k == Chmod {
				mode = octal(mode)
			}
		}
		if k == Chown && len(args) > 2 {
			mode += ":" + sc.litOr(args[2], "?")
		}
		sc.add(Effect{Kind: k, Path: p, Detail: &Detail{Mode: mode}})
	case Create:
		if base == "symlink" || base == "link" {
			if len(args) > 1 {
				if d, ok := sc.path(fn, args[1]); ok {
					sc.add(Effect{Kind: Create, Path: d, Dest: p})
				}
			}
			return
		}
		sc.add(Effect{Kind: Create, Path: p})
	}
}

// octal writes a numeric mode as octal digits ("0o755", "0755" and "493"
// in Node are all 755; a string mode is octal already).
func octal(m string) string {
	t := strings.ToLower(m)
	switch {
	case strings.HasPrefix(t, "0o"):
		return strings.TrimLeft(t[2:], "0")
	case strings.HasPrefix(t, "0") && len(t) > 1:
		return strings.TrimLeft(t, "0")
	}
	if v, err := strconv.Atoi(t); err == nil && v > 0777 {
		return strconv.FormatInt(int64(v), 8)
	}
	return m
}

func (sc *scanner) perl(name string, args [][]scTok) {
	fn := last(name)
	switch fn {
	case "system", "exec":
		if len(args) > 0 && len(args[0]) > 0 && args[0][0].s == "{" {
			// system { PROG } LIST: the block names the program
			// run; LIST is its argv, whose first word is only the
			// name it is given.
			block := scBlock(args[0])
			prog, ok := sc.lit(block)
			args = scAfterBlock(args)
			if !ok || len(args) == 0 {
				sc.unknownProc = true
				sc.s.runsHidden("program", "perl: %s of a program not known before run time: %s", fn, argText([][]scTok{block}))
				return
			}
			args = append([][]scTok{{{k: tkStr, s: prog, known: true}}}, args[1:]...)
		}
		sc.runArgs(fn, args)
	case "require", "do":
		sc.loadsFile(fn, args)
	case "open", "sysopen":
		sc.perlOpen(args)
	case "unlink", "rmdir":
		sc.fileOp(Delete, fn, args, false)
	case "rmtree", "remove_tree":
		sc.fileOp(Delete, fn, args, true)
	case "mkdir", "make_path", "mkpath":
		if len(args) > 0 {
			sc.fileOp(Create, fn, args[:1], false)
		}
	case "rename", "move", "mv":
		if len(args) >= 2 {
			s, ok1 := sc.path(fn, args[0])
			d, ok2 := sc.path(fn, args[1])
			if ok1 && ok2 {
				sc.add(Effect{Kind: Move, Path: s, Dest: d})
			}
		}
	case "copy", "cp":
		if len(args) >= 2 && strings.Contains(sc.src, "File::Copy") {
			sc.fileOp(Read, fn, args[:1], false)
			sc.fileOp(Write, fn, args[1:2], false)
		}
	case "chmod", "chown":
		n := 1
		k := Chmod
		if fn == "chown" {
			n, k = 2, Chown
		}
		if len(args) > n {
			mode := sc.litOr(args[0], "?")
			if k == Chown {
				mode += ":" + sc.litOr(args[1], "?")
			} else {
				mode = octal(mode)
			}
			for _, a := range args[n:] {
				if p, ok := sc.path(fn, a); ok {
					sc.add(Effect{Kind: k, Path: p, Detail: &Detail{Mode: mode}})
				}
			}
		}
	case "symlink", "link":
		if len(args) >= 2 {
			t, _ := sc.lit(args[0])
			if d, ok := sc.path(fn, args[1]); ok {
				if t != "" {
					t = sc.s.resolve(t)
				}
				sc.add(Effect{Kind: Create, Path: d, Dest: t})
			}
		}
	case "connect":
		if h, p, ok := sc.hostPort(args[min(1, len(args)):]); ok {
			sc.connect(h, p)
		} else {
			sc.unknownf("connect to an address not known before run time: %s", argText(args))
		}
	case "new", "INET", "IP":
		if strings.Contains(name, "Socket") {
			sc.perlSocketNew(args)
		}
	case "kill":
		if len(args) > 1 {
			var targets []string
			for _, a := range args[1:] {
				targets = append(targets, sc.litOr(a, "?"))
			}
			sc.signal(sc.litOr(args[0], "?"), targets)
		}
	case "eval":
		if len(args) > 0 && len(args[0]) > 0 && args[0][0].s != "{" {
			sc.evalCode(fn, args)
		}
	case "fdopen":
		// STDIN->fdopen($c, r): the standard streams on a handle.
		if strings.HasPrefix(name, "STDIN") || strings.HasPrefix(name, "STDOUT") || strings.HasPrefix(name, "$~") {
			sc.dup = true
		}
	case "setuid", "POSIX::setuid":
		sc.add(Effect{Kind: Privilege, Program: "setuid"})
	}
}

// perlSocketNew reads IO::Socket::INET->new(PeerAddr => "h:p", PeerPort
// => p) or (LocalPort => p, Listen => n).
func (sc *scanner) perlSocketNew(args [][]scTok) {
	kv := map[string]string{}
	var flat []scTok
	for _, a := range args {
		flat = append(flat, a...)
		flat = append(flat, scTok{k: tkPunct, s: ","})
	}
	for k := 0; k+3 < len(flat); k++ {
		if (flat[k].k == tkIdent || flat[k].k == tkStr) && flat[k+1].s == "=" && flat[k+2].s == ">" {
			if v, n := sc.expr(flat[k+3:]); n > 0 {
				kv[strings.ToLower(flat[k].s)] = v.s
			}
		}
	}
	if len(args) == 1 {
		if s, ok := sc.lit(args[0]); ok {
			kv["peeraddr"] = s
		}
	}
	host, port := kv["peeraddr"], kv["peerport"]
	if host == "" {
		host = kv["peerhost"]
	}
	if h, p, ok := strings.Cut(host, ":"); ok {
		host, port = h, p
	}
	if host == "" && kv["localport"] == "" {
		// new IO::Socket::INET(PeerAddr, "h:p") without =>.
		host, port, _ = sc.hostPort(args)
	}
	switch {
	case host != "":
		sc.connect(host, port)
	case kv["localport"] != "":
		sc.add(Effect{Kind: Listen, Detail: &Detail{Host: kv["localaddr"], Port: kv["localport"]}})
	default:
		sc.unknownf("a socket to an address not known before run time: %s", argText(args))
	}
}

// perlOpen reads open(FH, MODE, PATH) and the two-argument open(FH,
// ">path"), pipes included.
func (sc *scanner) perlOpen(args [][]scTok) {
	if len(args) < 2 {
		sc.unknownf("open with arguments not read: %s", argText(args))
		return
	}
	handle := ""
	if len(args[0]) > 0 {
		handle = args[0][len(args[0])-1].s
	}
	mode, target := "", ""
	var targetArg []scTok
	if len(args) >= 3 {
		m, ok := sc.lit(args[1])
		if !ok {
			sc.unknownf("open with a mode not known before run time: %s", argText(args))
			return
		}
		mode = strings.TrimSpace(m)
		targetArg = args[2]
		if mode == "-|" || mode == "|-" {
			sc.runArgs("open", args[2:])
			return
		}
	} else {
		s, ok := sc.lit(args[1])
		if !ok {
			sc.unknownf("open of a path not known before run time: %s", argText(args))
			return
		}
		s = strings.TrimSpace(s)
		switch {
		case strings.HasSuffix(s, "|"):
			sc.shellCmd(scTok{k: tkCmd, s: strings.TrimSuffix(s, "|"), known: true}, "open")
			return
		case strings.HasPrefix(s, "|"):
			sc.shellCmd(scTok{k: tkCmd, s: strings.TrimPrefix(s, "|"), known: true}, "open")
			return
		}
		for _, m := range []string{"+>>", "+<", "+>", ">>", ">&", "<&", ">", "<"} {
			if strings.HasPrefix(s, m) {
				mode, s = m, strings.TrimSpace(s[len(m):])
				break
			}
		}
		target = s
	}
	if strings.Contains(mode, "&") {
		if handle == "STDIN" || handle == "STDOUT" || handle == "STDERR" {
			sc.dup = true
		}
		return
	}
	if targetArg != nil {
		s, ok := sc.lit(targetArg)
		if !ok {
			sc.unknownf("open of a path not known before run time: %s", argText(args))
			return
		}
		target = s
	}
	if target == "" || target == "-" {
		return
	}
	p := sc.s.resolve(target)
	switch {
	case strings.HasPrefix(mode, "+"):
		sc.add(Effect{Kind: Read, Path: p})
		sc.add(Effect{Kind: Write, Path: p, Append: strings.Contains(mode, ">>")})
	case strings.Contains(mode, ">"):
		sc.add(Effect{Kind: Write, Path: p, Append: strings.Contains(mode, ">>")})
	default:
		sc.add(Effect{Kind: Read, Path: p})
	}
}

func (sc *scanner) ruby(name string, args [][]scTok) {
	fn := last(name)
	switch name {
	case "load", "require", "require_relative", "Kernel.load":
		sc.loadsFile(fn, args)
	case "system", "exec", "spawn", "Kernel.system", "Kernel.exec", "Process.spawn", "Kernel.spawn",
		"IO.popen", "Open3.capture2", "Open3.capture2e", "Open3.capture3", "Open3.popen3", "Open3.popen2",
		"PTY.spawn":
		a := args
		if name == "IO.popen" && len(a) > 1 {
			a = a[:1]
		}
		sc.runArgs(fn, a)
	case "open", "Kernel.open", "File.open", "File.new", "IO.open":
		if len(args) == 0 {
			return
		}
		s, ok := sc.lit(args[0])
		if !ok {
			sc.unknownf("%s of a path not known before run time: %s", name, argText(args))
			return
		}
		if strings.HasPrefix(s, "|") && !strings.HasPrefix(name, "File") {
			sc.shellCmd(scTok{k: tkCmd, s: s[1:], known: true}, name)
			return
		}
		mode := "r"
		if len(args) > 1 {
			mode = sc.litOr(args[1], "w+")
		}
		p := sc.s.resolve(s)
		if strings.ContainsAny(mode, "wa+") {
			sc.add(Effect{Kind: Write, Path: p, Append: strings.Contains(mode, "a")})
			if strings.Contains(mode, "+") && strings.Contains(mode, "r") {
				sc.add(Effect{Kind: Read, Path: p})
			}
		} else {
			sc.add(Effect{Kind: Read, Path: p})
		}
	case "File.delete", "File.unlink", "FileUtils.rm", "FileUtils.rm_f", "FileUtils.remove", "Dir.delete",
		"Dir.rmdir", "FileUtils.rmdir", "FileUtils.remove_file", "Dir.unlink":
		sc.fileOp(Delete, name, rubyList(args), false)
	case "FileUtils.rm_r", "FileUtils.rm_rf", "FileUtils.remove_dir", "FileUtils.rmtree", "FileUtils.remove_entry":
		sc.fileOp(Delete, name, rubyList(args), true)
	case "File.write", "IO.write", "File.binwrite", "IO.binwrite", "FileUtils.touch":
		if len(args) > 0 {
			sc.fileOp(Write, name, args[:1], false)
		}
	case "File.read", "IO.read", "File.readlines", "IO.readlines", "File.foreach", "IO.foreach", "File.binread",
		"Dir.glob", "Dir.entries", "Dir.children", "Dir.each_child":
		if len(args) > 0 {
			sc.fileOp(Read, name, args[:1], false)
		}
	case "File.rename", "FileUtils.mv", "FileUtils.move":
		if len(args) >= 2 {
			s, ok1 := sc.path(name, args[0])
			d, ok2 := sc.path(name, args[1])
			if ok1 && ok2 {
				sc.add(Effect{Kind: Move, Path: s, Dest: d})
			}
		}
	case "FileUtils.cp", "FileUtils.cp_r", "FileUtils.copy", "IO.copy_stream", "FileUtils.copy_file":
		if len(args) >= 2 {
			rec := strings.HasSuffix(name, "_r")
			sc.fileOp(Read, name, args[:1], rec)
			if d, ok := sc.path(name, args[1]); ok {
				sc.add(Effect{Kind: Write, Path: d, Recursive: rec})
			}
		}
	case "File.chmod", "FileUtils.chmod", "FileUtils.chmod_R", "File.chown", "FileUtils.chown", "FileUtils.chown_R":
		k, n := Chmod, 1
		if strings.Contains(name, "chown") {
			k, n = Chown, 2
		}
		if len(args) > n {
			mode := sc.litOr(args[0], "?")
			if k == Chown {
				mode += ":" + sc.litOr(args[1], "?")
			} else {
				mode = octal(mode)
			}
			for _, a := range rubyList(args[n:]) {
				if p, ok := sc.path(name, a); ok {
					sc.add(Effect{Kind: k, Path: p, Detail: &Detail{Mode: mode}, Recursive: strings.HasSuffix(name, "_R")})
				}
			}
		}
	case "Dir.mkdir", "FileUtils.mkdir", "FileUtils.mkdir_p", "FileUtils.makedirs":
		if len(args) > 0 {
			sc.fileOp(Create, name, args[:1], false)
		}
	case "File.symlink", "FileUtils.ln_s", "File.link", "FileUtils.ln", "FileUtils.ln_sf":
		if len(args) >= 2 {
			t, _ := sc.lit(args[0])
			if d, ok := sc.path(name, args[1]); ok {
				if t != "" {
					t = sc.s.resolve(t)
				}
				sc.add(Effect{Kind: Create, Path: d, Dest: t})
			}
		}
	case "TCPSocket.new", "TCPSocket.open", "Socket.tcp", "TCPSocket.open.new", "UDPSocket.new.connect",
		"Net::Telnet.new", "Net::SSH.start":
		if h, p, ok := sc.hostPort(args); ok {
			sc.connect(h, p)
		} else {
			sc.unknownf("%s to an address not known before run time: %s", name, argText(args))
		}
	case "TCPServer.new", "TCPServer.open":
		h, p, _ := sc.hostPort(args)
		sc.add(Effect{Kind: Listen, Detail: &Detail{Host: h, Port: p}})
	case "Net::HTTP.get", "Net::HTTP.get_response", "Net::HTTP.post", "Net::HTTP.post_form", "URI.open",
		"Net::HTTP.start", "Net::HTTP.new", "HTTParty.get", "HTTParty.post", "Faraday.get", "Faraday.post",
		"RestClient.get", "RestClient.post", "RestClient.put":
		u := ""
		for _, a := range args {
			for k := range a {
				if v, n := sc.expr(a[k:]); n > 0 && (strings.Contains(v.s, "://") || strings.Contains(v.s, ".")) {
					u = v.s
					break
				}
			}
			if u != "" {
				break
			}
		}
		if u == "" {
			sc.unknownf("%s of a URL not known before run time: %s", name, argText(args))
			return
		}
		sc.connect(u, "")
		if strings.Contains(strings.ToLower(name), "post") || strings.Contains(name, "put") {
			e := sc.conns[len(sc.conns)-1]
			sc.add(Effect{Kind: Send, Detail: &Detail{URL: e.URL(), Host: e.Host(), Port: e.Port(), Source: sc.dataSource(args[1:])}})
		}
	case "Process.kill":
		if len(args) > 1 {
			var targets []string
			for _, a := range args[1:] {
				targets = append(targets, sc.litOr(a, "?"))
			}
			sc.signal(strings.TrimPrefix(sc.litOr(args[0], "?"), ":"), targets)
		}
	case "eval", "instance_eval", "class_eval", "module_eval", "Kernel.eval", "binding.eval":
		sc.evalCode(fn, args)
	case "Process::Sys.setuid", "Process.uid=", "Process::UID.change_privilege":
		sc.add(Effect{Kind: Privilege, Program: "setuid"})
	}
	if fn == "reopen" && (strings.HasPrefix(name, "$stdin") || strings.HasPrefix(name, "$stdout") ||
		strings.HasPrefix(name, "STDIN") || strings.HasPrefix(name, "STDOUT")) {
		sc.dup = true
	}
}

// rubyList flattens [a, b] list arguments.
func rubyList(args [][]scTok) [][]scTok {
	var out [][]scTok
	for _, a := range args {
		if len(a) > 1 && a[0].s == "[" {
			var cur []scTok
			for _, t := range a[1:] {
				if t.s == "," || t.s == "]" {
					if len(cur) > 0 {
						out = append(out, cur)
					}
					cur = nil
					continue
				}
				cur = append(cur, t)
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

func (sc *scanner) php(fn string, args [][]scTok) {
	switch fn {
	case "include", "require", "include_once", "require_once":
		sc.loadsFile(fn, args)
	case "call_user_func":
		// call_user_func("system", CMD) is system(CMD).
		if len(args) > 0 {
			if name, ok := sc.lit(args[0]); ok && name != "call_user_func" {
				sc.php(strings.ToLower(name), args[1:])
			}
		}
	case "system", "exec", "shell_exec", "passthru", "popen", "proc_open", "pcntl_exec":
		a := args
		if len(a) > 1 && fn != "pcntl_exec" {
			a = a[:1]
		}
		if fn == "proc_open" && len(args) > 1 && !strings.Contains(argText(args[1:2]), "pipe") {
			sc.dup = true // the process's streams are handles opened here
		}
		if fn == "pcntl_exec" && len(a) > 1 {
			if prog, ok := sc.lit(a[0]); ok {
				if words, ok := sc.litStrings(a[1:2]); ok {
					line := JoinArgv(append([]string{prog}, words...))
					sc.noteShell(line)
					sc.ran(prog)
					sc.s.nested("sh", func() { shellReader(sc.s, line) })
					return
				}
			}
		}
		sc.runArgs(fn, a)
	case "fsockopen", "pfsockopen", "stream_socket_client", "socket_connect":
		a := args
		if fn == "socket_connect" && len(a) > 0 {
			a = a[1:]
		}
		if h, p, ok := sc.hostPort(a); ok {
			sc.connect(h, p)
		} else {
			sc.unknownf("%s to an address not known before run time: %s", fn, argText(args))
		}
	case "stream_socket_server", "socket_bind", "socket_listen":
		if fn == "socket_listen" {
			return
		}
		h, p, _ := sc.hostPort(args)
		sc.add(Effect{Kind: Listen, Detail: &Detail{Host: h, Port: p}})
	case "unlink", "rmdir":
		if len(args) > 0 {
			sc.fileOp(Delete, fn, args[:1], false)
		}
	case "file_put_contents":
		if len(args) > 0 {
			if u, ok := sc.lit(args[0]); ok && strings.Contains(u, "://") {
				sc.connect(u, "")
				return
			}
			p, ok := sc.path(fn, args[0])
			if ok {
				sc.add(Effect{Kind: Write, Path: p, Append: strings.Contains(argText(args[min(2, len(args)):]), "FILE_APPEND")})
			}
		}
	case "file_get_contents", "readfile", "file", "fopen", "show_source", "highlight_file", "parse_ini_file", "scandir", "glob", "copy":
		if len(args) == 0 {
			return
		}
		s, ok := sc.lit(args[0])
		if ok && strings.Contains(s, "://") {
			sc.connect(s, "")
			return
		}
		p, ok := sc.path(fn, args[0])
		if !ok {
			return
		}
		if fn == "fopen" && len(args) > 1 {
			if m, ok := sc.lit(args[1]); !ok || strings.ContainsAny(m, "waxc+") {
				sc.add(Effect{Kind: Write, Path: p, Append: strings.Contains(m, "a")})
				return
			}
		}
		sc.add(Effect{Kind: Read, Path: p})
		if fn == "copy" && len(args) > 1 {
			if d, ok := sc.path(fn, args[1]); ok {
				sc.add(Effect{Kind: Write, Path: d})
			}
		}
	case "rename":
		if len(args) >= 2 {
			s, ok1 := sc.path(fn, args[0])
			d, ok2 := sc.path(fn, args[1])
			if ok1 && ok2 {
				sc.add(Effect{Kind: Move, Path: s, Dest: d})
			}
		}
	case "chmod", "chown", "chgrp":
		if len(args) >= 2 {
			if p, ok := sc.path(fn, args[0]); ok {
				k := Chmod
				mode := sc.litOr(args[1], "?")
				if fn != "chmod" {
					k = Chown
				} else {
					mode = octal(mode)
				}
				sc.add(Effect{Kind: k, Path: p, Detail: &Detail{Mode: mode}})
			}
		}
	case "mkdir", "touch", "tempnam":
		if len(args) > 0 && fn != "tempnam" {
			sc.fileOp(Create, fn, args[:1], false)
		}
	case "symlink", "link":
		if len(args) >= 2 {
			t, _ := sc.lit(args[0])
			if d, ok := sc.path(fn, args[1]); ok {
				if t != "" {
					t = sc.s.resolve(t)
				}
				sc.add(Effect{Kind: Create, Path: d, Dest: t})
			}
		}
	case "curl_init":
		if len(args) > 0 {
			if u, ok := sc.lit(args[0]); ok {
				sc.connect(u, "")
				if strings.Contains(sc.src, "CURLOPT_POSTFIELDS") {
					e := sc.conns[len(sc.conns)-1]
					sc.add(Effect{Kind: Send, Detail: &Detail{URL: e.URL(), Host: e.Host(), Port: e.Port(), Source: "data"}})
				}
				return
			}
			sc.unknownf("curl_init of a URL not known before run time: %s", argText(args))
		}
	case "posix_kill":
		if len(args) > 1 {
			sc.signal(sc.litOr(args[1], "?"), []string{sc.litOr(args[0], "?")})
		}
	case "eval", "assert", "create_function":
		sc.evalCode(fn, args)
	case "posix_setuid", "posix_seteuid":
		sc.add(Effect{Kind: Privilege, Program: "setuid"})
	}
}
