package policy

import "strings"

// globMatch reports whether s matches pattern, where '*' matches any run of
// characters (including none and including '/'), '?' matches exactly one
// byte, and every other byte matches itself. Matching is case-sensitive.
func globMatch(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// globAny reports whether s matches any of patterns.
func globAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if globMatch(p, s) {
			return true
		}
	}
	return false
}

// isGlob reports whether pattern has wildcards.
func isGlob(pattern string) bool { return strings.ContainsAny(pattern, "*?") }
