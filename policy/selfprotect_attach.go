package policy

import (
	"strings"

	"github.com/ahp-go/ahp/effects"
)

// The harness's process can be switched off without a signal: a debugger
// or tracer attached to it stops it and reads its memory (which holds the
// admin token), its /proc files give its memory and environment, and its
// priority, CPU set or limits can starve it. stopsHarness counts these as
// stopping it (attachHit, procHit), with the same reading of pids as for
// kill: the harness's pid or process group, or a pid known only at run
// time next to a lookup that finds the harness.

// attachPrograms are the programs that attach to a running process given
// by pid, or change its priority, CPU set or limits.
var attachPrograms = map[string]bool{
	"gdb": true, "gcore": true, "gdbserver": true, "lldb": true, "strace": true, "ltrace": true,
	"perf": true, "pstack": true, "eu-stack": true, "criu": true, "bpftrace": true,
	"renice": true, "ionice": true, "taskset": true, "chrt": true, "prlimit": true, "cpulimit": true,
}

// hit is what one effect tells of the harness's process.
type hit int8

const (
	hitNone    hit = iota
	hitYes         // aimed at the harness
	hitUnknown     // aimed at a pid known only at run time
)

// attachHit reads a Run of one of attachPrograms: a word naming the
// harness's pid (4242, -p4242, --pid=4242, a list 1,4242), every process
// of a user (renice -u), a program name that matches the harness
// (cpulimit -e ahp), or a pid known only at run time.
func (a *spAction) attachHit(e effects.Effect) hit {
	if !attachPrograms[e.Program] || len(e.Argv) < 2 {
		return hitNone
	}
	out := hitNone
	args := e.Argv[1:]
	for i, w := range args {
		switch {
		case (e.Program == "renice" && (w == "-u" || w == "--user" || strings.HasPrefix(w, "--user="))):
			return hitYes // every process of a user: the harness may be one
		case e.Program == "cpulimit" && (w == "-e" || w == "--exe" || w == "-P" || w == "--path") && i+1 < len(args):
			if a.patternsHitHarness("pidof", []string{args[i+1]}) {
				return hitYes
			}
		case e.Program == "cpulimit" && (strings.HasPrefix(w, "--exe=") || strings.HasPrefix(w, "--path=")):
			if _, v, _ := strings.Cut(w, "="); a.patternsHitHarness("pidof", []string{v}) {
				return hitYes
			}
		}
		for _, p := range pidWords(w) {
			switch {
			case a.g.pids[strings.TrimPrefix(p, "-")]:
				return hitYes
			case strings.ContainsAny(p, "$`"):
				out = hitUnknown
			}
		}
	}
	return out
}

// pidWords reads the pids a word may name: the word, its value after
// -p, --pid=, --attach= or -t, split at commas.
func pidWords(w string) []string {
	for _, pre := range []string{"--pid=", "--attach=", "--target=", "-p", "-t"} {
		if strings.HasPrefix(w, pre) && len(w) > len(pre) {
			w = w[len(pre):]
			break
		}
	}
	return strings.Split(w, ",")
}

// procHit reads a path or word under /proc: the harness's /proc/PID
// directory (its mem, environ, maps), or one of a pid known only at run
// time; /proc/self and other pids are not the harness.
func (a *spAction) procHit(w string) hit {
	i := strings.Index(w, "/proc/")
	if i < 0 {
		return hitNone
	}
	pid, _, _ := strings.Cut(w[i+len("/proc/"):], "/")
	switch {
	case a.g.pids[pid]:
		return hitYes
	case strings.ContainsAny(pid, "$`"):
		return hitUnknown
	}
	return hitNone
}

// freezesCgroup reports a write to a cgroup's freeze or kill file, which
// stops every process of the cgroup (the harness's cannot be told from
// the path).
func freezesCgroup(e effects.Effect) bool {
	if e.Kind != effects.Write && e.Kind != effects.Create {
		return false
	}
	base := e.Path[strings.LastIndexByte(e.Path, '/')+1:]
	return base == "cgroup.freeze" || base == "cgroup.kill" || base == "freezer.state"
}
