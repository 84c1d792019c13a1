package effects

import (
	"encoding/json"
	"slices"
	"testing"
)

// Constructors of expected effects for the shell tests: only the fields
// set are compared (Recursive and Append are compared exactly on the
// kinds they belong to).
func eRun(prog string, argv ...string) Effect {
	e := Effect{Kind: Run, Program: prog}
	if len(argv) > 0 {
		e.Argv = argv
	}
	return e
}
func eRunPath(prog, p string) Effect { return Effect{Kind: Run, Program: prog, Path: p} }
func eDel(p string) Effect           { return Effect{Kind: Delete, Path: p} }
func eDelR(p string) Effect          { return Effect{Kind: Delete, Path: p, Recursive: true} }

// eHiddenDel is a recursive delete by prog whose target is not known before
// it runs (prog "": by any program).
func eHiddenDel(prog string) Effect { return Effect{Kind: Unknown, Program: prog, Recursive: true} }
func eRead(p string) Effect         { return Effect{Kind: Read, Path: p} }
func eReadR(p string) Effect        { return Effect{Kind: Read, Path: p, Recursive: true} }
func eWrite(p string) Effect        { return Effect{Kind: Write, Path: p} }
func eWriteR(p string) Effect       { return Effect{Kind: Write, Path: p, Recursive: true} }
func eAppend(p string) Effect       { return Effect{Kind: Write, Path: p, Append: true} }
func eCreate(p string) Effect       { return Effect{Kind: Create, Path: p} }
func eLink(p, dest string) Effect   { return Effect{Kind: Create, Path: p, Dest: dest} }
func eMove(p, dest string) Effect   { return Effect{Kind: Move, Path: p, Dest: dest} }
func eChmod(p, mode string) Effect  { return Effect{Kind: Chmod, Path: p, Detail: &Detail{Mode: mode}} }
func eChmodR(p, mode string) Effect {
	return Effect{Kind: Chmod, Path: p, Detail: &Detail{Mode: mode}, Recursive: true}
}
func eChown(p, o string) Effect { return Effect{Kind: Chown, Path: p, Detail: &Detail{Mode: o}} }
func eChownR(p, o string) Effect {
	return Effect{Kind: Chown, Path: p, Detail: &Detail{Mode: o}, Recursive: true}
}
func eConn(host, port string) Effect {
	return Effect{Kind: Connect, Detail: &Detail{Host: host, Port: port}}
}
func eListen(port string) Effect { return Effect{Kind: Listen, Detail: &Detail{Port: port}} }
func eSend(host, src string) Effect {
	return Effect{Kind: Send, Detail: &Detail{Host: host, Source: src}}
}
func eDl(url, p string) Effect { return Effect{Kind: Download, Detail: &Detail{URL: url}, Path: p} }
func eDlInto(host, into string) Effect {
	return Effect{Kind: Download, Detail: &Detail{Host: host, Into: into}}
}
func eSig(sig string, targets ...string) Effect {
	return Effect{Kind: Signal, Detail: &Detail{Signal: sig, Targets: targets}}
}
func ePriv(prog string) Effect { return Effect{Kind: Privilege, Program: prog} }
func eUnk() Effect             { return Effect{Kind: Unknown} }
func eLimit() Effect           { return Effect{Kind: Unknown, Limit: true} }

// agentUnk is the start of a coding agent without its hooks.
func agentUnk(prog string) Effect {
	return Effect{Kind: Unknown, Program: prog, Detail: &Detail{Into: "agent"}}
}
func eRemote(e Effect, host string) Effect {
	e.detail().Remote = host
	return e
}

// shEffectMatches reports whether got has every field set in want.
func shEffectMatches(want, got Effect) bool {
	if want.Kind != got.Kind {
		return false
	}
	str := func(w, g string) bool { return w == "" || w == g }
	if !str(want.Program, got.Program) || !str(want.Path, got.Path) || !str(want.Dest, got.Dest) ||
		!str(want.Mode(), got.Mode()) || !str(want.Host(), got.Host()) || !str(want.Port(), got.Port()) ||
		!str(want.URL(), got.URL()) || !str(want.Source(), got.Source()) || !str(want.Into(), got.Into()) ||
		!str(want.Signal(), got.Signal()) || !str(want.Remote(), got.Remote()) || !str(want.Via, got.Via) {
		return false
	}
	if want.Argv != nil && !slices.Equal(want.Argv, got.Argv) {
		return false
	}
	if want.Targets() != nil && !slices.Equal(want.Targets(), got.Targets()) {
		return false
	}
	if want.Limit && !got.Limit {
		return false
	}
	switch want.Kind {
	case Delete, Read, Write, Chmod, Chown:
		if want.Recursive != got.Recursive {
			return false
		}
	}
	if want.Kind == Unknown && want.Recursive && !got.Recursive {
		return false
	}
	if want.Kind == Write && want.Append != got.Append {
		return false
	}
	return true
}

func shHasEffect(list []Effect, want Effect) bool {
	for _, g := range list {
		if shEffectMatches(want, g) {
			return true
		}
	}
	return false
}

func shDumpEffects(list []Effect) string {
	out := ""
	for _, e := range list {
		b, _ := json.Marshal(e)
		out += "\n\t" + string(b)
	}
	return out
}

// shUnk says what a case expects of Unknown effects.
type shUnk int

const (
	shUnkNo  shUnk = iota // no Unknown may appear
	shUnkYes              // at least one Unknown must appear
	shUnkAny              // code given to an interpreter reader: either
)

type shellCase struct {
	cmd  string
	want []Effect
	unk  shUnk
	not  []Effect // effects that must not appear
}

func checkShellCase(t *testing.T, ctx Context, c shellCase) {
	t.Helper()
	got := Shell(c.cmd, ctx)
	for _, w := range c.want {
		if !shHasEffect(got, w) {
			b, _ := json.Marshal(w)
			t.Errorf("%q: missing %s; got:%s", c.cmd, b, shDumpEffects(got))
		}
	}
	for _, n := range c.not {
		if shHasEffect(got, n) {
			b, _ := json.Marshal(n)
			t.Errorf("%q: unexpected %s; got:%s", c.cmd, b, shDumpEffects(got))
		}
	}
	hasUnk := shHasEffect(got, eUnk())
	switch {
	case c.unk == shUnkNo && hasUnk:
		t.Errorf("%q: unexpected Unknown; got:%s", c.cmd, shDumpEffects(got))
	case c.unk == shUnkYes && !hasUnk:
		t.Errorf("%q: an Unknown was expected; got:%s", c.cmd, shDumpEffects(got))
	}
}
