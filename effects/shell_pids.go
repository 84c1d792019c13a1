package effects

import (
	"regexp"
	"strings"
)

// Pids found at run time. A kill whose pid comes from a process listing
// (for p in $(pgrep -f sshd); do kill $p; done, pgrep sshd | xargs kill,
// ps aux | grep sshd | awk '{print $2}' | while read p; do kill $p; done,
// p=$(pidof sshd); kill $p) signals the processes the listing names: the
// output of pgrep, pidof and ps carries the names it lists (shStream.pids,
// "-1" for ps's every process), a grep or awk pattern over it narrows them
// to the pattern, the filters that pass lines on (head, sort, cut, sed…)
// keep them, and a word, a variable or xargs's items that come from such
// an output give them to kill as targets, next to the word as written.
// Rules then judge the kill as they judge pkill NAME. A pid whose source
// is not a listing (kill $(cat server.pid)) stays a target not known.

// pidStream returns st when it lists pids, else nil.
func pidStream(st *shStream) *shStream {
	if st != nil && len(st.pids) > 0 {
		return st
	}
	return nil
}

// hPgrep reads pgrep and pidof: their output lists the pids of the
// processes their patterns name (or, with only -u USER, of a user's
// processes: "user:USER").
func hPgrep(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-d --delimiter -u --euid -U --uid -g --pgroup -G --group -P --parent -t --terminal -F --pidfile --ns --nslist -o --older-than -y --younger-than -s --session -c --context -o"), false)
	var names []string
	for _, w := range p.ops {
		names = append(names, pidPattern(w.arg, p.has("-i", "--ignore-case"))...)
	}
	if u, ok := p.get("-u", "--euid", "-U", "--uid"); ok && len(names) == 0 {
		names = append(names, "user:"+u.arg)
	}
	out := c.filter()
	if len(names) > 0 && out != nil {
		out.pids = names
	}
	return out
}

// hPs reads ps: without a selection it lists every process ("-1"), with
// -C NAME the processes of those names; other selections (-p, -u, -t…)
// list processes not named here.
func hPs(c *shCall) *shStream {
	out := c.filter()
	if out == nil {
		return out
	}
	all := true
	args := c.args()
	for i, a := range args {
		if !a.known {
			all = false
			continue
		}
		v := a.val
		switch {
		case v == "-C" && i+1 < len(args):
			out.pids = append(out.pids, strings.Split(args[i+1].val, ",")...)
			return out
		case strings.HasPrefix(v, "-C") && len(v) > 2:
			out.pids = append(out.pids, strings.Split(v[2:], ",")...)
			return out
		case v == "-p" || v == "--pid" || v == "-u" || v == "-U" || v == "--user" || v == "-t" || v == "-g" || v == "-G" || v == "--ppid" || v == "-q" || v == "--sid" || v == "-s":
			all = false
		}
	}
	if all {
		out.pids = []string{"-1"}
	}
	return out
}

// pidFilters are the programs that pass a listing's lines on, some of
// them: their output lists some of the pids of their input.
var pidFilters = map[string]bool{
	"head": true, "tail": true, "sort": true, "uniq": true, "cut": true, "tr": true, "sed": true,
	"column": true, "tee": true, "cat": true, "xargs": false,
}

// shOneCharClassRE is a bracket expression of one character ([s]shd,
// written so that grep does not match its own command line).
var shOneCharClassRE = regexp.MustCompile(`\[([^\]^\\])\]`)

// pidPattern is a filter's pattern as the names it selects: [s]shd is
// sshd, an alternation sshd|cron (or sshd\|cron) both names, and a
// case-insensitive pattern (fold) its lower case.
func pidPattern(p string, fold bool) []string {
	if strings.IndexByte(p, '[') >= 0 {
		p = shOneCharClassRE.ReplaceAllString(p, "$1")
	}
	if fold {
		p = strings.ToLower(p)
	}
	if !strings.Contains(p, "|") {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(strings.ReplaceAll(p, `\|`, "|"), "|") {
		if alt = strings.Trim(alt, "()"); alt != "" {
			out = append(out, alt)
		}
	}
	return out
}

// shAwkRE is an awk program's /regex/ pattern.
var shAwkRE = regexp.MustCompile(`/((?:[^/\\]|\\.)+)/`)

// shPidsThrough gives the output of a filter of a process listing the
// names it keeps: a grep's pattern (all the input's with -v), an awk
// program's /regex/ patterns (all the input's without one), the input's
// for the filters that pass lines on.
func shPidsThrough(c *shCall, out *shStream) *shStream {
	in := pidStream(c.in)
	if in == nil || out == nil || out == c.in || len(out.pids) > 0 {
		return out
	}
	switch c.prog {
	case "grep", "egrep", "fgrep", "rg":
		p := c.parseOpts(c.args(), shOpts("-e --regexp -f --file -m --max-count -A -B -C --context --color --colour"), false)
		if p.has("-v", "--invert-match") {
			out.pids = in.pids
			return out
		}
		fold := p.has("-i", "--ignore-case") || c.prog == "rg" && p.has("-S", "--smart-case")
		if e, ok := p.get("-e", "--regexp"); ok {
			out.pids = pidPattern(e.arg, fold)
		} else if len(p.ops) > 0 {
			out.pids = pidPattern(p.ops[0].arg, fold)
		}
	case "awk", "gawk", "mawk", "nawk":
		for _, a := range c.args() {
			for _, m := range shAwkRE.FindAllStringSubmatch(a.arg, 8) {
				out.pids = append(out.pids, pidPattern(m[1], false)...)
			}
		}
		if len(out.pids) == 0 {
			out.pids = in.pids
		}
	default:
		if pidFilters[c.prog] {
			out.pids = in.pids
		}
	}
	return out
}
