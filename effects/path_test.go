package effects

import "testing"

func TestResolve(t *testing.T) {
	ctx := Context{Cwd: "/work/proj", Home: "/home/ann", User: "ann"}
	cases := []struct {
		ctx      Context
		in, want string
	}{
		{ctx, "a/b", "/work/proj/a/b"},
		{ctx, "../x", "/work/x"},
		{ctx, "/etc/../etc/passwd", "/etc/passwd"},
		{ctx, "~", "/home/ann"},
		{ctx, "~/.ssh/id_rsa", "/home/ann/.ssh/id_rsa"},
		{ctx, "~ann/.bashrc", "/home/ann/.bashrc"},
		{ctx, "~bob/.bashrc", "~bob/.bashrc"},
		{Context{}, "a/./b", "a/b"},
		{Context{}, "~/.aws", "~/.aws"},
		{Context{Cwd: "/"}, "..", "/"},
	}
	for _, c := range cases {
		s := newState(c.ctx)
		if got := s.resolve(c.in); got != c.want {
			t.Errorf("resolve(%q) in %+v = %q, want %q", c.in, c.ctx, got, c.want)
		}
	}
}
