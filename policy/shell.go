package policy

import (
	"strings"

	"github.com/ahp-go/ahp/effects"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// Payload helpers: where agents put a tool's input and its shell command.
// What a command does is read by package effects (event.effects), through
// a real shell parser; nothing here reads shell syntax.

// argumentHolders are the payload keys under which agents put tool input.
var argumentHolders = keys("arguments", "tool_input", "input", "params")

// commandKeys hold a shell command (a string, or an argv list).
var commandKeys = keys("command", "cmd", "script", "commands")

// keys boxes map keys once, so that lookups do not allocate.
func keys(names ...string) []ref.Val {
	out := make([]ref.Val, len(names))
	for i, n := range names {
		out[i] = types.String(n)
	}
	return out
}

// holders returns the payload itself and its argument objects.
func holders(payload ref.Val) (hs [5]traits.Mapper, n int) {
	top, ok := payload.(traits.Mapper)
	if !ok {
		return hs, 0
	}
	hs[0], n = top, 1
	for _, k := range argumentHolders {
		if v, found := top.Find(k); found {
			if m, ok := v.(traits.Mapper); ok {
				hs[n] = m
				n++
			}
		}
	}
	return hs, n
}

// stringsOf returns v as strings: a string, or the strings of a list.
func stringsOf(v ref.Val) []string {
	switch x := v.(type) {
	case types.String:
		return []string{string(x)}
	case traits.Lister:
		var out []string
		n, _ := x.Size().(types.Int)
		for i := types.Int(0); i < n; i++ {
			if s, ok := x.Get(i).(types.String); ok {
				out = append(out, string(s))
			}
		}
		return out
	}
	return nil
}

// shellCommand returns the shell command carried by a payload, "" if none.
// An argv list is written as a shell command line that reads back as the
// same words (see joinArgv); a "commands" list, which holds scripts, is
// joined with newlines; when several keys hold commands, they are joined
// with newlines.
func shellCommand(payload ref.Val) string {
	s, _ := shellCommandVal(payload).(types.String)
	return string(s)
}

// joinArgv is effects.JoinArgv: an argv list as a command line that reads
// back as exactly its words.
func joinArgv(argv []string) string { return effects.JoinArgv(argv) }

// shellCommandVal is shellCommand as a CEL string. A command held by a
// single string argument is returned as the payload's own value.
func shellCommandVal(payload ref.Val) ref.Val {
	var (
		first    string
		firstVal ref.Val
		rest     []string
	)
	hs, n := holders(payload)
	for _, m := range hs[:n] {
		for _, k := range commandKeys {
			v, found := m.Find(k)
			if !found {
				continue
			}
			var s string
			var sv ref.Val
			switch x := v.(type) {
			case types.String:
				s, sv = string(x), v
			default:
				if k == types.String("commands") {
					s = strings.Join(stringsOf(v), "\n") // scripts, one a line
				} else {
					s = joinArgv(stringsOf(v))
				}
			}
			switch {
			case s == "":
			case first == "":
				first, firstVal = s, sv
			default:
				rest = append(rest, s)
			}
		}
	}
	switch {
	case rest != nil:
		return types.String(first + "\n" + strings.Join(rest, "\n"))
	case firstVal != nil:
		return firstVal
	}
	return types.String(first)
}

// actionPaths returns the paths an action touches: the paths of the
// read, write, create, delete, move (source and destination), chmod and
// chown effects of the payload (and where a download is written), as
// event.effects has them.
func actionPaths(payload ref.Val) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, e := range payloadActs(payload) {
		switch e.Kind {
		case effects.Read, effects.Write, effects.Create, effects.Delete, effects.Chmod, effects.Chown, effects.Download:
			add(e.Path)
		case effects.Move:
			add(e.Path)
			add(e.Dest)
		}
	}
	return out
}

// payloadActs returns the effects of a payload: the evaluation's
// event.effects when payload is the event's own payload, else the effects
// package's reading of the object given (with no agent context).
func payloadActs(payload ref.Val) []effects.Effect {
	o, ok := payload.(*jsonObject)
	if !ok {
		return nil
	}
	if o.ev != nil {
		return o.ev.effects()
	}
	return payloadEffects(o, effects.Context{})
}
