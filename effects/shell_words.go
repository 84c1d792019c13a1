package effects

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// sword is one word of a command after expansion and quote removal.
type sword struct {
	arg    string    // as it goes into Argv: the value, or the source text when not known
	val    string    // the value, when known
	suffix string    // the literal text after the last part not known
	out    *shStream // the word is a command or process substitution: its output
	known  bool      // the whole value is known statically
	glob   bool      // unquoted glob characters (a pattern, not yet matched)
	dyn    bool      // part of the word is a command's output
	tree   bool      // a path somewhere under val (find's {})
	pat    string    // the pattern, made absolute, this path is one match of (a glob expanded on disk)
}

func shLit(v string) sword { return sword{arg: v, val: v, known: true} }

// shExpansionRE matches the parts of a word's source text that are
// expanded at run time: parameters, command and arithmetic substitutions.
var shExpansionRE = regexp.MustCompile("\\$\\{[^}]*\\}|\\$\\([^)]*\\)+|\\$[A-Za-z_][A-Za-z_0-9]*|\\$[0-9@*#?!$-]|`[^`]*`")

// codeHidden reports whether a word not known statically has no literal
// text at all once its expansions and quotes are taken out ("$P",
// "$(cat f)"): given as code, none of that code is known, so what it runs
// is not either. A word with literal code around its holes ("{print $1}",
// "s/$A/$B/") is read for that code.
func codeHidden(w sword) bool {
	if w.known {
		return false
	}
	rest := shExpansionRE.ReplaceAllString(w.arg, "")
	return strings.Trim(rest, "\"' \t\n") == ""
}

// fieldBuilder accumulates the fields one shell word expands to. The
// current field's text is built in a scratch buffer of the reader (one per
// nesting level of words being expanded, reused from word to word), so a
// field costs one string, not three growing builders.
type fieldBuilder struct {
	fields  []sword // finished fields are appended here (when all is set)
	all     bool
	single  sword // the first field, when all is not set (joinWord, document)
	nfields int
	cur     []byte // the current field's value
	pat     []byte // its glob pattern, once a quoted glob character made it differ from cur
	patOn   bool
	sufAt   int // cur[sufAt:] is the literal text after the last part not known
	known   bool
	glob    bool
	dyn     bool
	started bool // the current field exists (even if empty: quotes)
	out     *shStream
	nparts  int
	r       *sh
	word    *syntax.Word // printed for Argv when a field is not known
	srcText string
	noSrc   bool // a field not known gets no Argv text (a value nobody prints)
	level   int  // index of the reader's scratch buffer cur comes from
}

// newFieldBuilder starts the fields of word w, appended to fields (with
// all; without it only the first field is kept, in single). done must be
// called when the word is read.
func (r *sh) newFieldBuilder(w *syntax.Word, fields []sword, all bool) fieldBuilder {
	b := fieldBuilder{r: r, word: w, fields: fields, all: all, level: r.wlevel, known: true}
	if r.wlevel < len(r.wbufs) {
		b.cur = r.wbufs[r.wlevel][:0]
	}
	r.wlevel++
	return b
}

// done gives the scratch buffer back to the reader (grown, for the next
// word at this level).
func (b *fieldBuilder) done() {
	r := b.r
	r.wlevel = b.level
	if cap(b.cur) > 4<<10 {
		return // an unusually long word: do not keep its buffer
	}
	for len(r.wbufs) <= b.level {
		r.wbufs = append(r.wbufs, nil)
	}
	r.wbufs[b.level] = b.cur[:0]
}

func (b *fieldBuilder) src() string {
	if b.srcText == "" {
		b.srcText = b.r.srcOf(b.word)
	}
	return b.srcText
}

func (b *fieldBuilder) reset() {
	b.cur = b.cur[:0]
	b.pat = b.pat[:0]
	b.patOn, b.sufAt = false, 0
	b.known, b.glob, b.dyn, b.started, b.out, b.nparts = true, false, false, false, nil, 0
}

func (b *fieldBuilder) end() {
	if !b.started {
		return
	}
	s := string(b.cur)
	w := sword{val: s, known: b.known, glob: b.glob, dyn: b.dyn, suffix: s[b.sufAt:]}
	if b.nparts == 1 {
		w.out = b.out
	}
	if w.known {
		w.arg = w.val
	} else {
		if !b.noSrc {
			w.arg = b.src()
		}
		w.val = ""
	}
	if w.glob {
		if b.patOn {
			w.val = string(b.pat)
		} else {
			w.val = s
		}
	}
	if b.all {
		b.fields = append(b.fields, w)
	} else if b.nfields == 0 {
		b.single = w
	}
	b.nfields++
	b.reset()
}

// shGlobChar reports whether c must be quoted in a glob pattern.
func shGlobChar(c byte) bool {
	return c == '*' || c == '?' || c == '[' || c == ']' || c == '\\'
}

// literal adds quoted (or unsplittable) text.
func (b *fieldBuilder) literal(s string, quoted bool) {
	b.started = true
	if quoted && !b.patOn {
		for i := 0; i < len(s); i++ {
			if shGlobChar(s[i]) {
				// From here on the pattern differs from the value.
				b.patOn = true
				b.pat = append(b.pat[:0], b.cur...)
				break
			}
		}
	}
	b.cur = append(b.cur, s...)
	if !b.patOn {
		return
	}
	if quoted {
		for i := 0; i < len(s); i++ {
			if shGlobChar(s[i]) {
				b.pat = append(b.pat, '\\')
			}
			b.pat = append(b.pat, s[i])
		}
	} else {
		b.pat = append(b.pat, s...)
	}
}

// unknownPart marks the current field as not known.
func (b *fieldBuilder) unknownPart(dyn bool) {
	b.started = true
	b.known = false
	b.sufAt = len(b.cur)
	if dyn {
		b.dyn = true
	}
}

// words expands a command's words: braces, parameters, command
// substitutions, field splitting, "$@", globs (through ctx.FS when set).
func (r *sh) words(list []*syntax.Word, split bool) []sword {
	out := r.s.mem.swords(len(list))
	for _, w := range list {
		if w == nil {
			continue
		}
		syntax.SplitBraces(w)
		hasBrace := false
		for _, p := range w.Parts {
			if _, ok := p.(*syntax.BraceExp); ok {
				hasBrace = true
				break
			}
		}
		if !hasBrace {
			out = r.expandWord(out, w, split)
			continue
		}
		out = r.braceWords(out, w, split)
	}
	return out
}

// braceWords expands a word with braces ({a,b}, {1..3}) into out. (Its own
// function: the range-over-func loop captures out, which would otherwise
// put every words call's slice header on the heap.)
func (r *sh) braceWords(out []sword, w *syntax.Word, split bool) []sword {
	n := 0
	for bw, err := range expand.BracesSeq(nil, w) {
		if err != nil || n >= MaxGlobMatches {
			r.s.unknown(true, "brace expansion gives more than %d words", MaxGlobMatches)
			break
		}
		n++
		out = r.expandWord(out, bw, split)
	}
	return out
}

func (r *sh) expandWord(out []sword, w *syntax.Word, split bool) []sword {
	if v, ok := plainWord(w); ok {
		return append(out, shLit(v))
	}
	// "$@" and "${@}" alone: one word per positional parameter.
	if len(w.Parts) == 1 {
		if dq, ok := w.Parts[0].(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
			if pe, ok := dq.Parts[0].(*syntax.ParamExp); ok && pe.Param != nil && pe.Param.Value == "@" && pe.Exp == nil && !pe.Length && pe.Slice == nil && pe.Repl == nil {
				return append(out, r.args...)
			}
		}
	}
	start := len(out)
	b := r.newFieldBuilder(w, out, true)
	r.parts(&b, w.Parts, false, split, true)
	b.end()
	b.done()
	out = b.fields
	globs := false
	for _, f := range out[start:] {
		if f.glob && f.known {
			globs = true
			break
		}
	}
	if !globs {
		return out
	}
	fields := append(r.s.mem.swords(len(out)-start), out[start:]...)
	out = out[:start]
	for _, f := range fields {
		if f.glob && f.known {
			out = r.glob(out, f)
			continue
		}
		out = append(out, f)
	}
	return out
}

// plainWord returns the value of a word that needs no expansion: one
// literal without backslashes, glob characters or a leading tilde, or one
// single-quoted string (the common case, read without the builders).
func plainWord(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		v := p.Value
		if len(v) > 0 && v[0] == '~' {
			return "", false
		}
		for i := 0; i < len(v); i++ {
			if c := v[i]; c == '\\' || c == '*' || c == '?' || c == '[' {
				return "", false
			}
		}
		return v, true
	case *syntax.SglQuoted:
		if p.Dollar {
			return "", false
		}
		return p.Value, true
	case *syntax.DblQuoted:
		if len(p.Parts) == 0 {
			return "", true
		}
		if l, ok := p.Parts[0].(*syntax.Lit); ok && len(p.Parts) == 1 && !strings.Contains(l.Value, "\\") {
			return l.Value, true
		}
	}
	return "", false
}

// joinWord evaluates a word with no field splitting and no globbing (an
// assignment's value, a here-string, a redirection target).
func (r *sh) joinWord(w *syntax.Word) sword { return r.joinWordArg(w, true) }

// joinWordArg is joinWord; without withArg, a value not known gets no arg
// (the printed word, which costs a printer run): for an assignment's
// value, of which only the value and whether it is known are kept.
func (r *sh) joinWordArg(w *syntax.Word, withArg bool) sword {
	if w == nil {
		return shLit("")
	}
	if v, ok := plainWord(w); ok {
		return shLit(v)
	}
	b := r.newFieldBuilder(w, nil, false)
	b.noSrc = !withArg
	r.parts(&b, w.Parts, false, false, true)
	b.started = true
	b.end()
	b.done()
	f := b.single
	if f.glob {
		f.val, f.glob = f.arg, false
	}
	return f
}

// document evaluates a here-document body (expansions apply, quotes are
// literal).
func (r *sh) document(w *syntax.Word) sword {
	if w == nil {
		return shLit("")
	}
	b := r.newFieldBuilder(w, nil, false)
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.literal(unescapeDouble(l.Value, false), true)
			continue
		}
		r.parts(&b, []syntax.WordPart{p}, true, false, false)
	}
	b.started = true
	b.end()
	b.done()
	f := b.single
	f.glob = false
	if f.known {
		f.val = f.arg
	}
	return f
}

func (r *sh) parts(b *fieldBuilder, parts []syntax.WordPart, quoted, split bool, first bool) {
	for i, p := range parts {
		b.nparts++
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if quoted {
				b.literal(unescapeDouble(v, true), true)
				continue
			}
			if first && i == 0 && strings.HasPrefix(v, "~") {
				v = r.tilde(v, len(parts) > 1)
				if v == "~-" || strings.HasPrefix(v, "~-/") {
					// The previous directory of a shell the script did not
					// move: not known (cd / && cd - is lost too).
					b.unknownPart(false)
					v = v[2:]
				}
			}
			r.unquotedLit(b, v)
		case *syntax.SglQuoted:
			v := p.Value
			if p.Dollar {
				v, _, _ = expandFormat(v, nil)
				v, _, _ = strings.Cut(v, "\x00")
			}
			b.literal(v, true)
		case *syntax.DblQuoted:
			b.started = true
			r.parts(b, p.Parts, true, false, false)
			b.nparts-- // the quotes themselves are not a part
		case *syntax.ParamExp:
			if pe := p; pe.Param != nil && (pe.Param.Value == "@" || pe.Param.Value == "*") && pe.Exp == nil && pe.Slice == nil && pe.Repl == nil && !pe.Length && !pe.Excl {
				vals := r.args
				if quoted || !split {
					parts := make([]string, 0, len(vals))
					known := true
					for _, a := range vals {
						parts = append(parts, a.val)
						known = known && a.known
					}
					if known {
						b.literal(strings.Join(parts, " "), quoted)
					} else {
						b.unknownPart(false)
					}
					continue
				}
				for j, a := range vals {
					if j > 0 {
						b.end()
					}
					if a.known {
						b.literal(a.val, true)
					} else {
						b.unknownPart(a.dyn)
					}
				}
				continue
			}
			v, known := r.param(p)
			if !known {
				b.unknownPart(false)
				if pe := p; pe.Param != nil && pe.Exp == nil && pe.Repl == nil && pe.Slice == nil && pe.Index == nil {
					if sv := r.vars[pe.Param.Value]; sv.out != nil {
						b.out = sv.out // a pid from a process listing
					}
				}
				continue
			}
			r.expansion(b, v, quoted, split)
		case *syntax.CmdSubst:
			var out *shStream
			r.scoped(func() { out = r.stmts(p.Stmts, nil) })
			if out != nil && out.kind == sText {
				r.expansion(b, strings.TrimRight(out.text, "\n"), quoted, split)
				continue
			}
			b.unknownPart(true)
			b.out = out
		case *syntax.ArithmExp:
			r.substsIn(p)
			n, err := expand.Arithm(&expand.Config{Env: r.environ()}, p.X)
			if err != nil {
				b.unknownPart(false)
				continue
			}
			b.literal(shItoa(n), true)
		case *syntax.ProcSubst:
			var out *shStream
			in := (*shStream)(nil)
			if p.Op == syntax.CmdOut {
				in = shOutputOf("")
			}
			r.scoped(func() { out = r.stmts(p.Stmts, in) })
			b.literal("/dev/fd/63", true)
			if p.Op != syntax.CmdOut {
				b.out = out
			}
		case *syntax.ExtGlob:
			b.literal(p.Op.String()+p.Pattern.Value+")", false)
			b.glob = true
		case *syntax.BraceExp:
			b.literal(r.srcOf(&syntax.Word{Parts: []syntax.WordPart{p}}), true)
		default:
			b.unknownPart(false)
		}
	}
}

// expansion adds the value of an unquoted or quoted expansion: unquoted,
// it is split into fields on blanks (and its glob characters are live).
func (r *sh) expansion(b *fieldBuilder, v string, quoted, split bool) {
	if quoted || !split {
		b.literal(v, quoted)
		return
	}
	ifs, known := r.lookup("IFS")
	if !known {
		b.unknownPart(false)
		return
	}
	isSep := func(c rune) bool { return strings.ContainsRune(ifs, c) }
	fields := strings.FieldsFunc(v, isSep)
	if len(fields) == 0 {
		if v != "" && b.started {
			b.end()
		}
		return
	}
	if isSep(rune(v[0])) {
		b.end()
	}
	for i, f := range fields {
		if i > 0 {
			b.end()
		}
		r.unquotedLitNoEscape(b, f)
	}
	if isSep(rune(v[len(v)-1])) {
		b.end()
	}
}

// unquotedLit adds unquoted literal text: backslashes quote the next
// character, glob characters are live.
func (r *sh) unquotedLit(b *fieldBuilder, v string) {
	b.started = true
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			i++
			if v[i] == '\n' {
				continue
			}
			b.literal(v[i:i+1], true)
			continue
		}
		if c == '*' || c == '?' || c == '[' {
			b.glob = true
		}
		b.cur = append(b.cur, c)
		if b.patOn {
			b.pat = append(b.pat, c)
		}
	}
}

func (r *sh) unquotedLitNoEscape(b *fieldBuilder, v string) {
	b.started = true
	if strings.ContainsAny(v, "*?[") {
		b.glob = true
	}
	b.cur = append(b.cur, v...)
	if b.patOn {
		b.pat = append(b.pat, v...)
	}
}

// unescapeDouble removes the backslashes that quote \ $ ` (and " inside
// double quotes) and joined lines.
func unescapeDouble(s string, dq bool) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '"':
				if !dq {
					break
				}
				fallthrough
			case '\\', '$', '`':
				i++
				c = s[i]
			case '\n':
				i++
				continue
			}
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

// tilde expands a leading ~ or ~/ to the agent's home (left as "~" when
// the home is not known, which path resolution keeps as written).
func (r *sh) tilde(v string, more bool) string {
	home := r.s.ctx.Home
	if home == "" && !strings.HasPrefix(v, "~+") && !strings.HasPrefix(v, "~-") {
		return v
	}
	if v == "~+" || strings.HasPrefix(v, "~+/") {
		// ~+ is $PWD, ~- is $OLDPWD.
		if cwd := r.s.cwd(); cwd != "" {
			return cwd + v[2:]
		}
		return v
	}
	if v == "~-" || strings.HasPrefix(v, "~-/") {
		if old, ok := r.vars["OLDPWD"]; ok && old.known {
			return old.val + v[2:]
		}
		return v
	}
	if v == "~" && !more || strings.HasPrefix(v, "~/") || v == "~" {
		return home + v[1:]
	}
	if r.s.ctx.User != "" {
		if v == "~"+r.s.ctx.User || strings.HasPrefix(v, "~"+r.s.ctx.User+"/") {
			return home + v[1+len(r.s.ctx.User):]
		}
	}
	return v
}

// lookup returns a variable's value and whether it is known.
func (r *sh) lookup(name string) (string, bool) {
	if v, ok := r.vars[name]; ok {
		return v.val, v.known
	}
	switch name {
	case "HOME":
		if r.s.ctx.Home != "" {
			return r.s.ctx.Home, true
		}
		return "~", true
	case "PWD":
		if cwd := r.s.cwd(); cwd != "" {
			return cwd, true
		}
	case "USER", "LOGNAME":
		if r.s.ctx.User != "" {
			return r.s.ctx.User, true
		}
	case "IFS":
		return " \t\n", true
	case "0":
		return r.name, true
	case "#":
		return shItoa(len(r.args)), true
	}
	if len(name) == 1 && name[0] >= '1' && name[0] <= '9' {
		i := int(name[0] - '1')
		if i < len(r.args) {
			return r.args[i].val, r.args[i].known
		}
		return "", r.args != nil
	}
	return "", false
}

func (r *sh) environ() expand.Environ {
	return expand.FuncEnviron(func(name string) string {
		v, _ := r.lookup(name)
		return v
	})
}

// param evaluates a parameter expansion.
func (r *sh) param(pe *syntax.ParamExp) (string, bool) {
	if pe.Param == nil {
		return "", false
	}
	if pe.Names != 0 {
		return "", false // ${!prefix*}: the names of variables
	}
	name := pe.Param.Value
	v, known := r.lookup(name)
	if pe.Excl && pe.Names == 0 && pe.Index == nil {
		if !known {
			return "", false
		}
		v, known = r.lookup(v)
	}
	if pe.Index != nil {
		r.substsIn(pe.Index)
		return "", false
	}
	if pe.Length {
		if !known {
			return "", false
		}
		return shItoa(len([]rune(v))), true
	}
	if pe.Slice != nil {
		if !known {
			return "", false
		}
		cfg := &expand.Config{Env: r.environ()}
		off, err := expand.Arithm(cfg, pe.Slice.Offset)
		if err != nil {
			return "", false
		}
		rs := []rune(v)
		if off < 0 {
			off += len(rs)
		}
		if off < 0 || off > len(rs) {
			return "", true
		}
		rs = rs[off:]
		if pe.Slice.Length != nil {
			n, err := expand.Arithm(cfg, pe.Slice.Length)
			if err != nil {
				return "", false
			}
			if n < 0 {
				n += len(rs)
			}
			if n >= 0 && n < len(rs) {
				rs = rs[:n]
			}
		}
		return string(rs), true
	}
	if pe.Repl != nil {
		orig, with := r.joinWord(pe.Repl.Orig), r.joinWord(pe.Repl.With)
		if !known || !orig.known || !with.known || strings.ContainsAny(orig.val, "*?[") {
			return "", false
		}
		if orig.val == "" {
			return v, true
		}
		if pe.Repl.All {
			return strings.ReplaceAll(v, orig.val, with.val), true
		}
		return strings.Replace(v, orig.val, with.val, 1), true
	}
	if pe.Exp != nil {
		arg := r.joinWord(pe.Exp.Word)
		_, set := r.vars[name]
		switch pe.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
			if known && (v != "" || pe.Exp.Op == syntax.DefaultUnset || pe.Exp.Op == syntax.AssignUnset) && set {
				return v, true
			}
			if known && v != "" {
				return v, true
			}
			if set && known && v == "" {
				return arg.val, arg.known
			}
			return "", false
		case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
			if !known {
				return "", false
			}
			if set && (v != "" || pe.Exp.Op == syntax.AlternateUnset) {
				return arg.val, arg.known
			}
			return "", true
		case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
			return v, known
		case syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.RemSmallSuffix, syntax.RemLargeSuffix:
			if !known || !arg.known {
				return "", false
			}
			return trimPattern(v, arg.val, pe.Exp.Op)
		case syntax.UpperAll:
			return strings.ToUpper(v), known
		case syntax.LowerAll:
			return strings.ToLower(v), known
		case syntax.UpperFirst, syntax.LowerFirst:
			if !known || v == "" {
				return v, known
			}
			if pe.Exp.Op == syntax.UpperFirst {
				return strings.ToUpper(v[:1]) + v[1:], true
			}
			return strings.ToLower(v[:1]) + v[1:], true
		}
		return "", false
	}
	return v, known
}

// trimPattern applies ${v#p}, ${v##p}, ${v%p}, ${v%%p} with a literal or
// glob pattern.
func trimPattern(v, pat string, op syntax.ParExpOperator) (string, bool) {
	match := func(s string) bool {
		if !strings.ContainsAny(pat, "*?[\\") {
			return s == pat
		}
		ok, err := shGlobMatch(pat, s)
		return err == nil && ok
	}
	n := len(v)
	switch op {
	case syntax.RemSmallPrefix:
		for i := 0; i <= n; i++ {
			if match(v[:i]) {
				return v[i:], true
			}
		}
	case syntax.RemLargePrefix:
		for i := n; i >= 0; i-- {
			if match(v[:i]) {
				return v[i:], true
			}
		}
	case syntax.RemSmallSuffix:
		for i := n; i >= 0; i-- {
			if match(v[i:]) {
				return v[:i], true
			}
		}
	case syntax.RemLargeSuffix:
		for i := 0; i <= n; i++ {
			if match(v[i:]) {
				return v[:i], true
			}
		}
	}
	return v, true
}

// shGlobMatch matches a shell pattern against a whole string in which "/"
// is an ordinary character.
func shGlobMatch(pat, s string) (bool, error) {
	re, err := syntaxPatternRegexp(pat)
	if err != nil {
		return false, err
	}
	return re.MatchString(s), nil
}

// shPrinter is a printer of words with its output buffer, reused.
type shPrinter struct {
	p   *syntax.Printer
	buf bytes.Buffer
}

var shPrinterPool = sync.Pool{New: func() any { return &shPrinter{p: syntax.NewPrinter(syntax.Minify(true))} }}

// srcOf prints a word as written (for Argv of words not known and for
// reasons).
func (r *sh) srcOf(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	if l := w.Lit(); l != "" {
		return l
	}
	pr := shPrinterPool.Get().(*shPrinter)
	pr.buf.Reset()
	err := pr.p.Print(&pr.buf, w)
	b := pr.buf.Bytes()
	var s string
	switch {
	case err != nil:
		s = "?"
	case len(b) > 200:
		s = string(b[:200]) + "…"
	default:
		s = string(b)
	}
	if pr.buf.Cap() <= 4<<10 {
		shPrinterPool.Put(pr)
	}
	return s
}

// glob expands a pattern through ctx.FS when it is set; without a file
// system (or with no match, as bash does) the pattern stays as written.
func (r *sh) glob(out []sword, w sword) []sword {
	fs := r.s.ctx.FS
	if fs == nil {
		w.val = w.arg
		return r.dotVariants(append(out, w), w)
	}
	abs := r.s.resolve(w.val)
	if !strings.HasPrefix(abs, "/") {
		w.val = w.arg
		return r.dotVariants(append(out, w), w)
	}
	matches, err := fs.Glob(abs, MaxGlobMatches+1)
	if errors.Is(err, ErrGlobTooLarge) {
		r.s.unknown(true, "pattern %s reads more directory entries than the analysis reads", w.arg)
	}
	if err != nil || len(matches) == 0 {
		w.val = w.arg
		return r.dotVariants(append(out, w), w)
	}
	if len(matches) > MaxGlobMatches {
		r.s.unknown(true, "pattern %s matches more than %d paths", w.arg, MaxGlobMatches)
		matches = matches[:MaxGlobMatches]
	}
	for _, m := range matches {
		out = append(out, sword{arg: m, val: m, known: true, pat: abs})
	}
	return out
}

// dotVariants adds, under dotglob, the spellings of a pattern kept as
// written whose elements starting with * or ? start with a dot: what else
// it may match (~/*/id_rsa is also ~/.*/id_rsa, so ~/.ssh/id_rsa), one
// element at a time and all of them together, for the rules that judge a
// pattern by what it may name.
func (r *sh) dotVariants(out []sword, w sword) []sword {
	if !r.s.dotglob {
		return out
	}
	elems := strings.Split(w.val, "/")
	var at []int
	for i, e := range elems {
		if e != "" && (e[0] == '*' || e[0] == '?') {
			at = append(at, i)
		}
	}
	if len(at) == 0 || len(at) > 8 {
		return out
	}
	variant := func(idx ...int) sword {
		es := append([]string(nil), elems...)
		for _, i := range idx {
			es[i] = "." + es[i]
		}
		v := strings.Join(es, "/")
		return sword{arg: v, val: v, known: true, glob: true}
	}
	for _, i := range at {
		out = append(out, variant(i))
	}
	if len(at) > 1 {
		out = append(out, variant(at...))
	}
	return out
}

func syntaxPatternRegexp(pat string) (*regexp.Regexp, error) {
	expr, err := pattern.Regexp(pat, pattern.EntireString)
	if err != nil {
		return nil, err
	}
	return regexp.Compile(expr)
}

// expandFormat is expand.Format (printf and $'…' escapes) with a config of
// its own: given nil, expand modifies one shared config, which races when
// several actions are read at once.
func expandFormat(format string, args []string) (string, int, error) {
	return expand.Format(&expand.Config{}, format, args)
}
