// Package admincmd recognises, in the words of a command, a run of one of
// ahp's harness-administration subcommands: the ones that answer
// approvals, run or check a harness, install or remove hooks, or open the
// harness's data directory and admin token (approvals, serve, doctor,
// status, audit, memory, runs, replay, hook install). It reads the words
// as cobra does (global flags and their values before the subcommand) and
// whatever the program is called: ahp, ahp-hook or the harness's own
// executable name by name, and any other program (a renamed copy, go run
// of a package) by the shape of its arguments. It is pure and has no state.
package admincmd

import (
	"strings"
)

// Subcommands lists every top-level subcommand of ahp with whether it
// administers the harness. cmd/ahp tests that every subcommand it
// registers is listed here, so that a new one is classified on purpose.
var Subcommands = map[string]bool{
	"approvals": true, // answers approvals with the admin token
	"serve":     true, // runs a harness
	"doctor":    true, // reads the harness's token and settings
	"status":    true, // reads the admin token
	"audit":     true, // reads and redacts the audit records
	"memory":    true, // changes what agents are told
	"runs":      true, // reads the audit records
	"replay":    true, // reads the audit records
	"hook":      true, // install and uninstall change supervision; see hookAgents
	// explain loads the harness's configuration and policy files (which
	// the agent may not read) and lets a caller try actions against the
	// live policy with no audit record: a human's tool.
	"explain": true,
	// Not administrative: they talk to a harness as an agent does, or
	// only read files the agent names.
	"version":     false,
	"check":       false,
	"test":        false,
	"send":        false,
	"descriptor":  false,
	"conformance": false,
	"mcp-proxy":   false,
	"health":      false, // GET /healthz or /readyz of the admin API, no token
	"help":        false,
	"completion":  false,
}

// hookAgents are the arguments of ahp hook that answer one hook call (what
// the installed hooks run); every other ahp hook subcommand (install,
// uninstall, any later one) changes supervision.
var hookAgents = map[string]bool{"claude-code": true, "codex": true, "gemini": true}

// shapes are the argument shapes recognised whatever the program is called:
// a subcommand with one of the sub-subcommands, or (for "" keys) with one
// of ahp's own flags somewhere after it.
var shapes = map[string][]string{
	"approvals": {"list", "show", "approve", "deny"},
	"hook":      {"install", "uninstall"},
	"audit":     {"query", "tail", "export", "redact", "shadow-report"},
	"memory":    {"add", "list", "delete"},
	"runs":      {"list", "show"},
}

// flagShapes are subcommands recognised in any program when one of ahp's
// distinctive flags follows them.
var flagShapes = map[string]bool{"serve": true, "doctor": true, "status": true, "replay": true}

var distinctFlags = []string{"--data-dir", "--admin", "--token", "--policy", "--store", "--descriptor", "--credentials"}

// Match says which administrative subcommand a command runs.
type Match struct {
	// Program is the word that names the program (as written).
	Program string
	// Subcommand is the subcommand, with its own subcommand when it
	// matters ("approvals approve", "hook install", "serve").
	Subcommand string
}

// Find looks for an administrative ahp subcommand in the words of one
// simple command (quotes removed; words[0] the command word, wrappers such
// as sudo or env included or not). names are the program names known to
// be ahp besides ahp and ahp-hook themselves (compared by base name,
// case-insensitively, .exe removed). Every
// word is tried as the program: a known name anywhere, any word when the
// arguments after it have an ahp-only shape, the package of go run, and
// the command line of a stdio: address (ahp send --connect 'stdio:ahp
// serve').
func Find(words []string, names []string) (Match, bool) {
	// The names' base names are taken once here, not once per word.
	var buf [8]string // room for the usual few names without an allocation
	norm := append(buf[:0], "ahp", "ahp-hook")
	for _, n := range names {
		norm = append(norm, trimExe(baseName(n)))
	}
	return find(words, norm, 0)
}

// find is Find with names already reduced to base names without .exe.
func find(words []string, names []string, depth int) (Match, bool) {
	if depth > 2 {
		return Match{}, false
	}
	var nextBuf [18]int
	var boolBuf [34]bool
	r := newReader(words, nextBuf[:], boolBuf[:])
	for i, w := range words {
		if isBaseName(w, names) {
			if sub, ok := r.classify(i+1, true); ok {
				return Match{Program: w, Subcommand: sub}, true
			}
		} else if sub, ok := r.classify(i+1, false); ok {
			return Match{Program: w, Subcommand: sub}, true
		}
		if baseName(w) == "go" && i+1 < len(words) && words[i+1] == "run" {
			if pkg, after, ok := goRunPackage(words[i+2:]); ok {
				strong := isBaseName(pkg, names) || strings.HasSuffix(strings.TrimRight(pkg, "/"), "cmd/ahp") || strings.Contains(pkg, "ahp-go/ahp")
				ar := newReader(after, nil, nil)
				if sub, ok := ar.classify(0, strong); ok {
					return Match{Program: pkg, Subcommand: sub}, true
				}
			}
		}
		if cmd, ok := strings.CutPrefix(w, "stdio:"); ok {
			if m, ok := find(strings.Fields(cmd), names, depth+1); ok {
				return m, true
			}
		}
	}
	return Match{}, false
}

// reader holds what classify needs about every position of a command's
// words, computed in one pass from the end so that trying every word as
// the program stays linear in the number of words.
type reader struct {
	words []string
	next  []int  // next[i]: index of the subcommand read from i on (len(words): none)
	flag  []bool // flag[i]: one of ahp's distinctive flags at i or after
	agent []bool // agent[i]: an agent name (claude-code, codex, gemini) at i or after
}

// newReader reads words. Its tables are made in nextBuf and boolBuf when
// they have room (arrays of the caller's: a command of a few words costs
// no allocation), else allocated.
func newReader(words []string, nextBuf []int, boolBuf []bool) reader {
	n := len(words)
	var bools []bool
	if len(boolBuf) >= 2*(n+1) {
		bools = boolBuf[:2*(n+1)]
		clear(bools)
	} else {
		bools = make([]bool, 2*(n+1))
	}
	next := nextBuf
	if len(next) >= n+2 {
		next = next[:n+2]
	} else {
		next = make([]int, n+2)
	}
	r := reader{words: words, next: next, flag: bools[: n+1 : n+1], agent: bools[n+1:]}
	r.next[n], r.next[n+1] = n, n
	for i := n - 1; i >= 0; i-- {
		w := words[i]
		r.flag[i] = r.flag[i+1] || isDistinctFlag(w)
		r.agent[i] = r.agent[i+1] || hookAgents[w]
		switch {
		case w == "--":
			r.next[i] = min(i+1, n)
		case strings.HasPrefix(w, "-") && len(w) > 1:
			// As cobra does, a flag written without = may take the next
			// word as its value; the next word is read as the subcommand
			// anyway when it is one of ahp's subcommand names (the
			// reading that lets the command through the fewest ways).
			r.next[i] = r.next[i+1]
			if !strings.Contains(w, "=") && i+1 < n {
				v := words[i+1]
				if _, sub := Subcommands[v]; !sub && !isSubSub(v) && !strings.HasPrefix(v, "-") {
					r.next[i] = r.next[i+2]
				}
			}
		default:
			r.next[i] = i
		}
	}
	return r
}

// at returns the subcommand read from position i on and its index.
func (r *reader) at(i int) (string, int) {
	if i > len(r.words) {
		return "", len(r.words)
	}
	j := r.next[i]
	if j >= len(r.words) {
		return "", j
	}
	return r.words[j], j
}

// classify reads the arguments from position i on, after a program.
// known: the program is ahp, and every administrative subcommand counts;
// otherwise only the shapes that no other program is likely to have.
func (r *reader) classify(i int, known bool) (string, bool) {
	sub, j := r.at(i)
	if sub == "" {
		return "", false
	}
	next, _ := r.at(j + 1)
	if known {
		admin, listed := Subcommands[sub]
		if !listed || !admin {
			return "", false
		}
		if sub == "hook" {
			if next == "" || hookAgents[next] {
				return "", false // ahp hook alone prints its help; ahp hook AGENT answers a hook
			}
			return "hook " + next, true
		}
		if next != "" && shapes[sub] != nil {
			return sub + " " + next, true
		}
		return sub, true
	}
	if subs := shapes[sub]; subs != nil {
		for _, s := range subs {
			if next == s {
				if sub == "hook" && !r.agent[j+1] {
					return "", false
				}
				return sub + " " + next, true
			}
		}
		return "", false
	}
	if flagShapes[sub] && r.flag[j+1] {
		return sub, true
	}
	return "", false
}

func isDistinctFlag(w string) bool {
	if len(w) < 3 || w[0] != '-' || w[1] != '-' {
		return false // every distinctive flag is a long one
	}
	for _, f := range distinctFlags {
		if w == f || len(w) > len(f) && w[len(f)] == '=' && w[:len(f)] == f {
			return true
		}
	}
	return false
}

// IsName reports whether the base name of w is one of names, ignoring case
// and a .exe suffix.
func IsName(w string, names []string) bool {
	b := trimExe(baseName(w))
	if b == "" {
		return false
	}
	for _, n := range names {
		if strings.EqualFold(b, trimExe(baseName(n))) {
			return true
		}
	}
	return false
}

// isBaseName is IsName with names already reduced by trimExe(baseName(n)).
func isBaseName(w string, names []string) bool {
	b := trimExe(baseName(w))
	if b == "" {
		return false
	}
	for _, n := range names {
		if strings.EqualFold(b, n) {
			return true
		}
	}
	return false
}

func trimExe(s string) string {
	if n := len(s); n > 4 && strings.EqualFold(s[n-4:], ".exe") {
		return s[:n-4]
	}
	return s
}

func baseName(w string) string {
	w = strings.TrimRight(w, "/")
	for i := len(w) - 1; i >= 0; i-- {
		if w[i] == '/' || w[i] == '\\' {
			return w[i+1:]
		}
	}
	return w
}

// subSubs are the second-level subcommand names: hookAgents and every
// name of shapes, gathered once.
var subSubs = func() map[string]bool {
	m := map[string]bool{}
	for a := range hookAgents {
		m[a] = true
	}
	for _, subs := range shapes {
		for _, s := range subs {
			m[s] = true
		}
	}
	return m
}()

// isSubSub reports whether w is a second-level subcommand name.
func isSubSub(w string) bool {
	return subSubs[w]
}

// goValueFlags are go run's build flags that take a separate value.
var goValueFlags = map[string]bool{
	"-C": true, "-exec": true, "-tags": true, "-ldflags": true, "-gcflags": true, "-asmflags": true,
	"-mod": true, "-modfile": true, "-overlay": true, "-pgo": true, "-p": true, "-pkgdir": true,
	"-toolexec": true, "-coverpkg": true, "-covermode": true, "-buildmode": true, "-compiler": true,
	"-gccgoflags": true, "-installsuffix": true, "-buildvcs": false, "-o": true,
}

// goRunPackage returns the package (or first .go file) of go run's
// arguments and the program's arguments after it (after the .go files).
func goRunPackage(args []string) (string, []string, bool) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if strings.HasPrefix(w, "-") {
			name, _, hasValue := strings.Cut(w, "=")
			name = "-" + strings.TrimLeft(name, "-")
			if !hasValue && goValueFlags[name] {
				i++
			}
			continue
		}
		j := i + 1
		if strings.HasSuffix(w, ".go") {
			for j < len(args) && strings.HasSuffix(args[j], ".go") {
				j++
			}
		}
		return w, args[j:], true
	}
	return "", nil, false
}
