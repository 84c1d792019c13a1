package policy

import (
	"testing"

	"cel.dev/cel-go/common/types"
)

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

// TestPathMatchHome: path_match(path, patterns, home) reads "~" in a
// pattern as home too, home's own characters literally.
func TestPathMatchHome(t *testing.T) {
	for _, c := range []struct {
		path, pattern, home string
		want                bool
	}{
		{"/srv/agent", "~", "/srv/agent", true},
		{"/srv/agent/x", "~/*", "/srv/agent", true},
		{"/srv/agent/x", "~/*", "/srv/agent/", true},
		{"/srv/agent", "~", "", false},
		{"~", "~", "", true},
		{"/srv/agent", "~", "/srv/other", false},
		{"/srv/agentX", "~", "/srv/agent", false},
		{"/srv/a*b/x", "~/x", "/srv/a*b", true},
		{"/srv/aXb/x", "~/x", "/srv/a*b", false},
		{"/srv/agent", "/home/*", "/srv/agent", false},
		{"/home/ann", "/home/*", "", true},
		{"/", "~", "/", false},
		{"/x/y", "~/y", "x", false},
	} {
		got := celPathMatchHome(types.String(c.path), types.NewStringList(types.DefaultTypeAdapter, []string{c.pattern}), types.String(c.home))
		if got != types.Bool(c.want) {
			t.Errorf("path_match(%q, [%q], %q) = %v, want %v", c.path, c.pattern, c.home, got, c.want)
		}
	}
}
