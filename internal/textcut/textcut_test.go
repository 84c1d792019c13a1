package textcut

import "testing"

func TestHead(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		head string
		left int
	}{
		{"abc", 10, "abc", 0},
		{"abc", 3, "abc", 0},
		{"abcdef", 4, "abcd", 2},
		{"abé", 3, "ab", 2}, // é is two bytes: the cut moves back
		{"é", 0, "", 2},
	} {
		if h, l := Head(c.s, c.n); h != c.head || l != c.left {
			t.Errorf("Head(%q, %d) = %q, %d; want %q, %d", c.s, c.n, h, l, c.head, c.left)
		}
	}
}
