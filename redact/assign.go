package redact

import (
	"math"
	"strings"
)

// A secret is often written as an assignment to a name that says what it
// is: OPENAI_API_KEY=…, "client_secret": "…", --token …, password: ….
// The name may be a whole word or end in one after _, -, . or a lower-to-
// upper case change (GOOGLE_CLIENT_SECRET, x-api-key, auth.token,
// githubToken); a \b word boundary never matches after _, so the
// detector looks for the secret word itself and checks what comes before
// it in code. What is assigned must be a literal that looks random: a
// reference (${DB_PASSWORD}, $(gh auth token), os.environ["API_KEY"],
// get_token(), settings.SECRET_KEY), an identifier or a placeholder
// (YOUR_API_KEY, sk-…, <token>, xxxx) is not a secret.

// assignKind is the kind of a secret found by its name.
const assignKind = "api_key"

// assignHints are the literals one of which a text must hold for
// assignedSecrets to find anything.
var assignHints = []string{"key", "token", "secret", "passw", "passphrase"}

// assignRE finds a secret word followed by an assignment: group 1 is the
// word, group 2 the separator, group 3 the value. The word is followed
// directly (or through a closing quote) by the separator, so that only the
// end of a name is matched.
var assignRE = lazyRE(`(?i)((?:api|access|secret|auth|client|signing|encryption|master|app)[_.-]?key|token|secret|password|passwd|passphrase)` +
	`["'\x60]?(\s*(?::=|=>|[:=])\s*|\s+)["'\x60]?([A-Za-z0-9_./+=~-]{12,})`)

// notSecretTokens are the words that, before "token", name something that
// is not a credential: a page cursor, a count, a model's vocabulary.
var notSecretTokens = map[string]bool{
	"page": true, "next": true, "prev": true, "continuation": true, "cursor": true, "sync": true,
	"resume": true, "cancel": true, "cancellation": true, "max": true, "min": true, "num": true,
	"total": true, "count": true, "input": true, "output": true, "prompt": true, "completion": true,
	"eos": true, "bos": true, "pad": true, "unk": true, "sep": true, "cls": true, "mask": true,
	"special": true, "stop": true, "start": true, "end": true, "csrf": true, "xsrf": true,
}

// assignedSecrets returns the spans of the values assigned to secret names
// in s.
func assignedSecrets(s string) [][2]int {
	var out [][2]int
	re := assignRE()
	for pos := 0; pos < len(s); {
		m := re.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		for i := range m {
			if m[i] >= 0 {
				m[i] += pos
			}
		}
		wordStart, wordEnd := m[2], m[3]
		sep := s[m[4]:m[5]]
		vs, ve := m[6], m[7]
		// The next search starts just after the word: a rejected match may
		// hide another one inside its value.
		pos = wordEnd
		qual, ok := nameQualifier(s, wordStart)
		if !ok {
			continue
		}
		if strings.TrimSpace(sep) == "" && !flagName(s, wordStart) {
			// Only --api-key VALUE and the like take a value after a space;
			// in prose ("the token abc…") a space is not an assignment.
			continue
		}
		word := strings.ToLower(s[wordStart:wordEnd])
		if word == "token" && notSecretTokens[qual] {
			continue
		}
		if !literalSecret(s, vs, ve) {
			continue
		}
		out = append(out, [2]int{vs, ve})
		pos = ve
	}
	return out
}

// nameQualifier reports whether the secret word at s[start:] ends a name
// (it starts the name, or follows _, -, . or a lower-case letter as the
// upper-case start of a camelCase word) and returns the lower-case word
// before it in the name ("page" for page_token, nextPageToken).
func nameQualifier(s string, start int) (string, bool) {
	if start == 0 {
		return "", true
	}
	c := s[start-1]
	end := start
	switch {
	case c == '_' || c == '-' || c == '.':
		end = start - 1
	case isLower(c) && isUpper(s[start]):
		// camelCase: the word starts with an upper-case letter.
	case isAlnum(c):
		return "", false // inside a longer word: mytoken, XAPI_KEY
	default:
		return "", true
	}
	i := end
	for i > 0 && isLower(s[i-1]) || i > 0 && isDigit(s[i-1]) {
		i--
	}
	if i == end && i > 0 && isUpper(s[i-1]) { // an upper-case word: NEXT_TOKEN
		for i > 0 && (isUpper(s[i-1]) || isDigit(s[i-1])) {
			i--
		}
	} else if i > 0 && isUpper(s[i-1]) { // a capitalised camelCase word: nextPage
		i--
	}
	return strings.ToLower(s[i:end]), true
}

// flagName reports whether the name ending at the secret word at start is
// a command-line flag (--api-key, --token) or aws_secret_access_key (the
// argument of aws configure set).
func flagName(s string, start int) bool {
	i := start
	for i > 0 && (isAlnum(s[i-1]) || s[i-1] == '_' || s[i-1] == '-') {
		i--
	}
	name := strings.ToLower(s[i:start])
	return strings.HasPrefix(name, "--") || strings.HasPrefix(name, "aws_secret_access")
}

// placeholderWords mark a value written to be replaced.
var placeholderWords = []string{"your", "xxxx", "example", "placeholder", "changeme", "change_me", "redacted", "dummy", "sample", "replace", "insert", "todo", "here"}

// literalSecret reports whether s[start:end], the value of an assignment
// to a secret name, is a literal that looks like a secret.
func literalSecret(s string, start, end int) bool {
	v := s[start:end]
	if end < len(s) {
		switch c := s[end]; c {
		case '(', '[', '{', '$', '<', '%':
			return false // a call, an index or an interpolation: get_token(), os.environ["…"]
		}
		if strings.HasPrefix(s[end:], "…") {
			return false // cut short: sk-proj-…
		}
	}
	if strings.Contains(v, "...") || strings.HasSuffix(v, "..") {
		return false
	}
	hasDigit, hasLetter := false, false
	for i := 0; i < len(v); i++ {
		hasDigit = hasDigit || isDigit(v[i])
		hasLetter = hasLetter || isLower(v[i]) || isUpper(v[i])
	}
	if !hasDigit || !hasLetter {
		return false
	}
	lv := strings.ToLower(v)
	for _, w := range placeholderWords {
		if strings.Contains(lv, w) {
			return false
		}
	}
	if identifier(v) || dottedReference(v) {
		return false
	}
	return entropy(v) >= 3.0
}

// identifier reports whether v is a name made of words in one letter case
// joined by _ or - (a variable, a constant or the name of a stored secret,
// not its value): API_KEY_V2, access_token_2, my-app-secret-v2. Each word
// is letters then digits, or digits.
func identifier(v string) bool {
	if !strings.ContainsAny(v, "_-") {
		return false
	}
	lower, upper := true, true
	for _, w := range strings.FieldsFunc(v, func(r rune) bool { return r == '_' || r == '-' }) {
		i := 0
		for i < len(w) && (isLower(w[i]) || isUpper(w[i])) {
			if isLower(w[i]) {
				upper = false
			} else {
				lower = false
			}
			i++
		}
		for i < len(w) && isDigit(w[i]) {
			i++
		}
		if i < len(w) {
			return false
		}
	}
	return lower || upper
}

// dottedReference reports whether v reads a member of a named object
// (process.env.API_KEY2, settings.SECRET_KEY_1, self.token2): a dot after
// a first part of letters only.
func dottedReference(v string) bool {
	dot := strings.IndexByte(v, '.')
	if dot <= 0 {
		return false
	}
	for i := 0; i < dot; i++ {
		if !isLower(v[i]) && !isUpper(v[i]) && v[i] != '_' {
			return false
		}
	}
	return true
}

// entropy returns the Shannon entropy of v's bytes, in bits per byte.
func entropy(v string) float64 {
	var n [256]int
	for i := 0; i < len(v); i++ {
		n[v[i]]++
	}
	h := 0.0
	for _, c := range n {
		if c > 0 {
			p := float64(c) / float64(len(v))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// awsIDHints are the prefixes of AWS access key ids (lower case).
var awsIDHints = []string{"akia", "asia", "abia", "acca"}

// awsIDRE matches an AWS access key id.
var awsIDRE = lazyRE(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)

// awsSecretRE matches a candidate secret access key: 40 characters of its
// alphabet, not part of a longer run.
var awsSecretRE = lazyRE(`(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`)

// awsPairSecrets returns the spans of the secret access keys in a text
// that holds an access key id: 40 characters mixing upper and lower case
// and digits (a git commit id, lower-case hex, is not one).
func awsPairSecrets(s string) [][2]int {
	if !awsIDRE().MatchString(s) {
		return nil
	}
	return awsSecretCandidates(s)
}

// awsSecretCandidates returns the spans of the 40-character strings in s
// that look like AWS secret access keys.
func awsSecretCandidates(s string) [][2]int {
	var out [][2]int
	re := awsSecretRE()
	for pos := 0; pos < len(s); {
		m := re.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		start, end := pos+m[2], pos+m[3]
		if mixedBase64(s[start:end]) {
			out = append(out, [2]int{start, end})
		}
		// The character after a candidate may be the one before the next.
		pos = end
	}
	return out
}

// mixedBase64 reports whether v mixes upper case, lower case and digits,
// as a random key does (and a placeholder or a hex digest does not).
func mixedBase64(v string) bool {
	var lo, up, dig bool
	for i := 0; i < len(v); i++ {
		lo = lo || isLower(v[i])
		up = up || isUpper(v[i])
		dig = dig || isDigit(v[i])
	}
	return lo && up && dig
}

// notOneCase reports whether v holds both upper- and lower-case letters.
func notOneCase(v string) bool {
	var lo, up bool
	for i := 0; i < len(v); i++ {
		lo = lo || isLower(v[i])
		up = up || isUpper(v[i])
	}
	return lo && up
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isLower(c) || isUpper(c) || isDigit(c) }

// secretName reports whether name, a JSON member name, ends in a secret
// word as an assignment's name must ({"OPENAI_API_KEY": "…"}).
func secretName(name string) bool {
	if len(name) > 256 || !hasHint(name, assignHints) {
		return false
	}
	m := nameWordRE().FindStringSubmatchIndex(name)
	if m == nil {
		return false
	}
	qual, ok := nameQualifier(name, m[2])
	return ok && !(strings.EqualFold(name[m[2]:m[3]], "token") && notSecretTokens[qual])
}

// nameWordRE matches a secret word at the end of a name.
var nameWordRE = lazyRE(`(?i)((?:api|access|secret|auth|client|signing|encryption|master|app)[_.-]?key|token|secret|password|passwd|passphrase)$`)

// MemberSecret reports whether value, the string value of the JSON member
// name, is a secret because of its name: name ends in a secret word
// (api_key, GITHUB_TOKEN, client-secret) and value is a literal that looks
// random, as in an assignment.
func MemberSecret(name, value string) bool {
	return len(value) >= 12 && secretName(name) && validValue(value) && literalSecret(value, 0, len(value))
}

// validValue reports whether every byte of v is one an assigned secret is
// read with (assignRE's value class).
func validValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !isAlnum(c) && !strings.ContainsRune("_./+=~-", rune(c)) {
			return false
		}
	}
	return true
}
