package policy

import (
	"regexp"
	"sort"
	"strings"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"

	"github.com/ahp-go/ahp/effects"
)

// A condition filter is what a condition needs of the action to be true:
// event.effects.exists(e, e.kind == "delete" && ...) needs a delete, and
// exists(e, e.kind == "run" && e.program in ["mkfs", ...]) a run of one of
// those programs. Conditions are read once at load; at evaluation a rule
// whose needs the action does not meet is false without running CEL, which
// spares most of the effect packs' rules on an ordinary command.

// noKindFilter turns the filters off (tests compare with and without).
var noKindFilter = false

// effectKinds lists the kinds with their bit in a kindMask.
var effectKinds = []effects.Kind{effects.Run, effects.Read, effects.Write, effects.Create, effects.Delete,
	effects.Move, effects.Chmod, effects.Chown, effects.Connect, effects.Listen, effects.Send,
	effects.Download, effects.Signal, effects.Privilege, effects.Unknown}

// kindMask is a set of effect kinds.
type kindMask uint32

func kindBit(k string) (kindMask, bool) {
	for i, kk := range effectKinds {
		if string(kk) == k {
			return 1 << i, true
		}
	}
	return 0, false
}

// conditionNeed returns what a checked condition needs of the action's
// effects (a condNeed), or nil when it cannot tell (the rule is always
// evaluated). params are the set's config values: config.X is a constant
// of the set, so a test such as "e.program in config.X" is read from them.
func conditionNeed(a *cel.Ast, params map[string]any) condNeed {
	if a == nil || a.NativeRep() == nil {
		return nil
	}
	r := needReader{params: params}
	need, ok := r.required(a.NativeRep().Expr())
	if !ok {
		return nil
	}
	return need
}

// condNeed is what a condition needs for it to be true: an effect of the
// action that meets one of its terms. It is only ever a necessary
// condition: when an effect meets it, the rule's CEL still decides.
type condNeed []needTerm

// needTerm is met by an effect of one of kinds (0: any kind) that also
// meets every one of progs and every one of paths. A term always has
// kinds, progs or paths.
type needTerm struct {
	kinds kindMask
	progs []*effectNeed
	mask  bitset // the numbers of progs in the set's needIndex (buildNeeds)
	paths []*pathNeed
}

// pathNeed is a test of one string field of an effect (its path,
// destination or, for an unknown effect, reason): path_match of it over
// patterns known at load (set), its being one of lits, or its matching re.
// Evaluation tests it lazily, once per effect (evalCtx.pathMet): such tests
// cost too much to run on every effect, and a need's kinds and programs
// usually leave few effects to test.
type pathNeed struct {
	field  string // "path", "dest" or "reason"; "limit" for the flag
	pats   []string
	set    pathSet // pats, compiled
	lits   map[string]bool
	re     *regexp.Regexp
	pre    prefilter // re's literals
	prefix string    // the field starts with it (startsWith)
	flag   bool      // the limit flag is set
	// home: path_match(field, pats, event.home): a pattern starting with
	// "~" also matches with the evaluation's home for "~".
	home bool
	// argv: argv_names_path(v, _, lists…): a word of the argv after the
	// program names a path of one of the lists (argvLists, compiled).
	argvLists []*patternList
	idx       int // this need's number in the set's needIndex
}

// key says what the need tests: two needs with the same key are met by
// the same effects.
func (p *pathNeed) key() string {
	var b strings.Builder
	b.WriteString(p.field)
	switch {
	case p.flag:
		b.WriteString("\x00flag")
	case p.lits != nil:
		lits := make([]string, 0, len(p.lits))
		for l := range p.lits {
			lits = append(lits, l)
		}
		sort.Strings(lits)
		b.WriteString("\x00lits")
		for _, l := range lits {
			b.WriteString("\x00" + l)
		}
	case p.re != nil:
		b.WriteString("\x00re\x00" + p.re.String())
	case p.prefix != "":
		b.WriteString("\x00prefix\x00" + p.prefix)
	case p.argvLists != nil:
		b.WriteString("\x00argv")
		for _, l := range p.argvLists {
			for _, e := range l.elems {
				b.WriteString("\x00" + strings.Join(e, "/"))
			}
			b.WriteString("\x00;")
		}
	default:
		b.WriteString("\x00pats")
		if p.home {
			b.WriteString("\x00home")
		}
		for _, pt := range p.pats {
			b.WriteString("\x00" + pt)
		}
	}
	return b.String()
}

// text returns the field the need tests.
func (p *pathNeed) text(e *effects.Effect) string {
	switch p.field {
	case "dest":
		return e.Dest
	case "reason":
		return e.Reason()
	}
	return e.Path
}

// met reports whether an effect meets the test; home is the evaluation's
// (event.home), for a need that reads it.
func (p *pathNeed) met(e *effects.Effect, home string) bool {
	if p.flag {
		return e.Limit
	}
	if p.argvLists != nil {
		return argvNames(e.Argv, p.argvLists)
	}
	s := p.text(e)
	switch {
	case p.lits != nil:
		return p.lits[s]
	case p.re != nil:
		return p.pre.mayMatch(s) && p.re.MatchString(s)
	case p.prefix != "":
		return strings.HasPrefix(s, p.prefix)
	}
	if p.set.match(s) {
		return true
	}
	return p.home && matchesAtHome(p.pats, s, home)
}

// kinds returns the kinds of which the need needs one, or 0 when a term
// takes any kind.
func (n condNeed) kinds() kindMask {
	var m kindMask
	for _, t := range n {
		if t.kinds == 0 {
			return 0
		}
		m |= t.kinds
	}
	return m
}

// both is the need of "a && b" over the same effect: a single term of one
// side narrows every term of the other; otherwise either side will do.
func both(a, b condNeed) condNeed {
	if len(b) == 1 && len(a) != 1 {
		a, b = b, a
	}
	if len(a) != 1 {
		return a
	}
	t := a[0]
	out := make(condNeed, len(b))
	for i, u := range b {
		switch {
		case u.kinds == 0:
			u.kinds = t.kinds
		case t.kinds != 0 && u.kinds&t.kinds != 0:
			u.kinds &= t.kinds
		}
		u.progs = append(append([]*effectNeed(nil), u.progs...), t.progs...)
		u.paths = append(append([]*pathNeed(nil), u.paths...), t.paths...)
		out[i] = u
	}
	return out
}

// effectNeed is a test of one effect's program and arguments: its program
// is one of names or matches one of res, or one of its argument words is
// one of words. index (needindex.go) turns it into bit sets.
type effectNeed struct {
	names map[string]bool
	res   []*regexp.Regexp
	words map[string]bool

	nameBits, wordBits bitset // names and words, numbered by the set's needIndex
	reIDs              []int  // res, numbered by the set's needIndex
	idx                int    // this need's number in the set's needIndex
}

// needReader reads the needs of a condition: v.kind == "x", v.kind in
// [...], v.program == "x", v.program in [...] or config.X,
// v.program.matches('re'), command_in(v.program, _, config.X), "x" in
// v.argv and v.argv.exists(a, a == "x" || a in [...]), joined by && and
// || inside an exists() over event.effects, and such exists() joined by
// && and ||.
type needReader struct {
	params map[string]any
}

// required reads e as "true only if an effect meeting the need exists".
// The two sides of a && may be about different effects, so one of them
// is taken; both sides of a || must be read.
func (r needReader) required(e celast.Expr) (condNeed, bool) {
	switch e.Kind() {
	case celast.CallKind:
		c := e.AsCall()
		args := c.Args()
		switch c.FunctionName() {
		case operators.LogicalAnd:
			if m, ok := r.required(args[0]); ok {
				return m, true
			}
			return r.required(args[1])
		case operators.LogicalOr:
			m1, ok1 := r.required(args[0])
			m2, ok2 := r.required(args[1])
			if ok1 && ok2 {
				return append(append(condNeed{}, m1...), m2...), true
			}
		}
	case celast.ComprehensionKind:
		comp := e.AsComprehension()
		if !isEventEffects(comp.IterRange()) || comp.HasIterVar2() || !isExists(comp) {
			return nil, false
		}
		return r.predicate(comp.LoopStep().AsCall().Args()[1], comp.IterVar())
	}
	return nil, false
}

// predicate reads the body of an exists() over effects for what it needs
// of its element v. In CEL "false && error" and "error && false" are both
// false, so a conjunct that is false makes the body false whatever the
// other does; that is what makes reading one side of a && sound.
func (r needReader) predicate(e celast.Expr, v string) (condNeed, bool) {
	if e.Kind() == celast.CallKind {
		c := e.AsCall()
		args := c.Args()
		switch c.FunctionName() {
		case operators.LogicalAnd:
			m1, ok1 := r.predicate(args[0], v)
			m2, ok2 := r.predicate(args[1], v)
			switch {
			case ok1 && ok2:
				return both(m1, m2), true
			case ok1:
				return m1, true
			}
			return m2, ok2
		case operators.LogicalOr:
			m1, ok1 := r.predicate(args[0], v)
			m2, ok2 := r.predicate(args[1], v)
			if ok1 && ok2 {
				return append(append(condNeed{}, m1...), m2...), true
			}
			return nil, false
		}
	}
	return r.leaf(e, v)
}

// leaf reads one test of the element v.
func (r needReader) leaf(e celast.Expr, v string) (condNeed, bool) {
	if v == "config" {
		return nil, false // config names the element here, not the set's values
	}
	switch e.Kind() {
	case celast.CallKind:
		c := e.AsCall()
		if !c.IsMemberFunction() {
			var m kindMask
			for _, s := range fieldLiterals(c.FunctionName(), c.Args(), v, "kind") {
				b, ok := kindBit(s)
				if !ok {
					return nil, false
				}
				m |= b
			}
			if m != 0 {
				return condNeed{{kinds: m}}, true
			}
		}
		if p, ok := programLeaf(c, v, r.params); ok {
			return condNeed{{progs: []*effectNeed{p}}}, true
		}
		if p, ok := pathLeaf(c, v, r.params); ok {
			return condNeed{{paths: []*pathNeed{p}}}, true
		}
	case celast.SelectKind:
		if isFieldOf(e, v, "limit") {
			return condNeed{{paths: []*pathNeed{{field: "limit", flag: true}}}}, true // v.limit
		}
	case celast.ComprehensionKind:
		if words, ok := argvNeedWords(e.AsComprehension(), v); ok {
			return condNeed{{progs: []*effectNeed{{words: words}}}}, true
		}
	}
	return nil, false
}

// programLeaf reads one call of an exists() body over effects as a need on
// the element's program or arguments.
func programLeaf(c celast.CallExpr, v string, params map[string]any) (*effectNeed, bool) {
	fn, args := c.FunctionName(), c.Args()
	if c.IsMemberFunction() && fn != "matches" {
		return nil, false
	}
	if ps := fieldLiterals(fn, args, v, "program"); ps != nil {
		return &effectNeed{names: setOf(ps)}, true
	}
	switch fn {
	case operators.In:
		if isFieldOf(args[0], v, "program") {
			if ps, ok := configStrings(args[1], params); ok && len(ps) > 0 {
				return &effectNeed{names: setOf(ps)}, true
			}
		}
		if s, ok := stringLit(args[0]); ok && isFieldOf(args[1], v, "argv") {
			return &effectNeed{words: map[string]bool{s: true}}, true // "x" in v.argv
		}
	case "matches":
		subj, s, ok := matchesCall(c)
		if !ok || !isFieldOf(subj, v, "program") {
			return nil, false
		}
		re, err := regexp.Compile(s) // the engine CEL's matches() uses
		if err != nil {
			return nil, false
		}
		return &effectNeed{res: []*regexp.Regexp{re}}, true
	case "command_in":
		// command_in(v.program, argv, config.X) is true only when a
		// command of config.X has v.program as its first word
		// (celCommandIn).
		if len(args) != 3 || !isFieldOf(args[0], v, "program") {
			return nil, false
		}
		lists, ok := configValue(args[2], params)
		if !ok {
			return nil, false
		}
		all := needList(lists)
		if all == nil {
			return nil, false
		}
		names := map[string]bool{}
		for _, l := range all {
			words := needList(l)
			if words == nil {
				return nil, false // command_in fails on it: let CEL say so
			}
			for _, w := range words {
				if _, ok := w.(string); !ok {
					return nil, false
				}
			}
			if len(words) > 0 {
				names[words[0].(string)] = true
			}
		}
		return &effectNeed{names: names}, len(names) > 0
	}
	return nil, false
}

// pathLeaf reads path_match(v.path, patterns), v.path == "x" and v.path in
// [...] (and the same of v.dest) as a need on the element's path, when
// the patterns or strings are known at load; and v.reason.matches('re')
// (or of v.path, v.dest) and v.reason.startsWith("x") (the same) as a
// need on that field.
func pathLeaf(c celast.CallExpr, v string, params map[string]any) (*pathNeed, bool) {
	fn, args := c.FunctionName(), c.Args()
	if fn == "startsWith" && c.IsMemberFunction() && len(args) == 1 {
		pre, ok := stringLit(args[0])
		if !ok || pre == "" {
			return nil, false
		}
		for _, field := range []string{"path", "dest", "reason"} {
			if isFieldOf(c.Target(), v, field) {
				return &pathNeed{field: field, prefix: pre}, true
			}
		}
		return nil, false
	}
	if fn == "matches" {
		subj, s, ok := matchesCall(c)
		if !ok {
			return nil, false
		}
		for _, field := range []string{"path", "dest", "reason"} {
			if isFieldOf(subj, v, field) {
				re, err := regexp.Compile(s) // the engine CEL's matches() uses
				if err != nil {
					return nil, false
				}
				return &pathNeed{field: field, re: re, pre: newPrefilter(s)}, true
			}
		}
		return nil, false
	}
	if c.IsMemberFunction() {
		return nil, false
	}
	// argv_names_path(v, effects, lists…) over lists known at load.
	if fn == "argv_names_path" && len(args) >= 3 && args[0].Kind() == celast.IdentKind && args[0].AsIdent() == v {
		var lists []*patternList
		for _, a := range args[2:] {
			pats, ok := configStrings(a, params)
			if !ok {
				pats, ok = literalStrings(a)
			}
			if !ok {
				return nil, false
			}
			lists = append(lists, newPatternList(pats))
		}
		return &pathNeed{field: "argv", argvLists: lists}, true
	}
	for _, field := range []string{"path", "dest"} {
		if ls := fieldLiterals(fn, args, v, field); ls != nil {
			return &pathNeed{field: field, lits: setOf(ls)}, true
		}
		// path_match(v.field, patterns), or with event.home as its third
		// argument (the home known per evaluation: see pathNeed.met).
		home := len(args) == 3 && isFieldOf(args[2], "event", "home")
		if fn == "path_match" && (len(args) == 2 || home) && isFieldOf(args[0], v, field) {
			pats, ok := configStrings(args[1], params)
			if !ok {
				pats, ok = literalStrings(args[1])
			}
			if ok {
				return &pathNeed{field: field, pats: pats, set: compilePathSet(pats), home: home}, true
			}
		}
	}
	return nil, false
}

// literalStrings returns the strings of a list literal of strings.
func literalStrings(e celast.Expr) ([]string, bool) {
	if e.Kind() != celast.ListKind {
		return nil, false
	}
	els := e.AsList().Elements()
	out := make([]string, 0, len(els))
	for _, el := range els {
		s, ok := stringLit(el)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// matchesCall reads s.matches('re') or matches(s, 're'): the subject and
// the pattern, when the pattern is a string literal.
func matchesCall(c celast.CallExpr) (subj celast.Expr, pattern string, ok bool) {
	args := c.Args()
	switch {
	case c.IsMemberFunction() && len(args) == 1:
		subj = c.Target()
		pattern, ok = stringLit(args[0])
	case !c.IsMemberFunction() && len(args) == 2:
		subj = args[0]
		pattern, ok = stringLit(args[1])
	}
	return subj, pattern, ok
}

// argvNeedWords reads v.argv.exists(a, a == "x" || a in ["y", ...]) as the
// words one of which the argument list must hold.
func argvNeedWords(comp celast.ComprehensionExpr, v string) (map[string]bool, bool) {
	if !isFieldOf(comp.IterRange(), v, "argv") || comp.HasIterVar2() || !isExists(comp) {
		return nil, false
	}
	a := comp.IterVar()
	words := map[string]bool{}
	var walk func(e celast.Expr) bool
	walk = func(e celast.Expr) bool {
		if e.Kind() != celast.CallKind {
			return false
		}
		c := e.AsCall()
		args := c.Args()
		switch c.FunctionName() {
		case operators.LogicalOr:
			return walk(args[0]) && walk(args[1])
		case operators.Equals:
			for i := 0; i < 2; i++ {
				if isIdent(args[i], a) {
					if s, ok := stringLit(args[1-i]); ok {
						words[s] = true
						return true
					}
				}
			}
		case operators.In:
			if isIdent(args[0], a) && args[1].Kind() == celast.ListKind {
				els := args[1].AsList().Elements()
				for _, el := range els {
					s, ok := stringLit(el)
					if !ok {
						return false
					}
					words[s] = true
				}
				return len(els) > 0
			}
		}
		return false
	}
	if !walk(comp.LoopStep().AsCall().Args()[1]) {
		return nil, false
	}
	return words, true
}

// isExists reports whether comp is what the exists() macro expands to:
// false at first, "accu || body" at each step, the accumulator at the end.
// all() and the like are true over no element, so they need nothing.
func isExists(comp celast.ComprehensionExpr) bool {
	init := comp.AccuInit()
	if init.Kind() != celast.LiteralKind {
		return false
	}
	if b, ok := init.AsLiteral().(types.Bool); !ok || bool(b) {
		return false
	}
	if !isIdent(comp.Result(), comp.AccuVar()) {
		return false
	}
	step := comp.LoopStep()
	if step.Kind() != celast.CallKind || step.AsCall().FunctionName() != operators.LogicalOr {
		return false
	}
	return isIdent(step.AsCall().Args()[0], comp.AccuVar())
}

func isIdent(e celast.Expr, name string) bool {
	return e.Kind() == celast.IdentKind && e.AsIdent() == name
}

// configValue returns the value of config.X (or config["X"]) in params.
func configValue(e celast.Expr, params map[string]any) (any, bool) {
	var key string
	switch e.Kind() {
	case celast.SelectKind:
		s := e.AsSelect()
		if s.IsTestOnly() || !isIdent(s.Operand(), "config") {
			return nil, false
		}
		key = s.FieldName()
	case celast.CallKind:
		c := e.AsCall()
		if c.FunctionName() != operators.Index || len(c.Args()) != 2 || !isIdent(c.Args()[0], "config") {
			return nil, false
		}
		k, ok := stringLit(c.Args()[1])
		if !ok {
			return nil, false
		}
		key = k
	default:
		return nil, false
	}
	v, ok := params[key]
	return v, ok
}

// configStrings returns config.X as a list of strings, when it is one.
func configStrings(e celast.Expr, params map[string]any) ([]string, bool) {
	v, ok := configValue(e, params)
	if !ok {
		return nil, false
	}
	return configStringsOf(v)
}

// needList returns v as a []any when it is a list ([]any or []string), nil
// otherwise.
func needList(v any) []any {
	switch x := v.(type) {
	case []any:
		if x == nil {
			return []any{}
		}
		return x
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	}
	return nil
}

func setOf(ss []string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// fieldLiterals reads v.field == "x" (either way round) and v.field in
// ["x", ...] as the literals the field must equal; nil for anything else.
func fieldLiterals(fn string, args []celast.Expr, v, field string) []string {
	switch fn {
	case operators.Equals:
		for i := 0; i < 2; i++ {
			if isFieldOf(args[i], v, field) {
				if s, ok := stringLit(args[1-i]); ok {
					return []string{s}
				}
			}
		}
	case operators.In:
		if isFieldOf(args[0], v, field) {
			if ls, ok := literalStrings(args[1]); ok && len(ls) > 0 {
				return ls
			}
		}
	}
	return nil
}

// isEventEffects reports whether e is event.effects.
func isEventEffects(e celast.Expr) bool {
	if e.Kind() != celast.SelectKind {
		return false
	}
	s := e.AsSelect()
	op := s.Operand()
	return s.FieldName() == "effects" && !s.IsTestOnly() && op.Kind() == celast.IdentKind && op.AsIdent() == "event"
}

// isFieldOf reports whether e is v.field.
func isFieldOf(e celast.Expr, v, field string) bool {
	if e.Kind() != celast.SelectKind {
		return false
	}
	s := e.AsSelect()
	return s.FieldName() == field && !s.IsTestOnly() && s.Operand().Kind() == celast.IdentKind && s.Operand().AsIdent() == v
}

func stringLit(e celast.Expr) (string, bool) {
	if e.Kind() != celast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}
