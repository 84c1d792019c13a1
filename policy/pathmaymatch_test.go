package policy

import (
	"strings"
	"testing"
)

func TestPathMayMatch(t *testing.T) {
	cases := []struct {
		pattern, glob string
		want          bool
	}{
		{"**/.ssh/id_*", "/home/ann/.ssh/id_*", true},
		{"**/.ssh/id_*", "/home/ann/.ss?/id_rsa", true},
		{"**/.ssh/*", "/home/ann/.ssh/*", true},
		{"**/.aws/credentials", "/home/ann/.aws/cred*", true},
		{"**/.aws/credentials", "/home/ann/.aws/[c]redentials", true},
		{"**/.aws/credentials", "/home/ann/.aws/*", true},
		{"/etc/shadow", "/etc/sha*", true},
		{"**/privkey*.pem", "/srv/priv*", true},
		{"**/.kube/config", "/home/ann/.kube/conf*", true},
		// a plain path is path_match's
		{"**/.ssh/id_*", "/home/ann/.ssh/id_rsa", true},
		{"**/.ssh/id_*", "/home/ann/notes.txt", false},
		// * skips dot files, as bash does
		{"**/.ssh/id_*", "/home/ann/*/id_rsa", false},
		{"**/.netrc", "/home/ann/*", false},
		// a bare * after ** is not taken for any name
		{"**/_netrc", "/work/proj/*", false},
		{"**/privkey*.pem", "/work/proj/*", false},
		{"**/privkey*.pem", "/work/proj/*.pem", false},
		{"**/.aws/credentials", "/home/ann/*.txt", false},
		{"/etc/shadow", "/etc/*.conf", false},
		{"**/.ssh/id_*", "/work/proj/src/*.go", false},
	}
	for _, c := range cases {
		if got := pathMayMatch(c.pattern, c.glob); got != c.want {
			t.Errorf("pathMayMatch(%q, %q) = %v, want %v", c.pattern, c.glob, got, c.want)
		}
	}
}

// TestPathMayMatchDotFilter: the dot filter of path_may_match (a pattern
// with a dot element is skipped for a glob with none) never skips a
// pattern the glob may name: element by element matching agrees.
func TestPathMayMatchDotFilter(t *testing.T) {
	pats := []string{"**/.ssh/id_*", "**/.aws/credentials", "/etc/shadow", "/etc/**/*.key", "**/privkey*.pem",
		"**/.config/gcloud/**", "~/.ssh/*", "/var/run/secrets/**", "**/.env", "**/.netrc", "**/.ssh", "/root/.*",
		"**/site-packages/*.pth", "**/.gnupg/**", "**/Library/Keychains/**"}
	globs := []string{"/w/bin/*", "/home/ann/*/id_rsa", "/home/ann/.*/id_rsa", "/home/ann/.ssh/*", "/etc/*",
		"/etc/ssl/*/*.key", "/w/*.pem", "/w/.e*", "/home/ann/.ss?/id_rsa", "/w/build/**/*.o", "/home/*/.aws/*",
		"/srv/*/*.key", "/*/shadow", `/home/ann/\.ssh/*`, "/root/*", "/root/.*", "/home/ann/*", "/home/ann/.*",
		"/usr/lib/python3/*/x.pth", "/home/ann/Library/*/login.keychain-db"}
	pl := newPatternList(pats)
	for _, g := range globs {
		ge := strings.Split(g, "/")
		gDot := false
		for _, e := range ge {
			gDot = gDot || strings.HasPrefix(e, ".") || strings.HasPrefix(e, `\.`)
		}
		for i, el := range pl.elems {
			if mayMatchElems(el, ge, 0, false) && pl.dot[i] && !gDot {
				t.Errorf("%s may name what %s matches, but the filter skips it", g, pats[i])
			}
		}
	}
}
