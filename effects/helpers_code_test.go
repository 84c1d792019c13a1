package effects

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// withShellProbe replaces the shell reader for the test: a command line
// handed to it is recorded as one "sh: LINE" effect, so that the tables
// see exactly what the interpreter and tool readers give the shell reader.
func withShellProbe(t testing.TB) {
	t.Helper()
	prev := shellReader
	shellReader = func(s *state, script string) {
		s.add(Effect{Kind: Run, Program: "<sh>", Argv: []string{script}})
	}
	t.Cleanup(func() { shellReader = prev })
}

// brief writes an effect as one short line for the tables.
func brief(e Effect) string {
	var b strings.Builder
	switch e.Kind {
	case Run:
		if e.Program == "<sh>" {
			if e.Remote() != "" {
				return "sh: " + strings.Join(e.Argv, " ") + " @" + e.Remote()
			}
			return "sh: " + strings.Join(e.Argv, " ")
		}
		fmt.Fprintf(&b, "run %s", strings.Join(e.Argv, " "))
	case Read, Write, Create, Delete:
		b.WriteString(string(e.Kind))
		if e.Recursive {
			b.WriteString(" -r")
		}
		if e.Append {
			b.WriteString(" +a")
		}
		b.WriteString(" " + e.Path)
		if e.Dest != "" {
			b.WriteString(" -> " + e.Dest)
		}
	case Move:
		fmt.Fprintf(&b, "move %s -> %s", e.Path, e.Dest)
	case Chmod, Chown:
		fmt.Fprintf(&b, "%s%s %s %s", e.Kind, map[bool]string{true: " -r"}[e.Recursive], e.Mode(), e.Path)
	case Connect, Listen:
		fmt.Fprintf(&b, "%s %s", e.Kind, endpointText(e))
	case Send:
		fmt.Fprintf(&b, "send %s -> %s", e.Source(), endpointText(e))
	case Download:
		fmt.Fprintf(&b, "download %s", endpointText(e))
		if e.Into() != "" {
			b.WriteString(" | " + e.Into())
		} else {
			b.WriteString(" > " + e.Path)
		}
	case Signal:
		fmt.Fprintf(&b, "signal %s %s", e.Signal(), strings.Join(e.Targets(), ","))
	case Privilege:
		fmt.Fprintf(&b, "privilege %s", e.Program)
	case Unknown:
		if e.Limit {
			return "unknown!"
		}
		return "unknown"
	default:
		return string(e.Kind)
	}
	return b.String()
}

func endpointText(e Effect) string {
	if e.URL() != "" {
		return e.URL()
	}
	return e.Host() + ":" + e.Port()
}

// checkEffects compares effects with the expected brief lines, in any
// order (duplicates count).
func checkEffects(t *testing.T, name string, got []Effect, want []string) {
	t.Helper()
	g := make([]string, len(got))
	for i, e := range got {
		g[i] = brief(e)
	}
	sg, sw := slices.Clone(g), slices.Clone(want)
	slices.Sort(sg)
	slices.Sort(sw)
	if !slices.Equal(sg, sw) {
		t.Errorf("%s:\n got  %q\n want %q", name, g, want)
		for _, e := range got {
			if e.Kind == Unknown {
				t.Logf("  unknown: %s", e.Reason())
			}
		}
	}
}
