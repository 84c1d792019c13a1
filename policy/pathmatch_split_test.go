package policy

import (
	"path"
	"strings"
	"testing"
)

// splitPathMatch is path_match read the plain way, as an oracle: both
// operands split into elements, "**" taking none or one more element at a
// time.
func splitPathMatch(pattern, p string) bool {
	if pattern == "" || p == "" {
		return false
	}
	return splitElems(strings.Split(pattern, "/"), strings.Split(p, "/"))
}

func splitElems(pat, el []string) bool {
	switch {
	case len(pat) == 0:
		return len(el) == 0
	case pat[0] == "**":
		return splitElems(pat[1:], el) || len(el) > 0 && splitElems(pat, el[1:])
	case len(el) == 0:
		return false
	}
	ok, err := path.Match(pat[0], el[0])
	return err == nil && ok && splitElems(pat[1:], el[1:])
}

// pathMatch gives the split reading's answer on every pair of a set of
// patterns and paths with empty elements, leading and trailing slashes,
// "**" anywhere and globs.
func TestPathMatchIsTheSplitReading(t *testing.T) {
	pats := []string{"/etc/**", "**", "**/x", "/**/", "/a/**/b", "a/**/**/b", "/dev/**", "/home/*/.ssh/**",
		"*", "/", "//", "/a/", "a//b", "**/**", "/a/*/c/**/d*", "[a-", "/etc/passwd", "~/.ssh/id_*", "/a/**/b/**"}
	paths := []string{"/etc/passwd", "/etc", "/etc/", "/", "//", "x", "a/x", "/a/b", "/a/x/y/b", "a//b", "a/b",
		"/dev/sda1", "/home/ann/.ssh/id_rsa", "/a/q/c/r/s/dz", "/a/b/", "b", "/a/b/c/b", "~/.ssh/id_ed25519"}
	for _, pt := range pats {
		for _, p := range paths {
			if got, want := pathMatch(pt, p), splitPathMatch(pt, p); got != want {
				t.Errorf("path_match(%q, %q) = %v, the split reading says %v", p, pt, got, want)
			}
		}
	}
}

// FuzzPathMatchIsTheSplitReading: any pattern and path, the same answer.
func FuzzPathMatchIsTheSplitReading(f *testing.F) {
	f.Add("/a/**/b", "/a/x/b")
	f.Add("**/x", "x")
	f.Add("/etc/**", "/etc/")
	f.Fuzz(func(t *testing.T, pt, p string) {
		if len(pt) > 64 || len(p) > 64 || strings.Count(pt, "**") > 4 {
			return
		}
		if got, want := pathMatch(pt, p), splitPathMatch(pt, p); got != want {
			t.Errorf("path_match(%q, %q) = %v, the split reading says %v", p, pt, got, want)
		}
	})
}

// A compiled pattern list answers as path_match over the same list, one
// pattern at a time.
func TestPathSetIsPathMatchOverTheList(t *testing.T) {
	pats := []string{"/etc/**", "**", "**/x", "/**/", "/a/**/b", "a/**/**/b", "/dev/**", "/home/*/.ssh/**",
		"*", "/", "//", "/a/", "a//b", "**/**", "/a/*/c/**/d*", "[a-", "/etc/passwd", "~/.ssh/id_*", "/a/**/b/**", "", `/a/\*`}
	paths := []string{"/etc/passwd", "/etc", "/etc/", "/", "//", "x", "a/x", "/a/b", "/a/x/y/b", "a//b", "a/b", "",
		"/dev/sda1", "/home/ann/.ssh/id_rsa", "/a/q/c/r/s/dz", "/a/b/", "b", "/a/b/c/b", "~/.ssh/id_ed25519", "/a/*"}
	for i := range pats {
		for j := i; j <= len(pats); j++ {
			list := pats[i:j]
			set := compilePathSet(list)
			for _, p := range paths {
				want := false
				for _, pt := range list {
					want = want || pathMatch(pt, p)
				}
				if got := set.match(p); got != want {
					t.Errorf("path_match(%q, %q) = %v over the list, %v compiled", p, list, want, got)
				}
			}
		}
	}
}

// FuzzPathSetIsPathMatch: one pattern, any path, the same answer.
func FuzzPathSetIsPathMatch(f *testing.F) {
	f.Add("**/.ssh/id_*", "/home/a/.ssh/id_rsa")
	f.Add("/etc/**", "/etc")
	f.Fuzz(func(t *testing.T, pt, p string) {
		if len(pt) > 64 || len(p) > 64 || strings.Count(pt, "**") > 4 {
			return
		}
		if got, want := compilePathSet([]string{pt}).match(p), pathMatch(pt, p); got != want {
			t.Errorf("path_match(%q, %q) = %v, compiled %v", p, pt, want, got)
		}
	})
}
