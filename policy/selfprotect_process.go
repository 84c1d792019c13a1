package policy

import (
	"net"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/internal/admincmd"
	"github.com/ahp-go/ahp/internal/loopback"
)

// runsHarnessAdmin: a Run effect runs one of ahp's administrative
// subcommands (internal/admincmd): approvals, serve, doctor, status, audit,
// memory, runs, replay, hook install or uninstall, whatever global flags
// come first, whether ahp is the program or an argument (go run ./cmd/ahp
// serve, npx ahp approvals), and, by the shape of its arguments, whatever
// the program is called (a renamed copy). The effects package has already
// unwrapped sudo, env, sh -c, eval and the like, and removed quotes.
func (a *spAction) runsHarnessAdmin() bool {
	for _, e := range a.acts {
		if e.Kind != effects.Run || len(e.Argv) == 0 || !mayRunAdmin(e.Argv) {
			continue
		}
		if _, ok := admincmd.Find(e.Argv, a.g.names); ok {
			return true
		}
	}
	return false
}

// adminSubcommands are admincmd.Subcommands that administer the harness.
var adminSubcommands = func() map[string]bool {
	m := map[string]bool{}
	for sub, admin := range admincmd.Subcommands {
		if admin {
			m[sub] = true
		}
	}
	return m
}()

// adminSubLens are the shortest and the longest lengths of
// adminSubcommands' names: a word of another length is none of them.
var adminSubLens = func() (l [2]int) {
	l[0] = -1
	for sub := range adminSubcommands {
		if l[0] < 0 || len(sub) < l[0] {
			l[0] = len(sub)
		}
		l[1] = max(l[1], len(sub))
	}
	return l
}()

// mayRunAdmin reports whether admincmd.Find can match argv, as a cheap
// test first: every match it makes reads an administrative subcommand
// name as one whole word (after a known program, after any program in one
// of its argument shapes, after go run's package), or inside a stdio:
// address. Without such a word there is nothing to find; with one, Find
// decides. TestMayRunAdminCoversFind holds the two together.
func mayRunAdmin(argv []string) bool {
	for _, w := range argv {
		if len(w) >= adminSubLens[0] && len(w) <= adminSubLens[1] && adminSubcommands[w] || strings.HasPrefix(w, "stdio:") {
			return true
		}
	}
	return false
}

// callsAdminAPI: a Connect, Send or Download effect reaches the admin API's
// address, in any spelling of a loopback address and port
// (internal/loopback), or names an admin API path that answers approvals
// or reloads the policy (percent-encoded or not) on any host. The words of
// every Run are looked at too, for a client the effects package does not
// model (HOST:PORT, URL, /dev/tcp/HOST/PORT, HOST PORT) and for curl's
// --resolve and --connect-to, which send a request for one name to
// another address.
func (a *spAction) callsAdminAPI() bool {
	// Room for a few of each on the stack: most actions have few words.
	var directBuf [4]hostPort
	var textBuf [16]string
	direct, texts := directBuf[:0], textBuf[:0]
	for _, e := range a.acts {
		switch e.Kind {
		case effects.Connect, effects.Send, effects.Download:
			if e.URL() != "" {
				texts = append(texts, e.URL())
			}
			if e.Host() != "" || e.Port() != "" {
				port := e.Port()
				if port == "" && e.URL() != "" {
					if hp, ok := parseHostPort(e.URL()); ok {
						port = hp.port
					}
				}
				direct = append(direct, hostPort{strings.ToLower(e.Host()), port})
			}
		case effects.Run:
			args := argvOperands(e.Argv)
			for i, w := range args {
				if hasByteOf(w, '/', ':') {
					// Neither an admin path nor a host:port can be
					// read from a word without "/" or ":".
					texts = append(texts, w)
				}
				if i+1 < len(args) && isNumber(args[i+1]) && !strings.HasPrefix(w, "-") {
					texts = append(texts, net.JoinHostPort(w, args[i+1]))
				}
				if len(w) < len("--resolve") || w[0] != '-' || w[1] != '-' {
					continue // neither --resolve nor --connect-to
				}
				opt, val, eq := strings.Cut(w, "=")
				if !eq {
					if i+1 >= len(args) {
						continue
					}
					val = args[i+1]
				}
				switch opt {
				case "--resolve":
					direct = append(direct, loopbackResolve(val)...)
				case "--connect-to":
					if hp, ok := loopback.CurlConnectTo(val); ok {
						direct = append(direct, hostPort{hp.Host, hp.Port})
					}
				}
			}
		}
	}
	budget := spMaxAddrs
	hit := func(hps []hostPort) bool {
		for _, hp := range hps {
			if budget--; budget < 0 {
				a.reach(limitAddresses)
				return false
			}
			for _, adm := range a.g.admin {
				if a.g.reaches(adm, hp) {
					return true
				}
			}
		}
		return false
	}
	if len(a.g.admin) > 0 && hit(direct) {
		return true
	}
	// A script names the same words many times: a word read before
	// without a hit is not read again, only its addresses are counted
	// against the budget, as comparing them again would count them.
	var read smallMap[string, int]
	for _, t := range texts {
		if n, ok := read.get(t); ok {
			if budget -= n; budget < 0 {
				a.reach(limitAddresses)
				return false
			}
			continue
		}
		if isAdminPath(t) {
			return true
		}
		n := 0
		if len(a.g.admin) > 0 {
			hps := hostPortsIn(t)
			if hit(hps) {
				return true
			}
			n = len(hps)
		}
		if budget < 0 {
			return false
		}
		read.put(t, n)
	}
	return false
}

// hasByteOf reports whether s has the byte b1 or b2 (strings.ContainsAny
// without building a set each call).
func hasByteOf(s string, b1, b2 byte) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == b1 || c == b2 {
			return true
		}
	}
	return false
}

// loopbackResolve reads curl's --resolve value.
func loopbackResolve(v string) []hostPort {
	hps, _ := loopback.CurlResolve(v)
	out := make([]hostPort, 0, len(hps))
	for _, hp := range hps {
		out = append(out, hostPort{hp.Host, hp.Port})
	}
	return out
}

// isAdminPath reports whether t names an admin API path that answers an
// approval or reloads the policy, as the server reads the path: percent-
// encoding decoded once, repeated slashes and /./ removed.
func isAdminPath(t string) bool {
	if !strings.Contains(t, "/") {
		return false
	}
	// Both paths have "v1" in them, which removing "/" and "." between
	// slashes cannot make: without it, and without a "%" that may
	// encode it, t names neither.
	if !strings.Contains(t, "v1") && !strings.Contains(t, "%") {
		return false
	}
	for _, s := range []string{t, percentDecode(t)} {
		for strings.Contains(s, "//") || strings.Contains(s, "/./") {
			s = strings.ReplaceAll(strings.ReplaceAll(s, "//", "/"), "/./", "/")
		}
		if strings.Contains(s, "/v1/approvals/") && (strings.Contains(s, "/approve") || strings.Contains(s, "/deny")) ||
			strings.Contains(s, "/v1/policy/reload") {
			return true
		}
	}
	return false
}

// percentDecode decodes every valid %XX of s and keeps the rest as it is.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// parseHostPort reads http://HOST:PORT/... or HOST:PORT.
func parseHostPort(s string) (hostPort, bool) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return hostPort{}, false
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443"}[strings.ToLower(u.Scheme)]
		}
		return hostPort{strings.ToLower(u.Hostname()), port}, port != ""
	}
	h, p, err := net.SplitHostPort(s)
	if err != nil || p == "" {
		return hostPort{}, false
	}
	return hostPort{strings.ToLower(h), p}, true
}

// hostPortsIn returns the HOST:PORT pairs a word names: in a URL, as
// HOST:PORT after any prefix (TCP:, user@), or as /dev/tcp/HOST/PORT.
func hostPortsIn(w string) []hostPort {
	if !strings.ContainsRune(w, ':') && !strings.Contains(w, "/dev/tcp/") {
		return nil
	}
	var out []hostPort
	if i := strings.Index(w, "/dev/tcp/"); i >= 0 {
		if host, port, ok := strings.Cut(w[i+len("/dev/tcp/"):], "/"); ok {
			out = append(out, hostPort{strings.ToLower(host), port})
		}
	}
	if strings.Contains(w, "://") {
		if hp, ok := parseHostPort(w); ok {
			out = append(out, hp)
		}
	}
	// Every ":DIGITS" not followed by another digit, with the host name
	// (letters, digits, dots, dashes, percent-encoding, non-ASCII, or a
	// bracketed IPv6 address) before it.
	for i := 0; i < len(w); i++ {
		if w[i] != ':' {
			continue
		}
		j := i + 1
		for j < len(w) && w[j] >= '0' && w[j] <= '9' {
			j++
		}
		if j == i+1 {
			continue
		}
		start := i
		if start > 0 && w[start-1] == ']' {
			if k := strings.LastIndexByte(w[:start], '['); k >= 0 {
				out = append(out, hostPort{strings.ToLower(w[k+1 : start-1]), w[i+1 : j]})
				continue
			}
		}
		for start > 0 && isHostChar(w[start-1]) {
			start--
		}
		out = append(out, hostPort{strings.ToLower(w[start:i]), w[i+1 : j]})
	}
	return out
}

func isHostChar(c byte) bool {
	return c == '.' || c == '-' || c == '_' || c == '%' || c >= 0x80 ||
		c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// reaches reports whether a connection to hp would reach the admin API
// listening on adm: the same port however written (leading zeros), and
// the same address in any spelling, or any local address when the API
// listens on loopback, or any address when it listens on every one.
func (g *guard) reaches(adm, hp hostPort) bool {
	ap, ok := loopback.ParsePort(adm.port)
	if !ok {
		return false
	}
	if p, ok := loopback.ParsePort(hp.port); !ok || p != ap {
		return false
	}
	switch {
	case sameHost(hp.host, adm.host):
		return true
	case adm.host == "" || loopback.IsUnspecifiedHost(adm.host):
		return true // listening everywhere: any address of this machine
	case loopback.IsLoopbackHost(adm.host):
		return g.isLocal(hp.host)
	}
	return false
}

// sameHost compares two hosts as the resolver would: by address when both
// are addresses in any spelling, else by normalised name.
func sameHost(a, b string) bool {
	na, nb := loopback.Normalize(a), loopback.Normalize(b)
	if na == nb {
		return true
	}
	aa, ok1 := loopback.ParseHost(a)
	ab, ok2 := loopback.ParseHost(b)
	return ok1 && ok2 && aa == ab
}

// isLocal reports whether a connection to h stays on this machine: an
// empty host (curl :PORT), any spelling of a loopback or unspecified
// address, localhost, or a name the hosts file gives a loopback address.
func (g *guard) isLocal(h string) bool {
	if h == "" || loopback.IsLocalHost(h) {
		return true
	}
	n := loopback.Normalize(h)
	for _, l := range g.local {
		if n == l {
			return true
		}
	}
	return false
}

// stopsHarness: a Signal effect aimed at the harness: its pid or process
// group, every process (-1), the processes of a user (a selector and no
// pattern), a pkill or killall pattern that matches its name (or, with
// -f, its command line), a systemctl or service stop of its unit; a
// debugger, tracer or priority tool aimed at its pid, a read or write of
// its /proc/PID files, a write that freezes a cgroup (selfprotect_attach.go);
// or any of these with a pid found at run time next to a pgrep or pidof
// that finds the harness (kill $(pgrep ahp), gdb -p $(pidof ahp)).
func (a *spAction) stopsHarness() bool {
	lookup, killUnknown := false, false
	for i, e := range a.acts {
		switch e.Kind {
		case effects.Read, effects.Write, effects.Create:
			switch a.procHit(e.Path) {
			case hitYes:
				return true
			case hitUnknown:
				killUnknown = true
			}
			if freezesCgroup(e) {
				return true
			}
		case effects.Run:
			if (e.Program == "pgrep" || e.Program == "pidof") && a.patternsHitHarness(e.Program, argvOperands(e.Argv)) {
				lookup = true
			}
			switch a.attachHit(e) {
			case hitYes:
				return true
			case hitUnknown:
				killUnknown = true
			}
			for _, w := range e.Argv[min(1, len(e.Argv)):] {
				switch a.procHit(w) {
				case hitYes:
					return true
				case hitUnknown:
					killUnknown = true
				}
			}
			if a.psLookupHitsHarness(e) {
				lookup = true
			}
			if e.Program == "systemctl" && a.systemctlChangesUnit(argvOperands(e.Argv)) {
				return true
			}
		case effects.Signal:
			switch e.Program {
			case "pkill", "killall":
				if argv := a.runOf(i, e.Program); argv != nil {
					if a.patternsHitHarness(e.Program, argvOperands(argv)) {
						return true
					}
					continue
				}
				// No Run to read the options from: every target is a
				// pattern matched against names and command lines.
				if len(e.Targets()) == 0 || a.patternsHitHarness("pkill", append([]string{"-f"}, e.Targets()...)) {
					return true
				}
			case "systemctl", "service":
				for _, u := range e.Targets() {
					if a.isUnit(u) {
						return true
					}
				}
			default:
				if len(e.Targets()) == 0 {
					killUnknown = true
				}
				for _, t := range e.Targets() {
					switch {
					case t == "-1" || a.g.pids[strings.TrimPrefix(t, "-")]:
						return true
					case strings.HasPrefix(t, "user:"):
						return true // every process of a user: the harness may be one
					case !isNumber(strings.TrimPrefix(t, "-")) && !strings.HasPrefix(t, "%"):
						killUnknown = true // a pid known only at run time: see what was looked up
					}
				}
			}
		}
	}
	return lookup && killUnknown
}

// awkPatternRE is an awk program's /regex/ pattern.
var awkPatternRE = regexp.MustCompile(`/((?:[^/\\]|\\.)+)/`)

// psLookupHitsHarness reports whether e is part of a pid lookup by
// process listing that finds the harness: ps -C NAME, or a grep or awk
// pattern over the output of ps that matches its name or command line
// (ps aux | grep ahp | awk '{print $2}' | xargs kill).
func (a *spAction) psLookupHitsHarness(e effects.Effect) bool {
	switch e.Program {
	case "ps":
		for i := 1; i+1 < len(e.Argv); i++ {
			if e.Argv[i] == "-C" && a.patternsHitHarness("pidof", strings.Split(e.Argv[i+1], ",")) {
				return true
			}
		}
		return false
	case "grep", "egrep", "fgrep", "awk", "gawk", "mawk", "sed":
	default:
		return false
	}
	ps := false
	for _, r := range a.acts {
		ps = ps || r.Kind == effects.Run && r.Program == "ps"
	}
	if !ps {
		return false
	}
	var pats []string
	for _, w := range argvOperands(e.Argv) {
		if e.Program == "grep" || e.Program == "egrep" || e.Program == "fgrep" {
			pats = append(pats, w)
			continue
		}
		for _, m := range awkPatternRE.FindAllStringSubmatch(w, spMaxPatterns) {
			pats = append(pats, m[1])
		}
	}
	return len(pats) > 0 && a.patternsHitHarness("pkill", append([]string{"-f"}, pats...))
}

// pkillValueFlags take a separate value that is not a pattern.
var pkillValueFlags = map[string]bool{
	"-s": true, "-u": true, "-U": true, "-g": true, "-G": true, "-P": true, "-t": true,
	"-F": true, "--signal": true, "--euid": true, "--uid": true, "--pgroup": true,
	"--group": true, "--parent": true, "--terminal": true, "--pidfile": true, "--session": true,
	"--ns": true, "--nslist": true, "-o": true, "-y": true, "--older-than": true, "--younger-than": true,
	"--user": true,
}

// selectorFlags select processes by owner, group, parent, session or
// terminal; without a pattern, pkill and killall signal all they select.
var selectorFlags = map[string]bool{
	"-u": true, "-U": true, "-g": true, "-G": true, "-P": true, "-t": true, "-F": true,
	"--euid": true, "--uid": true, "--pgroup": true, "--group": true, "--parent": true,
	"--terminal": true, "--pidfile": true, "--session": true, "--user": true,
}

// patternsHitHarness reports whether pkill/killall/pgrep/pidof would
// select the harness: a pattern matching its name (or, with -f, its
// command line), or -u for the user it runs as is not judged here.
func (a *spAction) patternsHitHarness(name string, args []string) bool {
	full, regex := false, name == "pkill" || name == "pgrep"
	selector := false // -u USER, -P PPID...: every process they select, with no pattern
	var pats []string
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "-f" || w == "--full":
			full = true
		case w == "-r" || w == "--regexp":
			regex = true
		case pkillValueFlags[w]:
			selector = selector || selectorFlags[w]
			i++
		case strings.HasPrefix(w, "--") && strings.Contains(w, "="):
			opt, _, _ := strings.Cut(w, "=")
			selector = selector || selectorFlags[opt]
		case len(w) > 2 && w[0] == '-' && w[1] != '-' && selectorFlags[w[:2]] && !isSignalWord(w):
			selector = true // -u1000
		case strings.HasPrefix(w, "-"):
			if name == "pkill" && !strings.HasPrefix(w, "--") && strings.ContainsRune(w, 'f') && !isSignalWord(w) {
				full = true
			}
		default:
			pats = append(pats, w)
		}
	}
	if len(pats) == 0 && selector && name != "pidof" {
		return true // every process of a user, group, parent or session: the harness may be one
	}
	subjects := a.g.names
	if full {
		subjects = append(append([]string(nil), a.g.names...), a.g.cmdlines...)
	}
	for i, p := range pats {
		if i >= spMaxPatterns {
			a.reach(limitPatterns)
			break
		}
		if !regex {
			for _, s := range subjects {
				if baseName(p) == s {
					return true
				}
			}
			continue
		}
		if len(p) > 256 {
			return true // not worth the risk
		}
		re, err := regexp.Compile(p)
		for _, s := range subjects {
			if err == nil && re.MatchString(s) || err != nil && strings.Contains(s, p) {
				return true
			}
		}
	}
	return false
}

// isSignalWord reports whether w is a signal option such as -HUP or -9.
func isSignalWord(w string) bool {
	w = strings.TrimPrefix(w, "-")
	return isNumber(w) || strings.ToUpper(w) == w
}

// unitVerbs are the systemctl verbs that change a unit without stopping
// it, which package effects does not report as signals: a drop-in that
// replaces its command (edit), its limits (set-property), its files
// (revert, link, clean). The verbs that stop it (stop, kill, restart,
// disable --now, mask, freeze) are signal effects.
var unitVerbs = map[string]bool{
	"edit": true, "revert": true, "set-property": true, "clean": true, "link": true,
	"reset-failed": true, "force-reload": true, "reload-or-restart": true, "disable": true, "mask": true,
}

// systemctlChangesUnit reports whether a systemctl argv (a Run effect's)
// applies one of unitVerbs to the harness's unit.
func (a *spAction) systemctlChangesUnit(args []string) bool {
	verb := ""
	for _, w := range args {
		switch {
		case strings.HasPrefix(w, "-"):
		case verb == "":
			verb = w
			if !unitVerbs[verb] {
				return false
			}
		case a.isUnit(w):
			return true
		}
	}
	return false
}

func (a *spAction) isUnit(u string) bool {
	for _, want := range a.g.units {
		if u == want || u == want+".service" {
			return true
		}
		if strings.ContainsAny(u, "*?[") {
			if ok, _ := path.Match(u, want); ok {
				return true
			}
		}
	}
	return false
}

// baseName returns the last name of a slash-separated word.
func baseName(w string) string {
	if i := strings.LastIndexByte(w, '/'); i >= 0 {
		return w[i+1:]
	}
	return w
}
