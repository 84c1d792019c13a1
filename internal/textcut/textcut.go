// Package textcut cuts text for people to read (prompts, log lines) at a
// byte bound without splitting a UTF-8 sequence.
package textcut

import "unicode/utf8"

// Head returns the longest prefix of s of at most n bytes that ends at a
// rune boundary, and how many bytes of s it leaves out.
func Head(s string, n int) (head string, left int) {
	if len(s) <= n {
		return s, 0
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], len(s) - cut
}
