package policy

import "testing"

func TestPathMatch(t *testing.T) {
	cases := []struct {
		pat, p string
		want   bool
	}{
		{"/etc/**", "/etc", true},
		{"/etc/**", "/etc/passwd", true},
		{"/etc/**", "/etc/ssh/sshd_config", true},
		{"/etc/**", "/etcetera", false},
		{"/home/*", "/home/ann", true},
		{"/home/*", "/home/ann/x", false},
		{"**/.ssh/id_*", "/home/ann/.ssh/id_rsa", true},
		{"**/.ssh/id_*", "~/.ssh/id_ed25519", true},
		{"**/.ssh/id_*", ".ssh/id_rsa", true},
		{"**/.ssh/id_*", "/home/ann/.ssh/known_hosts", false},
		{"/", "/", true},
		{"/*", "/usr", true},
		{"/*", "/usr/bin", false},
		{"~", "~", true},
		{"[", "[", false},
		{"", "/x", false},
	}
	for _, c := range cases {
		if got := pathMatch(c.pat, c.p); got != c.want {
			t.Errorf("pathMatch(%q, %q) = %v, want %v", c.pat, c.p, got, c.want)
		}
	}
}
