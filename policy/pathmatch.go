package policy

import (
	"path"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
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
	return matchElems(strings.Split(pattern, "/"), strings.Split(p, "/"))
}

func matchElems(pat, elems []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for len(rest) > 0 && rest[0] == "**" {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				return true
			}
			for i := 0; i <= len(elems); i++ {
				if matchElems(rest, elems[i:]) {
					return true
				}
			}
			return false
		}
		if len(elems) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], elems[0]); err != nil || !ok {
			return false
		}
		pat, elems = pat[1:], elems[1:]
	}
	return len(elems) == 0
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
