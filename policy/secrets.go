package policy

import (
	"regexp"
	"sort"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// secretPattern finds one kind of secret in text. When group is non-zero,
// only that submatch is the secret (the rest is context such as "api_key=").
type secretPattern struct {
	kind  string
	re    *regexp.Regexp
	group int
	// valid, when set, filters out matches that only look like secrets
	// (placeholders such as api_key=YOUR_API_KEY).
	valid func(string) bool
	// hint lists literals (compared without case) of which a text must hold
	// one for the pattern to match; it spares the regexp most texts.
	hint []string
}

// secretPatterns are the detectors behind secret_kinds, has_secret and
// redact_secrets. Private keys are redacted from the BEGIN line through
// the END line (or to the end of the text when it is cut off).
var secretPatterns = []secretPattern{
	{kind: "private_key", hint: []string{"private key"}, re: regexp.MustCompile(
		`(?s)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\z)`)},
	{kind: "aws_access_key", hint: []string{"akia", "asia", "abia", "acca"},
		re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{kind: "aws_secret_key", hint: []string{"secret"}, re: regexp.MustCompile(
		`(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})`), group: 1},
	{kind: "github_token", hint: []string{"gh", "github_pat_"},
		re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`)},
	{kind: "slack_token", hint: []string{"xox"}, re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,250}`)},
	{kind: "slack_webhook", hint: []string{"hooks.slack.com"},
		re: regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9_/-]{20,}`)},
	{kind: "google_api_key", hint: []string{"aiza"}, re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{kind: "stripe_key", hint: []string{"_live_"}, re: regexp.MustCompile(`\b[rs]k_live_[0-9A-Za-z]{20,}\b`)},
	{kind: "api_key", hint: []string{"key", "token", "secret"}, re: regexp.MustCompile(
		`(?i)\b(?:api[_-]?key|api[_-]?token|access[_-]?token|auth[_-]?token|secret[_-]?key|client[_-]?secret)["']?\s*[:=]\s*["']?([A-Za-z0-9_./+=-]{12,})`),
		group: 1, valid: looksRandom},
}

// looksRandom rejects placeholder values: a real key mixes in digits.
func looksRandom(s string) bool { return strings.ContainsAny(s, "0123456789") }

// matches returns the [start, end) spans of one pattern's secrets.
func (p *secretPattern) matches(s string) [][2]int {
	if !hasHint(s, p.hint) {
		return nil
	}
	var out [][2]int
	for _, m := range p.re.FindAllStringSubmatchIndex(s, -1) {
		start, end := m[2*p.group], m[2*p.group+1]
		if start < 0 || (p.valid != nil && !p.valid(s[start:end])) {
			continue
		}
		out = append(out, [2]int{start, end})
	}
	return out
}

// secretKindsIn adds the kinds of secret found in s to found.
func secretKindsIn(s string, found map[string]bool) {
	for i := range secretPatterns {
		p := &secretPatterns[i]
		if !found[p.kind] && len(p.matches(s)) > 0 {
			found[p.kind] = true
		}
	}
}

// redactString replaces every secret in s with [REDACTED:kind].
func redactString(s string) string {
	for i := range secretPatterns {
		p := &secretPatterns[i]
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

// forEachString calls fn with every string inside v (map values, list
// elements, nested), stopping early when fn returns false. Map keys are
// not visited.
func forEachString(v ref.Val, depth int, fn func(string) bool) (bool, error) {
	if depth > maxDepth {
		return false, errTooDeep
	}
	switch x := v.(type) {
	case types.String:
		return fn(string(x)), nil
	case *jsonObject:
		if err := x.scan(); err != nil {
			return false, err.(*types.Err)
		}
		for i := range x.members {
			if more, err := forEachString(x.value(i), depth+1, fn); !more || err != nil {
				return more, err
			}
		}
	case *types.Err:
		return false, x
	case traits.Mapper:
		it := x.Iterator()
		for it.HasNext() == types.True {
			if more, err := forEachString(x.Get(it.Next()), depth+1, fn); !more || err != nil {
				return more, err
			}
		}
	case traits.Lister:
		n, _ := x.Size().(types.Int)
		for i := types.Int(0); i < n; i++ {
			if more, err := forEachString(x.Get(i), depth+1, fn); !more || err != nil {
				return more, err
			}
		}
	}
	return true, nil
}

// celSecretKinds implements secret_kinds(dyn) -> list(string).
func celSecretKinds(v ref.Val) ref.Val {
	found := map[string]bool{}
	if _, err := forEachString(v, 0, func(s string) bool { secretKindsIn(s, found); return true }); err != nil {
		return types.WrapErr(err)
	}
	kinds := make([]string, 0, len(found))
	for k := range found {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return types.NewStringList(types.DefaultTypeAdapter, kinds)
}

// celHasSecret implements has_secret(dyn) -> bool.
func celHasSecret(v ref.Val) ref.Val {
	hit := false
	_, err := forEachString(v, 0, func(s string) bool {
		for i := range secretPatterns {
			if len(secretPatterns[i].matches(s)) > 0 {
				hit = true
				return false
			}
		}
		return true
	})
	if err != nil {
		return types.WrapErr(err)
	}
	return types.Bool(hit)
}

// celRedactSecrets implements redact_secrets(dyn) -> dyn: the same value
// with every secret inside its strings replaced by [REDACTED:kind].
func celRedactSecrets(v ref.Val) ref.Val {
	if s, ok := v.(types.String); ok {
		return types.String(redactString(string(s)))
	}
	if has := celHasSecret(v); has != types.True {
		return v // nothing to redact (or an error to pass on)
	}
	n, err := toNative(v, 0)
	if err != nil {
		return types.WrapErr(err)
	}
	out, err := nativeToVal(redactNative(n), 0)
	if err != nil {
		return types.WrapErr(err)
	}
	return out
}

// redactNative redacts the strings of a plain Go value in place.
func redactNative(v any) any {
	switch x := v.(type) {
	case string:
		return redactString(x)
	case map[string]any:
		for k, e := range x {
			x[k] = redactNative(e)
		}
	case []any:
		for i, e := range x {
			x[i] = redactNative(e)
		}
	}
	return v
}

// hasHint reports whether s contains one of hints (lower-case ASCII),
// ignoring ASCII case.
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
