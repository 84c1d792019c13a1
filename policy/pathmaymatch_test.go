package policy

import "testing"

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
