package redact

import (
	"regexp"
	"strings"
	"sync"
)

// detector finds one kind of secret in text. When group is non-zero, only
// that submatch is the secret (the rest is context such as "api_key=").
type detector struct {
	kind string
	re   *regexp.Regexp // the pattern; nil for a built-in one, compiled by lazy
	// lazy compiles a built-in pattern the first time a text holds one of
	// its hints, so that a process that never redacts (every ahp command
	// but serve) does not pay for it at start.
	lazy  func() *regexp.Regexp
	group int
	// valid, when set, filters out matches that only look like secrets
	// (placeholders such as api_key=YOUR_API_KEY).
	valid func(string) bool
	// hint lists literals (compared without case) of which a text must hold
	// one for the pattern to match; it spares the regexp most texts. Nil
	// means no hint: the regexp always runs.
	hint []string
}

// builtin are the built-in detectors. Private keys are matched from the
// BEGIN line through the END line (or to the end of the text when it is
// cut off).
var builtin = []detector{
	{kind: "private_key", hint: []string{"private key"}, lazy: lazyRE(
		`(?s)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\z)`)},
	{kind: "aws_access_key", hint: []string{"akia", "asia", "abia", "acca"},
		lazy: lazyRE(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{kind: "aws_secret_key", hint: []string{"secret"}, lazy: lazyRE(
		`(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})`), group: 1},
	{kind: "github_token", hint: []string{"gh", "github_pat_"},
		lazy: lazyRE(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`)},
	{kind: "slack_token", hint: []string{"xox"}, lazy: lazyRE(`\bxox[abposr]-[A-Za-z0-9-]{10,250}`)},
	{kind: "slack_webhook", hint: []string{"hooks.slack.com"},
		lazy: lazyRE(`https://hooks\.slack\.com/services/[A-Za-z0-9_/-]{20,}`)},
	{kind: "google_api_key", hint: []string{"aiza"}, lazy: lazyRE(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{kind: "stripe_key", hint: []string{"_live_"}, lazy: lazyRE(`\b[rs]k_live_[0-9A-Za-z]{20,}\b`)},
	{kind: "api_key", hint: []string{"key", "token", "secret"}, lazy: lazyRE(
		`(?i)\b(?:api[_-]?key|api[_-]?token|access[_-]?token|auth[_-]?token|secret[_-]?key|client[_-]?secret)["']?\s*[:=]\s*["']?([A-Za-z0-9_./+=-]{12,})`),
		group: 1, valid: looksRandom},
}

// hintsByByte lists, for each byte (both ASCII cases), the hints of the
// built-in detectors that start with it, so that one pass over a text tells
// whether any detector can match it.
var hintsByByte = func() (t [256][]string) {
	for i := range builtin {
		for _, h := range builtin[i].hint {
			c := h[0]
			t[c] = append(t[c], h)
			if c >= 'a' && c <= 'z' {
				t[c-'a'+'A'] = append(t[c-'a'+'A'], h)
			}
		}
	}
	return t
}()

// anyHint reports whether s holds the hint of some built-in detector:
// when it does not, no built-in detector can match s.
func anyHint[T ~string | ~[]byte](s T) bool {
	for i := 0; i < len(s); i++ {
		for _, h := range hintsByByte[s[i]] {
			if len(s)-i >= len(h) && prefixFold(s[i:], h) {
				return true
			}
		}
	}
	return false
}

// prefixFold reports whether s starts with h (lower case), ignoring ASCII
// case; len(s) >= len(h).
func prefixFold[T ~string | ~[]byte](s T, h string) bool {
	for j := 0; j < len(h); j++ {
		if lower(s[j]) != h[j] {
			return false
		}
	}
	return true
}

// builtinKind reports whether kind is the kind of a built-in detector.
func builtinKind(kind string) bool {
	for i := range builtin {
		if builtin[i].kind == kind {
			return true
		}
	}
	return false
}

// BuiltinKinds returns the kinds of the built-in detectors, in detection order.
func BuiltinKinds() []string {
	out := make([]string, len(builtin))
	for i := range builtin {
		out[i] = builtin[i].kind
	}
	return out
}

// markerRE matches a marker a Redactor wrote: [REDACTED:kind:fingerprint].
var markerRE = lazyRE(`\[REDACTED:([a-z0-9_]{1,64}):[0-9a-f]{8}\]`)

// lazyRE returns a function that compiles expr on its first call and
// returns the same Regexp on every call.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// pattern returns the detector's compiled pattern.
func (p *detector) pattern() *regexp.Regexp {
	if p.re != nil {
		return p.re
	}
	return p.lazy()
}

// markerHint is the literal every marker contains (lower case).
const markerHint = "[redacted:"

// looksRandom rejects placeholder values: a real key mixes in digits.
func looksRandom(s string) bool { return strings.ContainsAny(s, "0123456789") }

// matches returns the [start, end) spans of one detector's secrets.
func (p *detector) matches(s string) [][2]int {
	if !hasHint(s, p.hint) {
		return nil
	}
	var out [][2]int
	for _, m := range p.pattern().FindAllStringSubmatchIndex(s, -1) {
		start, end := m[2*p.group], m[2*p.group+1]
		if start < 0 || (p.valid != nil && !p.valid(s[start:end])) {
			continue
		}
		out = append(out, [2]int{start, end})
	}
	return out
}

// markerKinds calls fn with the kind of each marker of a built-in kind in s.
// A marker stands for the secret it replaced, so that a redacted record
// re-decided by replay finds the same kinds of secret as the live decision.
func markerKinds(s string, fn func(kind string) bool) bool {
	if indexFold(s, markerHint) < 0 {
		return true
	}
	for _, m := range markerRE().FindAllStringSubmatch(s, -1) {
		if builtinKind(m[1]) && !fn(m[1]) {
			return false
		}
	}
	return true
}

// FindKinds adds to found the kind of each built-in secret in s, and of each
// redaction marker of a built-in kind (a marker counts as the secret it
// replaced).
func FindKinds(s string, found map[string]bool) {
	for i := range builtin {
		p := &builtin[i]
		if !found[p.kind] && len(p.matches(s)) > 0 {
			found[p.kind] = true
		}
	}
	markerKinds(s, func(k string) bool { found[k] = true; return true })
}

// HasSecret reports whether s holds a built-in secret or a redaction marker
// of a built-in kind.
func HasSecret(s string) bool {
	for i := range builtin {
		if len(builtin[i].matches(s)) > 0 {
			return true
		}
	}
	hit := false
	markerKinds(s, func(string) bool { hit = true; return false })
	return hit
}

// Plain replaces every built-in secret in s with [REDACTED:kind], without
// a fingerprint (the policy function redact_secrets, whose result goes back
// to the agent).
func Plain(s string) string {
	for i := range builtin {
		p := &builtin[i]
		spans := p.matches(s)
		if len(spans) == 0 {
			continue
		}
		var b strings.Builder
		last := 0
		for _, sp := range spans {
			b.WriteString(s[last:sp[0]])
			b.WriteString("[REDACTED:" + p.kind + "]")
			last = sp[1]
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	return s
}

// hasHint reports whether s contains one of hints (lower-case ASCII),
// ignoring ASCII case. No hints means yes.
func hasHint(s string, hints []string) bool {
	if len(hints) == 0 {
		return true
	}
	for _, h := range hints {
		if indexFold(s, h) >= 0 {
			return true
		}
	}
	return false
}

// IndexFold is strings.Index ignoring ASCII case; needle must be lower case.
func IndexFold(s, needle string) int { return indexFold(s, needle) }

// indexFold is strings.Index ignoring ASCII case; needle is lower case.
func indexFold(s, needle string) int {
	n := len(needle)
	if n == 0 {
		return 0
	}
	lo, up := needle[0], needle[0]
	if lo >= 'a' && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	for i := 0; i+n <= len(s); i++ {
		// Jump to the next byte that can start the needle.
		j := strings.IndexByte(s[i:len(s)-n+1], lo)
		if up != lo {
			if k := strings.IndexByte(s[i:len(s)-n+1], up); k >= 0 && (j < 0 || k < j) {
				j = k
			}
		}
		if j < 0 {
			return -1
		}
		i += j
		k := 1
		for k < n && lower(s[i+k]) == needle[k] {
			k++
		}
		if k == n {
			return i
		}
	}
	return -1
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
