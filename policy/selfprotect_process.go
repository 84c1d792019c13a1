package policy

import (
	"net"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// adminSubcommands are the ahp subcommands an agent must not run: they
// answer approvals, run or replace the harness, or read and change its
// records. Each maps to the sub-subcommands that count ("" for all).
var adminSubcommands = map[string][]string{
	"approvals": nil,
	"serve":     nil,
	"audit":     nil,
	"memory":    {"add", "delete"},
}

// ahpValueFlags are global flags of ahp that take a separate value.
var ahpValueFlags = map[string]bool{"--log-level": true, "--log-format": true, "--config": true}

// runsHarnessAdmin: a simple command runs one of ahp's administrative
// subcommands, whether ahp is the command word or an argument (go run
// ./cmd/ahp serve, npx ahp approvals).
func (a *spAction) runsHarnessAdmin() bool {
	if !a.mentionsAny(a.g.names) {
		return false
	}
	for _, c := range a.cmds {
		for i := c.start; i < len(c.words); i++ {
			if !a.isHarnessName(baseName(c.words[i].text)) {
				continue
			}
			var rest []string
			for j := i + 1; j < len(c.words); j++ {
				w := c.words[j].text
				switch {
				case ahpValueFlags[w]:
					j++
				case strings.HasPrefix(w, "-"):
				default:
					rest = append(rest, w)
				}
				if len(rest) == 2 {
					break
				}
			}
			if len(rest) == 0 {
				continue
			}
			subs, ok := adminSubcommands[rest[0]]
			if !ok {
				continue
			}
			if subs == nil {
				return true
			}
			for _, s := range subs {
				if len(rest) > 1 && rest[1] == s {
					return true
				}
			}
		}
	}
	return false
}

func (a *spAction) isHarnessName(n string) bool {
	for _, name := range a.g.names {
		if n == name {
			return true
		}
	}
	return false
}

// mentionsAny is a quick test before parsing: does the command text hold
// any of the words at all?
func (a *spAction) mentionsAny(words []string) bool {
	for _, w := range words {
		if w != "" && strings.Contains(a.line, w) {
			return true
		}
	}
	return false
}

// callsAdminAPI: the action names the admin API's address (in a URL, as
// HOST:PORT, as nc HOST PORT or /dev/tcp/HOST/PORT), or an admin API path
// that answers approvals or reloads the policy.
func (a *spAction) callsAdminAPI() bool {
	texts := append([]string(nil), a.urls...)
	for _, c := range a.cmds {
		args := c.args()
		for i, w := range args {
			texts = append(texts, w.text)
			if i+1 < len(args) && isNumber(args[i+1].text) && !strings.HasPrefix(w.text, "-") {
				texts = append(texts, net.JoinHostPort(w.text, args[i+1].text))
			}
		}
	}
	for _, t := range texts {
		if strings.Contains(t, "/v1/approvals/") && (strings.Contains(t, "/approve") || strings.Contains(t, "/deny")) ||
			strings.Contains(t, "/v1/policy/reload") {
			return true
		}
		for _, hp := range hostPortsIn(t) {
			for _, adm := range a.g.admin {
				if adm.reaches(hp) {
					return true
				}
			}
		}
	}
	return false
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
			port = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443"}[u.Scheme]
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
	// (letters, digits, dots, dashes, or a bracketed IPv6 address) before it.
	for i := 0; i < len(w) && len(out) < 16; i++ {
		if w[i] != ':' {
			continue
		}
		j := i + 1
		for j < len(w) && w[j] >= '0' && w[j] <= '9' {
			j++
		}
		if j == i+1 || j-i-1 > 5 {
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
	return c == '.' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// reaches reports whether a connection to hp would reach the admin API
// listening on adm.
func (adm hostPort) reaches(hp hostPort) bool {
	if hp.port != adm.port {
		return false
	}
	switch {
	case hp.host == adm.host:
		return true
	case isAnyAddr(adm.host):
		return true // listening everywhere: any address of this machine
	case isLoopbackHost(adm.host):
		return isLoopbackHost(hp.host) || isAnyAddr(hp.host)
	}
	return false
}

func isAnyAddr(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" || h == "0" }

func isLoopbackHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// stopsHarness: kill of the harness's pid (or of every process: -1),
// kill next to a pgrep/pidof of the harness, pkill or killall whose
// pattern matches the harness, systemctl or service stopping its unit.
func (a *spAction) stopsHarness() bool {
	if !a.mentionsAny([]string{"kill", "systemctl", "service", "pkill", "killall"}) {
		return false
	}
	lookup, killNoTarget := false, false
	for _, c := range a.cmds {
		name, args := c.name(), c.args()
		switch name {
		case "kill":
			targets := killTargets(args)
			if len(targets) == 0 {
				killNoTarget = true
			}
			for _, t := range targets {
				if t == "-1" || a.g.pids[strings.TrimPrefix(t, "-")] {
					return true
				}
				if !isNumber(strings.TrimPrefix(t, "-")) && !strings.HasPrefix(t, "%") {
					killNoTarget = true // a variable or substitution: see what it looked up
				}
			}
		case "pkill", "killall":
			if a.patternsHitHarness(name, args) {
				return true
			}
		case "pgrep", "pidof":
			if a.patternsHitHarness(name, args) {
				lookup = true
			}
		case "systemctl":
			if a.systemctlStops(args) {
				return true
			}
		case "service":
			if len(args) >= 2 && a.isUnit(args[0].text) && stopVerbs[args[1].text] {
				return true
			}
		}
	}
	return lookup && killNoTarget
}

// killTargets returns kill's process arguments (signals and options
// removed).
func killTargets(args []shellWord) []string {
	var out []string
	sigSeen, dashdash := false, false
	for i := 0; i < len(args); i++ {
		w := args[i].text
		switch {
		case dashdash:
			out = append(out, w)
		case w == "--":
			dashdash = true
		case w == "-s" || w == "-n" || w == "--signal":
			i++
			sigSeen = true
		case w == "-l" || w == "-L" || w == "--list" || w == "--table":
			return nil
		case strings.HasPrefix(w, "-") && !sigSeen:
			sigSeen = true // -9, -KILL, -SIGTERM
		default:
			out = append(out, w)
		}
	}
	return out
}

// pkillValueFlags take a separate value that is not a pattern.
var pkillValueFlags = map[string]bool{
	"-s": true, "-u": true, "-U": true, "-g": true, "-G": true, "-P": true, "-t": true,
	"-F": true, "--signal": true, "--euid": true, "--uid": true, "--pgroup": true,
	"--group": true, "--parent": true, "--terminal": true, "--pidfile": true, "--session": true,
	"--ns": true, "--nslist": true, "-o": true, "-y": true, "--older-than": true, "--younger-than": true,
}

// patternsHitHarness reports whether pkill/killall/pgrep/pidof would
// select the harness: a pattern matching its name (or, with -f, its
// command line), or -u for the user it runs as is not judged here.
func (a *spAction) patternsHitHarness(name string, args []shellWord) bool {
	full, regex := false, name == "pkill" || name == "pgrep"
	var pats []string
	for i := 0; i < len(args); i++ {
		w := args[i].text
		switch {
		case w == "-f" || w == "--full":
			full = true
		case w == "-r" || w == "--regexp":
			regex = true
		case pkillValueFlags[w]:
			i++
		case strings.HasPrefix(w, "-"):
			if name == "pkill" && !strings.HasPrefix(w, "--") && strings.ContainsRune(w, 'f') && !isSignalWord(w) {
				full = true
			}
		default:
			pats = append(pats, w)
		}
	}
	subjects := a.g.names
	if full {
		subjects = append(append([]string(nil), a.g.names...), a.g.cmdlines...)
	}
	for i, p := range pats {
		if i >= spMaxPatterns {
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

// stopVerbs are the systemctl and service verbs that stop, restart,
// disable or change a unit.
var stopVerbs = map[string]bool{
	"stop": true, "kill": true, "restart": true, "try-restart": true, "reload-or-restart": true,
	"force-reload": true, "disable": true, "mask": true, "edit": true, "revert": true,
	"set-property": true, "freeze": true, "clean": true, "reset-failed": true, "link": true,
}

func (a *spAction) systemctlStops(args []shellWord) bool {
	verb := ""
	for _, w := range args {
		switch {
		case strings.HasPrefix(w.text, "-"):
		case verb == "":
			verb = w.text
			if !stopVerbs[verb] {
				return false
			}
		case a.isUnit(w.text):
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
