package policy

import (
	"path"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// pathMatch reports whether the path p matches pattern, one path element
// at a time: "*", "?" and "[...]" match within an element (as path.Match),
// and an element "**" matches any number of elements, none included.
// "/etc/**" matches /etc and everything under it; "*/.ssh/id_*" needs
// exactly one element before .ssh, "**/.ssh/id_*" any number.
func pathMatch(pattern, p string) bool {
	if pattern == "" || p == "" {
		return false
	}
	return matchElemsIn(strings.Split(pattern, "/"), p, false)
}

// matchElemsIn matches the elements of a split pattern against those of
// the path p, which it walks without splitting (it runs for every path of
// every effect a rule reads). pDone marks a path with no element left,
// which the empty string alone cannot tell from one empty element.
func matchElemsIn(pat []string, p string, pDone bool) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for len(rest) > 0 && rest[0] == "**" {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				return true
			}
			q, qDone := p, pDone
			for {
				if matchElemsIn(rest, q, qDone) {
					return true
				}
				if qDone {
					return false
				}
				_, r, m := strings.Cut(q, "/")
				q, qDone = r, !m
			}
		}
		if pDone {
			return false
		}
		e, pr, pm := strings.Cut(p, "/")
		if ok, err := path.Match(pat[0], e); err != nil || !ok {
			return false
		}
		pat = pat[1:]
		p, pDone = pr, !pm
	}
	return pDone
}

// celPathMatch implements path_match(string, pattern or list of patterns).
func celPathMatch(p, patterns ref.Val) ref.Val {
	ps, err := celStringList(patterns)
	if err != nil {
		return err
	}
	s := string(p.(types.String))
	for _, pat := range ps {
		if pathMatch(pat, s) {
			return types.True
		}
	}
	return types.False
}

// celPathMatchHome implements path_match(path, patterns, home): as
// path_match(path, patterns), and a pattern that starts with "~" (the
// home, as written when it is not known) also matches with "~" standing
// for home, when home is an absolute path other than "/". The packs give
// it event.home, so that "~" in their patterns is the agent's home
// wherever it is (/var/lib/jenkins as well as /home/ann).
func celPathMatchHome(args ...ref.Val) ref.Val {
	if v := celPathMatch(args[0], args[1]); v != types.False {
		return v
	}
	h, ok := args[2].(types.String)
	if !ok || h == "" {
		return types.False
	}
	ps, err := celStringList(args[1])
	if err != nil {
		return err
	}
	return types.Bool(matchesAtHome(ps, string(args[0].(types.String)), string(h)))
}

// matchesAtHome reports whether p matches one of the patterns that start
// with "~", read with home (an absolute path other than "/", its own
// characters taken literally) for "~".
func matchesAtHome(patterns []string, p, home string) bool {
	home = strings.TrimSuffix(home, "/")
	if home == "" || home[0] != '/' {
		return false
	}
	home = globEscaper.Replace(home)
	for _, pat := range patterns {
		if (pat == "~" || strings.HasPrefix(pat, "~/")) && pathMatch(home+pat[1:], p) {
			return true
		}
	}
	return false
}

// globEscaper escapes the characters path.Match reads as a pattern.
var globEscaper = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)

// celCommandIn implements command_in(program, argv, commands): true when
// one of commands (each a list of words) names program as its first word
// and every other word of it is in argv, as an exact word. It does in Go
// what config.X.exists(p, p[0] == e.program && p.all(w, ...)) does in CEL.
func celCommandIn(args ...ref.Val) ref.Val {
	prog, ok := args[0].(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[0])
	}
	argv, err := celStringList(args[1])
	if err != nil {
		return err
	}
	lists, ok := args[2].(traits.Lister)
	if !ok {
		return types.NewErr("command_in: commands must be a list of lists of strings")
	}
	it := lists.Iterator()
	for it.HasNext() == types.True {
		words, err := celStringList(it.Next())
		if err != nil {
			return err
		}
		if len(words) == 0 || words[0] != string(prog) {
			continue
		}
		if allIn(words[1:], argv) {
			return types.True
		}
	}
	return types.False
}
