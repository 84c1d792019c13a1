package effects

import (
	"path"
	"slices"
	"strings"
)

// Process listings in Python: os.listdir("/proc"), the output of pgrep,
// pidof or ps run through subprocess or os.popen. The pids they give carry
// a mark in pyVal.from naming the processes listed ("*" for every one), so
// that os.kill(int(pid), ...) over them signals those processes, or, in a
// loop that filters them, the processes the filter names (as a loop over
// psutil.process_iter() does).

const (
	pyPidsOpen  = "\x01pids="
	pyPidsClose = "\x01"
)

// pidsMark is the mark of pids of the named processes.
func pidsMark(names []string) string {
	if len(names) == 0 {
		names = []string{"*"}
	}
	return pyPidsOpen + strings.Join(names, ",") + pyPidsClose
}

// pidsOf returns the processes a value's pids were listed for, and whether
// it holds pids from a listing.
func pidsOf(v pyVal) ([]string, bool) {
	from := v.from
	for _, e := range v.list {
		from += e.from
	}
	var out []string
	found := false
	for {
		i := strings.Index(from, pyPidsOpen)
		if i < 0 {
			break
		}
		from = from[i+len(pyPidsOpen):]
		j := strings.Index(from, pyPidsClose)
		if j < 0 {
			break
		}
		found = true
		for _, n := range strings.Split(from[:j], ",") {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		from = from[j:]
	}
	return out, found
}

// stripPids removes the marks from a source named in a Send.
func stripPids(from string) string {
	for {
		i := strings.Index(from, pyPidsOpen)
		if i < 0 {
			return from
		}
		j := strings.Index(from[i+len(pyPidsOpen):], pyPidsClose)
		if j < 0 {
			return from[:i]
		}
		from = from[:i] + from[i+len(pyPidsOpen)+j+len(pyPidsClose):]
	}
}

// pidLister reads a command line (argv, or a shell line split at pipes and
// separators) as a process listing: pgrep and pidof name the processes
// they list, ps lists every process unless a grep after it names one.
func pidLister(words []string) ([]string, bool) {
	var names []string
	lister, ps := false, false
	seg := []string{}
	flush := func() {
		defer func() { seg = seg[:0] }()
		if len(seg) == 0 {
			return
		}
		switch path.Base(seg[0]) {
		case "sudo":
			seg = seg[1:]
			if len(seg) == 0 {
				return
			}
		}
		prog := path.Base(seg[0])
		switch prog {
		case "pgrep", "pidof":
			lister = true
			valued := map[string]bool{"-u": true, "-U": true, "-g": true, "-G": true, "-P": true, "-s": true, "-t": true, "-F": true, "--ns": true, "-d": true}
			for i := 1; i < len(seg); i++ {
				w := seg[i]
				switch {
				case (w == "-u" || w == "-U") && i+1 < len(seg):
					names = append(names, "user:"+seg[i+1])
					i++
				case valued[w]:
					i++
				case strings.HasPrefix(w, "-"):
				default:
					names = append(names, w)
				}
			}
		case "ps":
			lister, ps = true, true
		case "grep", "egrep", "rg":
			if ps {
				for _, w := range seg[1:] {
					if !strings.HasPrefix(w, "-") && w != "grep" {
						names = append(names, strings.Trim(w, "[]"))
					}
				}
			}
		}
	}
	for _, w := range words {
		switch w {
		case "|", ";", "&&", "||":
			flush()
		default:
			seg = append(seg, w)
		}
	}
	flush()
	if !lister {
		return nil, false
	}
	if len(names) == 0 {
		names = []string{"*"}
	}
	return names, true
}

// pyShellWords splits a shell line at blanks and at pipes and separators,
// roughly, for pidLister.
func pyShellWords(line string) []string {
	for _, sep := range []string{"||", "&&", "|", ";"} {
		line = strings.ReplaceAll(line, sep, " "+sep+" ")
	}
	line = strings.ReplaceAll(line, "| |", "||")
	line = strings.ReplaceAll(line, "& &", "&&")
	f := strings.Fields(line)
	for i, w := range f {
		f[i] = strings.Trim(w, `'"`)
	}
	return f
}

// listedPids marks the value a subprocess call returns when the command
// lists processes.
func listedPids(v pyVal, sh bool, ret pyVal) pyVal {
	var words []string
	switch {
	case v.k == pyList && sh && len(v.list) > 0:
		if s, ok := v.list[0].str(); ok {
			words = pyShellWords(s)
		}
	case v.k == pyList:
		for _, e := range v.list {
			s, _ := e.str()
			words = append(words, s)
		}
	default:
		if s, ok := v.str(); ok {
			words = pyShellWords(s)
		}
	}
	if names, ok := pidLister(words); ok {
		ret.from += pidsMark(names)
	}
	return ret
}

// killTargets are the processes a signal to pid reaches: a literal pid,
// the processes a loop over a listing picks, the processes a listing
// names; nil when not known.
func (p *py) killTargets(pid pyVal) []string {
	if names, ok := pidsOf(pid); ok {
		if len(p.procs) > 0 {
			return p.procs
		}
		return names
	}
	if len(p.procs) > 0 {
		return p.procs // in a loop over the processes
	}
	return nil
}

// loopProcs returns the processes a loop over it picks, when it iterates
// over processes (psutil.process_iter(), a listing of pids): the names its
// filter compares with, else the listing's names ("*" for every one).
func (p *py) loopProcs(it pyVal, filter *pyNode) ([]string, bool) {
	listed, isPids := pidsOf(it)
	if !(it.k == pyObject && it.obj.typ == "procs") && !isPids {
		return nil, false
	}
	names := p.procNames(filter)
	if len(names) == 0 {
		names = listed
	}
	if len(names) == 0 {
		names = []string{"*"}
	}
	return names, true
}
