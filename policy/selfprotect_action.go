package policy

import (
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/ahp-go/ahp/effects"
)

// The self_protection pack reads event.effects: the effects package reads
// the action once (shell through a real parser, interpreter code, file and
// web tools) and every pack judges that reading. This file turns the
// effects into what the pack compares with its guard: the paths they
// touch, the programs they run, the addresses they call and the processes
// they signal.

// Bounds on the work the self_protection functions do for one event, on top
// of the effects package's own limits (effects.MaxInput, MaxDepth,
// MaxDecodeRounds, MaxEffects, MaxGlobMatches, MaxFuncCalls,
// MaxScriptBytes). An event that reaches one is blocked by the pack's limit
// rules, never judged on part of what it does; the pack's YAML repeats
// these numbers in its reasons (TestSelfProtectionLimitReasons keeps the
// two in step).
const (
	spMaxRealPaths = 1024 // paths resolved through the file system
	spMaxPathDepth = 64   // names in one path resolved through the file system
	spMaxPatterns  = 64   // pkill/killall/pgrep patterns judged
	spMaxAddrs     = 4096 // host:port candidates compared with the admin API
	spMaxFindWalk  = 4096 // entries of protected directories a filtered find -delete is compared with
)

// The limits an event can reach, as self_protection_limit names them: the
// effects package's (size, nesting, decoding, effects, expansion, other),
// a shell syntax error (nothing of that script is read), and the pack's
// own (paths, patterns, addresses).
const (
	limitSize      = "size"
	limitNesting   = "nesting"
	limitDecoding  = "decoding"
	limitEffects   = "effects"
	limitExpansion = "expansion"
	limitOther     = "other"
	limitSyntax    = "syntax"
	limitPaths     = "paths"
	limitPatterns  = "patterns"
	limitAddresses = "addresses"
)

// effectsLimit names the limit an effects Unknown with Limit set reached,
// by the reason the effects package gives (docs/effects.md lists them).
// A reason this table does not know is "other": still blocked.
func effectsLimit(reason string) string {
	switch {
	case strings.Contains(reason, "longer than"), strings.Contains(reason, "larger than"),
		strings.Contains(reason, "syntax nodes"):
		return limitSize
	case strings.Contains(reason, "nested"), strings.Contains(reason, "levels deep"),
		strings.Contains(reason, "recursive function"), strings.Contains(reason, "function calls"):
		return limitNesting
	case strings.Contains(reason, "encoded payloads"):
		return limitDecoding
	case strings.HasSuffix(reason, " effects"):
		return limitEffects
	case strings.Contains(reason, "matches more than"), strings.Contains(reason, "brace expansion"),
		strings.Contains(reason, "arguments"):
		return limitExpansion
	}
	return limitOther
}

// spCheck names one of the pack's checks; spAction remembers each result.
type spCheck int

const (
	spCheckFiles spCheck = iota
	spCheckHooks
	spCheckAdmin
	spCheckAPI
	spCheckStop
	spChecks
)

// spAction is one event as the self_protection rules read it.
type spAction struct {
	g    *guard
	acts []effects.Effect
	cwd  string // where relative effect paths start ("" when unknown)
	// raw are path arguments of a tool with ".." in them, joined to the
	// working directory but not cleaned (see toolContext).
	raw   []string
	paths []spPath // computed on first use
	done  bool
	real  int    // paths resolved so far
	limit string // the first limit reached ("" none)
	// results of the checks: 0 not run, 1 false, 2 true
	results [spChecks]int8
}

// maxKeptPaths bounds the path lists a pooled evaluation context keeps
// for the next evaluation (keep).
const maxKeptPaths = 64

// keep returns the path lists emptied for reuse, their elements cleared so
// that they hold nothing of this event; nil for lists grown past
// maxKeptPaths.
func (a *spAction) keep() (paths []spPath, raw []string) {
	if cap(a.paths) <= maxKeptPaths {
		clear(a.paths)
		paths = a.paths[:0]
	}
	if cap(a.raw) <= maxKeptPaths {
		clear(a.raw)
		raw = a.raw[:0]
	}
	return paths, raw
}

// reach records that the analysis reached a limit (the first one counts).
func (a *spAction) reach(limit string) {
	if a.limit == "" {
		a.limit = limit
	}
}

// check runs one of the pack's checks once per event.
func (a *spAction) check(c spCheck) bool {
	if r := a.results[c]; r != 0 {
		return r == 2
	}
	var hit bool
	switch c {
	case spCheckFiles:
		hit = a.touchesHarnessFiles()
	case spCheckHooks:
		hit = a.changesAgentHooks()
	case spCheckAdmin:
		hit = a.runsHarnessAdmin()
	case spCheckAPI:
		hit = a.callsAdminAPI()
	case spCheckStop:
		hit = a.stopsHarness()
	}
	a.results[c] = 1
	if hit {
		a.results[c] = 2
	}
	return hit
}

// limitReached returns the first limit of the analysis the event reached:
// an effects Unknown with Limit set (the effects package stopped reading)
// or a shell syntax error (the statements before it, which bash runs,
// are not read), else one of the pack's own bounds (each check is run,
// since each may reach one); "" when the whole event was read.
func (a *spAction) limitReached() string {
	for _, e := range a.acts {
		if e.Kind == effects.Unknown && e.Limit {
			return effectsLimit(e.Reason())
		}
		if e.Kind == effects.Unknown && strings.HasPrefix(e.Reason(), effects.ShellSyntaxError) {
			return limitSyntax
		}
	}
	for c := range spChecks {
		a.check(c)
	}
	return a.limit
}

// spPath is a path an effect touches, made absolute.
type spPath struct {
	abs  string
	real string // abs with symbolic links resolved; "" until looked up
	kind effects.Kind
	// destroy: the effect may delete, move or re-own the path and what it
	// holds, so a directory above a protected file counts.
	destroy bool
	// exec: the program a Run starts (running it is not touching it).
	exec bool
	// argv: a word of a Run's argv that names a path (a program the
	// effects package does not model, such as sqlite3 or base64, reads
	// or writes what it is given): only the path itself counts.
	argv  bool
	slash bool // an argv word with a "/" in it: looked up through links
	// raw is an argv word with a ".." name joined to the working directory
	// but not cleaned: the kernel takes ".." after a link from the link's
	// target, so it is resolved as written.
	raw  string
	glob bool
	// find: a recursive Delete or Read of what a find selects by name
	// only (find -name X -delete, find -name X -exec cat {} +): names are
	// its patterns, and only protected files whose names match count.
	find  bool
	names []string
	fold  bool // -iname: compare case-insensitively
	// fill: a recursive write into the path (tar -x -C dir, cp -r x/.
	// dir, rsync -a x/ dir, unzip -d dir), which may put any file in it.
	fill bool
}

// writes reports whether the path's effect changes it.
func (p spPath) writes() bool {
	switch p.kind {
	case effects.Write, effects.Create, effects.Delete, effects.Move, effects.Chmod, effects.Chown, effects.Download:
		return !p.argv
	}
	return false
}

// cwdKeys hold the working directory of a tool call.
var cwdKeys = keys("cwd", "workdir", "working_directory", "directory")

// fileKeys are the argument names of file tools that hold paths.
var fileKeys = keys("absolute_path", "path", "file_path", "filepath", "file", "filename", "notebook_path",
	"old_path", "new_path", "source", "destination", "paths", "files")

// readAction returns the event as the pack reads it, once per evaluation:
// the five checks share it (kept in the payload object, which lives as long
// as the evaluation). The effects are the evaluation's event.effects.
func readAction(payload ref.Val, g *guard) *spAction {
	o, _ := payload.(*jsonObject)
	if o != nil && o.sp != nil && o.sp.g == g {
		return o.sp
	}
	var a *spAction
	if o != nil && o.ev != nil && !o.ev.spUsed {
		// The evaluation's own: its path lists keep their room from the
		// evaluations before.
		o.ev.spUsed = true
		a = &o.ev.sp
		*a = spAction{g: g, cwd: g.cwd, paths: a.paths[:0], raw: a.raw[:0]}
	} else {
		a = &spAction{g: g, cwd: g.cwd}
	}
	if o != nil {
		if o.ev != nil {
			a.acts = o.ev.effects()
		} else {
			a.acts = payloadEffects(o, effects.Context{})
		}
		o.sp = a
	}
	a.toolContext(payload)
	return a
}

// toolContext reads the working directory of a tool call (the hooks'
// cwd, then a tool's own directory argument, which may be relative to it:
// relative effect paths start there) and keeps the path arguments that
// have a ".." name, joined to the call's working directory without cleaning: the
// kernel takes ".." after a symbolic link from the link's target, where
// the effects package, which reads tool paths lexically, takes it from
// the link's directory. Each is resolved through the file system and
// compared with the protected paths.
func (a *spAction) toolContext(payload ref.Val) {
	hs, n := holders(payload)
	var vals [16]ref.Val
	for _, m := range hs[:n] {
		for _, v := range findKeys(m, cwdKeys, cwdKeyIndex, vals[:0]) {
			if s, ok := v.(types.String); ok && s != "" {
				a.cwd = absAgainst(expandHomeWith(string(s), a.g.home), a.cwd)
			}
		}
	}
	for i, m := range hs[:n] {
		if i == 0 && n > 1 {
			continue // top-level keys describe the call, not its paths
		}
		for _, v := range findKeys(m, fileKeys, fileKeyIndex, vals[:0]) {
			for _, s := range stringsOf(v) {
				if r := rawJoin(expandHomeWith(strings.TrimSpace(s), a.g.home), a.cwd); r != "" {
					a.raw = append(a.raw, r)
				}
			}
		}
	}
}

// cwdKeyIndex and fileKeyIndex give the position of each of cwdKeys and
// fileKeys (findKeys).
var cwdKeyIndex, fileKeyIndex = keyIndex(cwdKeys), keyIndex(fileKeys)

func keyIndex(ks []ref.Val) map[string]int {
	m := make(map[string]int, len(ks))
	for i, k := range ks {
		m[string(k.(types.String))] = i
	}
	return m
}

// findKeys appends to dst the values m.Find gives for each of ks that m
// holds, in the order of ks. ks are lower case ASCII names (no letter case
// to fold) and index gives their positions; at most 16 of them. A decoded
// JSON object whose member names have nothing to fold either is read in
// one pass over its members (the first member of a name is the one Find
// gives); any other map is asked key by key.
func findKeys(m traits.Mapper, ks []ref.Val, index map[string]int, dst []ref.Val) []ref.Val {
	if o, ok := m.(*jsonObject); ok && len(ks) <= 16 && o.scan() == nil && !o.folds {
		var found [16]ref.Val
		for i := range o.members {
			if k, ok := index[o.members[i].key]; ok && found[k] == nil {
				found[k] = o.value(i)
			}
		}
		for _, v := range found[:len(ks)] {
			if v != nil {
				dst = append(dst, v)
			}
		}
		return dst
	}
	for _, k := range ks {
		if v, ok := m.Find(k); ok {
			dst = append(dst, v)
		}
	}
	return dst
}

// rawJoin joins p to dir without cleaning, when p has a ".." name (else
// "").
func rawJoin(p, dir string) string {
	if !hasDotDot(p) || strings.Contains(p, "://") {
		return ""
	}
	if !strings.HasPrefix(p, "/") {
		if dir == "" {
			return ""
		}
		p = dir + "/" + p
	}
	return p
}

// abs makes an effect's path absolute: "~" with the harness's home (the
// effects package leaves it in code it cannot place), a path under
// UnknownHome (the home of an event that names none) as one under the
// harness's home, since the agent may be the harness's user, and a
// relative path against the working directory (the event's, else the
// harness's).
func (a *spAction) abs(p string) string {
	if p == "" {
		return ""
	}
	return absAgainst(expandHomeWith(fromUnknownHome(p), a.g.home), a.cwd)
}

// allPaths returns every path the effects touch, each with its real path.
// More than spMaxRealPaths lookups, or a path deeper than spMaxPathDepth
// names, reaches the paths limit.
//
// A long script names the same few paths many times, and most of its
// words cannot name a harness file; the work is kept to what can change
// the judgement, with the same judgement and the same count of lookups as
// reading every word (pathReader says how).
func (a *spAction) allPaths() []spPath {
	if a.done {
		return a.paths
	}
	a.done = true
	var r pathReader
	r.init(a)
	for i, e := range a.acts {
		switch e.Kind {
		case effects.Read:
			r.add(e.Path, e.Kind, false, i, e.Recursive)
		case effects.Write, effects.Create:
			if e.Recursive {
				r.put(spPathKey{p: e.Path, kind: e.Kind, fill: true}, -1)
			} else {
				r.add(e.Path, e.Kind, false, i, false)
			}
		case effects.Delete:
			r.add(e.Path, e.Kind, true, i, e.Recursive)
		case effects.Chmod, effects.Chown:
			r.add(e.Path, e.Kind, true, i, false)
		case effects.Move:
			r.add(e.Path, e.Kind, true, i, false)
			r.add(e.Dest, effects.Write, false, i, false)
		case effects.Download:
			r.add(e.Path, effects.Write, false, i, false)
		case effects.Send:
			if e.Source() != "" && e.Source() != "stdin" && e.Source() != "output" && e.Source() != "data" {
				r.add(e.Source(), effects.Read, false, i, false)
			}
		case effects.Run:
			if e.Path != "" {
				r.put(spPathKey{p: e.Path, kind: effects.Run, exec: true}, -1)
			}
			for _, w := range argvOperands(e.Argv) {
				cs, n := wordPaths(w)
				for _, c := range cs[:n] {
					if !r.bareMiss(c) {
						r.put(spPathKey{p: c, kind: effects.Read, argv: true}, -1)
					}
				}
			}
		}
	}
	for _, raw := range a.raw {
		if a.real >= spMaxRealPaths || strings.Count(raw, "/") > spMaxPathDepth {
			a.reach(limitPaths)
			continue
		}
		a.real++
		real := r.realRaw(raw)
		a.paths = append(a.paths, spPath{abs: real, real: real, kind: effects.Read, argv: true})
	}
	return a.paths
}

// spPathKey is what an effect asks allPaths to add: the path as the effect
// gives it and how the effect touches it. Equal keys make equal spPaths
// (a find's name filter aside: those are never merged).
type spPathKey struct {
	p                         string
	kind                      effects.Kind
	destroy, exec, argv, fill bool
}

// pathReader is the state of one allPaths: what was added, the real paths
// looked up, and what a bare word must be to touch a protected path.
//
// Three shortcuts, none of which changes what the checks see or the count
// of lookups the paths limit bounds:
//   - a key added before is not added again (its spPath would be equal,
//     and the checks ask whether any path hits), but it is counted again
//     as the first one was: a non-raw path is looked up once per absolute
//     path (as before, by seen), a raw one (an argv word with "..") once
//     per occurrence, and each count still reaches the limit at the same
//     place;
//   - the real path of a raw word is looked up on the file system once per
//     evaluation, however often it is counted;
//   - an argv word without "/" is never resolved through links (it is
//     compared as cwd/word, lexically) nor counted, and is not a write, so
//     only touchesHarnessFiles reads it: it is kept only when it can hit
//     (bareMiss).
type pathReader struct {
	a     *spAction
	added smallMap[spPathKey, int] // index in a.paths, -1 when not absolute
	// argvAdded is added for argv words (kind Read, argv set), by word.
	argvAdded smallMap[string, int]
	seen      smallMap[string, string] // absolute path -> real path (non-raw lookups)
	rawReal   smallMap[string, string] // raw word -> real path
	// prefixes holds what resolvePrefix found for each prefix looked up:
	// at most the 128 prefixes resolveLongestPrefix tries for each of the
	// spMaxRealPaths lookups (and the parents of those of at most
	// spMaxPathDepth names, which are among them).
	prefixes smallMap[string, resolved]
	// The bare-word test, when a.cwd is absolute, clean and no pattern
	// (bareOK): a word w with no "/" (and none of the spellings abs
	// expands) is a.cwd + "/" + w, which is a protected path or inside
	// one exactly when a.cwd is (cwdUnder) or a.cwd + "/" + w is itself
	// protected (w in names[:nNames]; with more such names than names
	// holds, there is no shortcut).
	bareOK   bool
	cwdUnder bool
	names    [8]string
	nNames   int
}

// init readies r for reading a's paths.
func (r *pathReader) init(a *spAction) {
	r.a = a
	if filepath.Separator != '/' || !filepath.IsAbs(a.cwd) || a.cwd != filepath.Clean(a.cwd) ||
		strings.ContainsAny(a.cwd, "*?[") {
		return // every path under a cwd with a glob character is a pattern
	}
	r.bareOK = true
	var buf [16]string
	cwd := appendComponents(buf[:0], a.cwd)
	for _, prots := range [2][][]string{a.g.paths, a.g.exes} {
		for _, prot := range prots {
			if under, _ := relate(cwd, prot, false); under {
				r.cwdUnder = true
			}
			if len(prot) == len(cwd)+1 && slices.Equal(prot[:len(cwd)], cwd) {
				if r.nNames == len(r.names) {
					r.bareOK = false // more names than kept: no shortcut
					return
				}
				r.names[r.nNames] = prot[len(cwd)]
				r.nNames++
			}
		}
	}
}

// bareMiss reports whether the argv word c surely touches no protected
// path: a relative name without "/" that abs does not expand ("~",
// "$HOME"), neither "." nor "..", no glob, when the working directory is
// known and neither it nor cwd/c is protected. false means "read it as
// usual" (touchesHarnessFiles then judges it).
func (r *pathReader) bareMiss(c string) bool {
	if !r.bareOK || r.cwdUnder || c == "" || c == "." || c == ".." || c[0] == '~' || c[0] == '$' {
		return false
	}
	for i := 0; i < len(c); i++ {
		switch c[i] {
		case '/', '*', '?', '[':
			return false
		}
	}
	return !slices.Contains(r.names[:r.nNames], c)
}

// add adds the path of effect i; with recursive, a Read or Delete of what
// a find selects by name keeps the find's name patterns.
func (r *pathReader) add(p string, kind effects.Kind, destroy bool, i int, recursive bool) {
	find := -1
	if recursive {
		find = i
	}
	r.put(spPathKey{p: p, kind: kind, destroy: destroy}, find)
}

// put adds the path of k (find: the effect whose find filter applies, or
// -1) and looks it up through the file system as resolve says.
func (r *pathReader) put(k spPathKey, find int) {
	a := r.a
	if find < 0 {
		var i int
		var ok bool
		if k.argv {
			i, ok = r.argvAdded.get(k.p)
		} else {
			i, ok = r.added.get(k)
		}
		if ok {
			if i >= 0 {
				r.recount(&a.paths[i])
			}
			return
		}
	}
	keep := func(i int) {
		switch {
		case find >= 0:
		case k.argv:
			r.argvAdded.put(k.p, i)
		default:
			r.added.put(k, i)
		}
	}
	abs := a.abs(k.p)
	if !filepath.IsAbs(abs) {
		keep(-1)
		return
	}
	p := spPath{abs: abs, kind: k.kind, destroy: k.destroy, exec: k.exec, fill: k.fill, glob: strings.ContainsAny(abs, "*?[")}
	if k.argv {
		p.argv, p.slash = true, strings.Contains(k.p, "/")
		p.raw = rawJoin(expandHomeWith(k.p, a.g.home), a.cwd)
	}
	if find >= 0 {
		p.names, p.fold, p.find = a.findFilterOf(find)
	}
	r.resolve(&p)
	keep(len(a.paths))
	a.paths = append(a.paths, p)
}

// recount counts the lookup of p, added before, once more, as resolve
// would: a path that is not looked up, or was looked up by its absolute
// form (seen), is not counted again, and one that was not looked up
// because the limit was reached has reached it already; a raw word is
// counted at each occurrence (its real path is the one found the first
// time).
func (r *pathReader) recount(p *spPath) {
	a := r.a
	if p.raw == "" || p.glob || p.argv && !p.slash {
		return
	}
	if a.real >= spMaxRealPaths || strings.Count(p.abs, "/") > spMaxPathDepth {
		a.reach(limitPaths)
		return
	}
	a.real++
}

// resolve sets p.real and counts the lookup against spMaxRealPaths: a
// glob and a bare argv word are not looked up; a path already looked up
// (by its absolute form) is not counted again, a raw word always is.
func (r *pathReader) resolve(p *spPath) {
	a := r.a
	p.real = p.abs
	if p.glob || p.argv && !p.slash {
		return // a bare name in an argv: resolved only when it has a "/", as before
	}
	if real, ok := r.seen.get(p.abs); ok && p.raw == "" {
		p.real = real
		return
	}
	if a.real >= spMaxRealPaths || strings.Count(p.abs, "/") > spMaxPathDepth {
		a.reach(limitPaths)
		return
	}
	a.real++
	if p.raw != "" {
		p.real = r.realRaw(p.raw)
		return
	}
	p.real = r.realPath(p.abs)
	r.seen.put(p.abs, p.real)
}

// resolved is what resolvePrefix found for a prefix.
type resolved struct {
	real string
	ok   bool
}

// realPath is the package's realPath with the prefixes of the paths of
// one evaluation resolved once each: a script's paths share their
// directories, and each directory's links are looked up once.
func (r *pathReader) realPath(p string) string {
	return resolveLongestPrefix(p, r.resolvePrefix)
}

// resolvePrefix is what realPath's resolve gives for prefix (the path with
// its links resolved, when it exists), remembered for the evaluation. A
// clean path that is not a link itself is its parent's real path and its
// own name (one Lstat, the parent's resolution shared with its other
// names), and nothing is in a parent that does not resolve; a link, or a
// prefix with "." or ".." names (taken as the kernel takes them, after a
// link from its target), is resolved whole, as realPath does.
func (r *pathReader) resolvePrefix(prefix string) (string, bool) {
	if prefix == "/" {
		return "/", true // the root is never a link
	}
	if v, ok := r.prefixes.get(prefix); ok {
		return v.real, v.ok
	}
	var v resolved
	if dir, base, ok := splitClean(prefix); ok {
		// A name in a directory that does not exist (or is not one, or
		// cannot be searched) does not exist either: Stat fails on it as
		// it fails on the directory. Else Stat fails wherever Lstat
		// does (Stat also follows a link at the end).
		if d, ok := r.resolvePrefix(dir); ok {
			exists, link := lstatLink(prefix)
			switch {
			case !exists:
			case !link:
				v = resolved{joinResolved(d, base), true}
			default:
				v.real, v.ok = resolveWhole(prefix)
			}
		}
	} else {
		v.real, v.ok = resolveWhole(prefix)
	}
	r.prefixes.put(prefix, v)
	return v.real, v.ok
}

// splitClean splits a clean absolute path other than "/" (no empty, "."
// or ".." name, no trailing "/") of at most spMaxPathDepth names into its
// directory and its last name; ok is false for any other path (which
// resolvePrefix resolves whole: its parents are not looked up one by one,
// so that their number stays bounded).
func splitClean(p string) (dir, base string, ok bool) {
	if filepath.Separator != '/' || len(p) < 2 || p[0] != '/' || p[len(p)-1] == '/' ||
		strings.Count(p, "/") > spMaxPathDepth {
		return "", "", false
	}
	for rest := p[1:]; ; {
		name := rest
		i := strings.IndexByte(rest, '/')
		if i >= 0 {
			name = rest[:i]
		}
		if name == "" || name == "." || name == ".." {
			return "", "", false
		}
		if i < 0 {
			break
		}
		rest = rest[i+1:]
	}
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/", p[1:], true
	}
	return p[:i], p[i+1:], true
}

// realRaw is realPath of a raw word, looked up once per evaluation.
func (r *pathReader) realRaw(raw string) string {
	if real, ok := r.rawReal.get(raw); ok {
		return real
	}
	real := r.realPath(raw)
	r.rawReal.put(raw, real)
	return real
}

// runOf returns the argv of the Run effect of program prog that comes
// last before effect i (the Run an effect belongs to comes before it),
// nil when there is none.
func (a *spAction) runOf(i int, prog string) []string {
	for j := i - 1; j >= 0; j-- {
		if e := a.acts[j]; e.Kind == effects.Run && e.Program == prog {
			return e.Argv
		}
	}
	return nil
}

// findFilterOf returns the -name/-iname patterns of the find that selects
// what the recursive effect i acts on, when a find selects it by names
// only: effect i is find's own -delete (its Run is that find), or comes
// from the program a find runs with -exec/-execdir/-ok on the files it
// finds (its Run has the "{}" find substitutes, and the Run just before
// is that find, naming the program after -exec). Otherwise ok is false
// and the effect is one on the whole tree.
func (a *spAction) findFilterOf(i int) (names []string, fold, ok bool) {
	own := -1
	for j := i - 1; j >= 0; j-- {
		if a.acts[j].Kind == effects.Run {
			own = j
			break
		}
	}
	if own < 0 {
		return nil, false, false
	}
	r := a.acts[own]
	if r.Program == "find" && a.acts[i].Program == "find" {
		return findNameFilter(r.Argv)
	}
	if !slices.Contains(r.Argv, "{}") || len(r.Argv) == 0 {
		return nil, false, false
	}
	for j := own - 1; j >= 0; j-- {
		f := a.acts[j]
		if f.Kind != effects.Run {
			continue
		}
		if f.Program != "find" || !findExecs(f.Argv, r.Argv[0]) {
			return nil, false, false
		}
		return findNameFilter(f.Argv)
	}
	return nil, false, false
}

// findExecs reports whether a find argv runs prog with -exec, -execdir,
// -ok or -okdir.
func findExecs(argv []string, prog string) bool {
	for i, w := range argv {
		if (w == "-exec" || w == "-execdir" || w == "-ok" || w == "-okdir") && i+1 < len(argv) && baseName(argv[i+1]) == baseName(prog) {
			return true
		}
	}
	return false
}

// argvOperands returns the words of a Run's argv after the program.
func argvOperands(argv []string) []string {
	if len(argv) < 2 {
		return nil
	}
	return argv[1:]
}

// wordPaths returns the path candidates in an argv word (out[:n]): the
// word, and the value of an option or assignment (--file=x, of=x, VAR=x).
func wordPaths(w string) (out [2]string, n int) {
	if w == "" {
		return out, 0
	}
	// One pass: no "://" nor newline anywhere, and the first "=".
	eq := -1
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case '\n':
			return out, 0
		case ':':
			if strings.HasPrefix(w[i+1:], "//") {
				return out, 0
			}
		case '=':
			if eq < 0 {
				eq = i
			}
		}
	}
	if w[0] != '-' {
		out[n] = w
		n++
	}
	if eq >= 0 && eq+1 < len(w) {
		out[n] = w[eq+1:]
		n++
	}
	return out, n
}

// findTests are the tests of find that select files by something other
// than their path or name, with the number of arguments each takes: a
// find that has only these besides -name/-iname, joined by "and", deletes
// only files whose names match.
var findTests = map[string]int{
	"-type": 1, "-xtype": 1, "-maxdepth": 1, "-mindepth": 1, "-mtime": 1, "-mmin": 1, "-atime": 1,
	"-amin": 1, "-ctime": 1, "-cmin": 1, "-newer": 1, "-size": 1, "-user": 1, "-group": 1, "-perm": 1,
	"-uid": 1, "-gid": 1, "-links": 1, "-empty": 0, "-readable": 0, "-writable": 0, "-executable": 0,
	"-depth": 0, "-xdev": 0, "-mount": 0, "-print": 0, "-print0": 0, "-delete": 0, "-a": 0, "-and": 0,
	"-nouser": 0, "-nogroup": 0, "-true": 0, "-ignore_readdir_race": 0, "-noleaf": 0,
}

// findNameFilter reads a find argv (a Run effect's) whose expression is a
// conjunction of -name/-iname patterns and tests from findTests, and
// returns the patterns; ok is false for any other expression (-o, !,
// -not, parentheses, -path, -regex, -prune...), or without a name
// pattern: then the effect counts as one on the whole tree. -exec and its
// kind only narrow what is found, and are skipped.
func findNameFilter(argv []string) (names []string, fold bool, ok bool) {
	if len(argv) == 0 {
		return nil, false, false
	}
	i := 1
	for i < len(argv) && (argv[i] == "-H" || argv[i] == "-L" || argv[i] == "-P") {
		i++
	}
	for i < len(argv) && !strings.HasPrefix(argv[i], "-") && argv[i] != "!" && argv[i] != "(" {
		i++ // the starting points
	}
	for ; i < len(argv); i++ {
		w := argv[i]
		switch {
		case (w == "-name" || w == "-iname") && i+1 < len(argv):
			fold = fold || w == "-iname"
			names = append(names, argv[i+1])
			i++
		case w == "-exec" || w == "-execdir" || w == "-ok" || w == "-okdir":
			// The command run on each file found: its own effects are
			// judged on their own; as a test it only narrows the match.
			for i++; i < len(argv) && argv[i] != ";" && argv[i] != "+"; i++ {
			}
			if i >= len(argv) {
				return nil, false, false
			}
		default:
			n, known := findTests[w]
			if !known || i+n >= len(argv) {
				return nil, false, false
			}
			i += n
		}
	}
	return names, fold, len(names) > 0
}

// findSelects reports whether a find filtered by names (p.names) from the
// root p.abs selects the protected path prot or a file in it:
// prot's own name or, for a directory, the name of anything it holds
// (read from the file system, at most spMaxFindWalk entries; more, or a
// directory that cannot be read, counts as a match).
func (a *spAction) findSelects(p spPath, prot string) bool {
	match := p.nameMatches
	if match(path.Base(prot)) {
		return true
	}
	seen, hit := 0, false
	err := filepath.WalkDir(prot, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			if q != prot {
				hit = true
			}
			return filepath.SkipAll
		}
		if seen++; seen > spMaxFindWalk {
			hit = true
			return filepath.SkipAll
		}
		if q != prot && match(d.Name()) {
			hit = true
			return filepath.SkipAll
		}
		return nil
	})
	_ = err // a protected path that does not exist holds nothing
	return hit
}

// nameMatches reports whether a find filtered by p.names selects a file
// named name (a pattern that does not parse counts as a match).
func (p *spPath) nameMatches(name string) bool {
	for _, pat := range p.names {
		if p.fold {
			pat, name = strings.ToLower(pat), strings.ToLower(name)
		}
		if ok, err := path.Match(pat, name); err != nil || ok {
			return true
		}
	}
	return false
}

// namesMatchAny reports whether any of names is one p's find selects.
func (p *spPath) namesMatchAny(names []string) bool {
	for _, n := range names {
		if p.nameMatches(n) {
			return true
		}
	}
	return false
}

// touchesHarnessFiles: an effect touches a protected path or a path inside
// one, or (deleting, moving, re-owning) a directory above one.
func (a *spAction) touchesHarnessFiles() bool {
	if len(a.g.paths) == 0 && len(a.g.exes) == 0 {
		return false
	}
	for _, p := range a.allPaths() {
		if a.hitsProtected(p, p.abs) || p.real != p.abs && a.hitsProtected(p, p.real) {
			return true
		}
	}
	return false
}

func (a *spAction) hitsProtected(p spPath, abs string) bool {
	var buf [16]string // most paths have fewer names: no allocation
	pc := appendComponents(buf[:0], abs)
	if p.find {
		// A recursive effect on what a find selects by name: a protected
		// path under its root counts when its name, the name of a
		// directory between the root and it, or the name of anything it
		// holds matches (each file found goes with everything under it).
		// "root/*" is how the effects reader writes a root the find does
		// not select itself.
		root := pc
		if n := len(root); p.glob && n > 0 && root[n-1] == "*" {
			root = root[:n-1]
		}
		for _, prot := range append(append([][]string(nil), a.g.paths...), a.g.exes...) {
			under, above := relate(root, prot, p.glob)
			if under || above && (p.namesMatchAny(prot[len(root):]) || a.findSelects(p, "/"+strings.Join(prot, "/"))) {
				return true
			}
		}
		return false
	}
	if len(pc) == 0 && !p.glob || len(pc) == 1 && pc[0] == "*" && p.glob {
		return false // all of / ("/*": what under it): the destructive_shell pack's business
	}
	for _, prot := range a.g.paths {
		under, above := relate(pc, prot, p.glob)
		if under {
			return true
		}
		if above && p.destroy {
			return true
		}
	}
	for _, prot := range a.g.exes {
		under, above := relate(pc, prot, p.glob)
		if under && !p.exec {
			return true
		}
		if above && p.destroy {
			return true
		}
	}
	return false
}

// relate compares path components c with a protected path's: under is
// true when c is the protected path or inside it, above when c is a
// directory that holds it. With glob, the components of c are patterns.
func relate(c, prot []string, glob bool) (under, above bool) {
	k := min(len(c), len(prot))
	for i := range k {
		if glob {
			if ok, err := path.Match(c[i], prot[i]); err != nil || !ok {
				return false, false
			}
		} else if c[i] != prot[i] {
			return false, false
		}
	}
	return len(c) >= len(prot), len(c) < len(prot)
}

// changesAgentHooks: an effect writes, creates, moves, deletes or re-owns
// a supported agent's hook settings (or their directory).
func (a *spAction) changesAgentHooks() bool {
	for _, p := range a.allPaths() {
		if !p.writes() {
			continue
		}
		// A recursive write into an agent's settings directory may replace
		// its hook settings as surely as a write of the file.
		whole := p.destroy || p.fill
		if isHookSettings(p.abs, whole) || p.real != p.abs && isHookSettings(p.real, whole) {
			return true
		}
	}
	return false
}

// agentDirs are the per-user and per-project settings directories of the
// supported agents.
var agentDirs = map[string]bool{".claude": true, ".codex": true, ".gemini": true}

// isHookSettings reports whether p is where a supported agent reads its
// hooks: .claude/settings*.json, .codex/config.toml or hooks.json,
// .gemini/settings.json, the managed copies under /etc, and hook scripts
// kept in those directories. With destroys, the directories themselves
// count too.
func isHookSettings(p string, destroys bool) bool {
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	parent := path.Base(dir)
	if destroys && agentDirs[base] {
		return true
	}
	switch parent {
	case ".claude":
		if strings.HasPrefix(base, "settings") && strings.HasSuffix(base, ".json") {
			return true
		}
	case ".codex":
		if base == "config.toml" || base == "hooks.json" {
			return true
		}
	case ".gemini":
		if base == "settings.json" {
			return true
		}
	case "claude-code", "gemini-cli", "codex":
		if strings.HasPrefix(dir, "/etc/") || strings.HasPrefix(dir, "/Library/") {
			return true // managed settings of the machine
		}
	case "hooks":
		if agentDirs[path.Base(path.Dir(dir))] {
			return true
		}
	}
	for d := dir; d != "/" && d != "." && d != ""; d = path.Dir(d) {
		if path.Base(d) == "hooks" && agentDirs[path.Base(path.Dir(d))] {
			return true
		}
	}
	return false
}
