package redact

import (
	"regexp"
	"slices"
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
	// scan, when set, replaces the pattern: it returns the spans of the
	// secrets itself (detectors that look at more than one match).
	scan func(s string) [][2]int
	// hint lists literals (compared without case) of which a text must hold
	// one for the pattern to match; it spares the regexp most texts. Nil
	// means no hint: the regexp always runs.
	hint []string
}

// builtin are the built-in detectors, in detection order: where two find
// overlapping text, the earlier one's kind is kept. Private keys are
// matched from the BEGIN line through the END line (or to the end of the
// text when it is cut off). The key formats follow the providers' published
// prefixes (the same facts secret scanners such as gitleaks encode).
var builtin = []detector{
	{kind: "private_key", hint: []string{"private key"}, lazy: lazyRE(
		`(?s)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\z)`), valid: notQuotedHeader},
	{kind: "aws_access_key", hint: awsIDHints, lazy: awsIDRE},
	{kind: "aws_secret_key", hint: []string{"secret_access", "secretaccess"}, lazy: lazyRE(
		`(?i)aws_?secret_?access_?key["']?(?:\s*[:=]\s*|\s+)["']?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`), group: 1, valid: mixedBase64},
	// A 40-character secret access key written near its access key id, in
	// any words ("use AKIA… with secret Xr9…").
	{kind: "aws_secret_key", hint: awsIDHints, scan: awsPairSecrets},
	{kind: "github_token", hint: []string{"gh", "github_pat_"},
		lazy: lazyRE(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`)},
	{kind: "gitlab_token", hint: []string{"glpat-"}, lazy: lazyRE(`\bglpat-[A-Za-z0-9_-]{20,}`)},
	{kind: "slack_token", hint: []string{"xox", "xapp-"},
		lazy: lazyRE(`\bxox[abposre]-[A-Za-z0-9-]{10,250}|\bxapp-\d-[A-Za-z0-9-]{10,250}`)},
	{kind: "slack_webhook", hint: []string{"hooks.slack.com"},
		lazy: lazyRE(`https://hooks\.slack\.com/services/[A-Za-z0-9_/-]{20,}`)},
	{kind: "google_api_key", hint: []string{"aiza"}, lazy: lazyRE(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{kind: "google_oauth_secret", hint: []string{"gocspx-"}, lazy: lazyRE(`\bGOCSPX-[0-9A-Za-z_-]{28}`)},
	{kind: "stripe_key", hint: []string{"_live_", "_prod_"}, lazy: lazyRE(`\b[rs]k_(?:live|prod)_[0-9A-Za-z]{20,}\b`)},
	{kind: "anthropic_key", hint: []string{"sk-ant-"},
		lazy: lazyRE(`\bsk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{32,}`)},
	{kind: "openai_key", hint: []string{"sk-"}, lazy: lazyRE(
		`\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,}|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b`)},
	{kind: "npm_token", hint: []string{"npm_"}, lazy: lazyRE(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{kind: "pypi_token", hint: []string{"pypi-"}, lazy: lazyRE(`\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`)},
	{kind: "huggingface_token", hint: []string{"hf_"}, lazy: lazyRE(`\bhf_[A-Za-z]{34}\b`), valid: notOneCase},
	// A literal value assigned to a name that ends in a secret word
	// (OPENAI_API_KEY=…, client_secret: …, --token …): see assign.go.
	{kind: assignKind, hint: assignHints, scan: assignedSecrets},
}

// hintsByByte lists, for each byte (both ASCII cases), the hints of the
// built-in detectors that start with it, so that one pass over a text tells
// whether any detector can match it.
var hintsByByte = func() (t [256][]string) {
	var all []string
	for i := range builtin {
		for _, h := range builtin[i].hint {
			if !slices.Contains(all, h) {
				all = append(all, h)
			}
		}
	}
	for _, h := range all {
		if subsumed(h, all) {
			continue
		}
		c := h[0]
		t[c] = append(t[c], h)
		if c >= 'a' && c <= 'z' {
			t[c-'a'+'A'] = append(t[c-'a'+'A'], h)
		}
	}
	return t
}()

// hintSecond holds, for each byte, the second bytes (lower case) of the
// hints in hintsByByte: a byte pair that starts no hint is passed over
// with one bit test. Every hint has at least two bytes.
var hintSecond = func() (t [256]byteSet) {
	for c := range hintsByByte {
		for _, h := range hintsByByte[c] {
			t[c].add(h[1])
		}
	}
	return t
}()

// byteSet is a set of bytes.
type byteSet [4]uint64

func (b *byteSet) add(c byte)      { b[c>>6] |= 1 << (c & 63) }
func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }

// subsumed reports whether a text holding hint h always holds a shorter
// hint of all that h starts with, so that anyHint need not look for h.
func subsumed(h string, all []string) bool {
	for _, o := range all {
		if len(o) < len(h) && strings.HasPrefix(h, o) {
			return true
		}
	}
	return false
}

// anyHint reports whether s holds the hint of some built-in detector:
// when it does not, no built-in detector can match s.
func anyHint[T ~string | ~[]byte](s T) bool {
	for i := 0; i+1 < len(s); i++ {
		if !hintSecond[s[i]].has(lower(s[i+1])) {
			continue
		}
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

// BuiltinKinds returns the kinds of the built-in detectors, in detection
// order, each once.
func BuiltinKinds() []string {
	out := make([]string, 0, len(builtin))
	for i := range builtin {
		if !slices.Contains(out, builtin[i].kind) {
			out = append(out, builtin[i].kind)
		}
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

// notQuotedHeader rejects a private-key BEGIN line that a quote closes at
// once with no key material after it: the header written as a search
// pattern (grep -rl '-----BEGIN RSA PRIVATE KEY-----' .), not a key. A
// quote followed by a run of base64 (a key pasted after a stray quote) is
// still a key.
func notQuotedHeader(m string) bool {
	i := strings.Index(m, "KEY-----")
	if i < 0 {
		return true
	}
	rest := m[i+len("KEY-----"):]
	rest = strings.TrimPrefix(rest, `\`)
	if rest == "" || (rest[0] != '\'' && rest[0] != '"') {
		return true
	}
	run := 0
	for _, c := range rest {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/', c == '=':
			run++
			if run >= 40 {
				return true
			}
		case c == '\n' || c == '\r':
		default:
			run = 0
		}
	}
	return false
}

// markerHint is the literal every marker contains (lower case).
const markerHint = "[redacted:"

// matches returns the [start, end) spans of one detector's secrets.
func (p *detector) matches(s string) [][2]int {
	if !hasHint(s, p.hint) {
		return nil
	}
	if p.scan != nil {
		return p.scan(s)
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

// builtinSpans returns the non-overlapping secrets the built-in detectors
// find in s, in order; where two overlap, the earlier detector's is kept.
func builtinSpans(s string) []span {
	if !anyHint(s) {
		return nil
	}
	var out []span
	for i := range builtin {
		out = addSpans(out, &builtin[i], s)
	}
	slices.SortFunc(out, func(a, b span) int { return a.start - b.start })
	return out
}

// addSpans appends to out the matches of d in s that overlap none of out.
func addSpans(out []span, d *detector, s string) []span {
	n := len(out)
	for _, m := range d.matches(s) {
		overlaps := false
		for _, o := range out[:n] {
			if m[0] < o.end && o.start < m[1] {
				overlaps = true
				break
			}
		}
		if !overlaps {
			out = append(out, span{m[0], m[1], d.kind})
		}
	}
	return out
}

// FindKinds adds to found the kind of each built-in secret in s, and of each
// redaction marker of a built-in kind (a marker counts as the secret it
// replaced).
func FindKinds(s string, found map[string]bool) {
	for _, sp := range builtinSpans(s) {
		found[sp.kind] = true
	}
	markerKinds(s, func(k string) bool { found[k] = true; return true })
}

// HasSecret reports whether s holds a built-in secret or a redaction marker
// of a built-in kind.
func HasSecret(s string) bool {
	if anyHint(s) {
		for i := range builtin {
			if len(builtin[i].matches(s)) > 0 {
				return true
			}
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
	spans := builtinSpans(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString("[REDACTED:" + sp.kind + "]")
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
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
// It jumps from one possible first byte to the next, remembering where the
// next of each case is, so that a case that is rare (or absent) in s is
// looked for once, not at every step.
func indexFold(s, needle string) int {
	n := len(needle)
	if n == 0 {
		return 0
	}
	last := len(s) - n + 1 // a match starts before last
	lo, up := needle[0], needle[0]
	if lo >= 'a' && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	nextLo, nextUp := -2, -2 // the next index of each case at or after i; -1 none, -2 not looked for
	if up == lo {
		nextUp = -1
	}
	next := func(c byte, i int) int {
		if k := strings.IndexByte(s[i:last], c); k >= 0 {
			return i + k
		}
		return -1
	}
	for i := 0; i < last; i++ {
		if nextLo != -1 && nextLo < i {
			nextLo = next(lo, i)
		}
		if nextUp != -1 && nextUp < i {
			nextUp = next(up, i)
		}
		switch {
		case nextLo < 0 && nextUp < 0:
			return -1
		case nextUp < 0 || (nextLo >= 0 && nextLo < nextUp):
			i = nextLo
		default:
			i = nextUp
		}
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
