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

// notSecretTokens are the words that, before "token", name something that
// is not a credential: a page cursor, a count, a model's vocabulary.
var notSecretTokens = map[string]bool{
	"page": true, "next": true, "prev": true, "continuation": true, "cursor": true, "sync": true,
	"resume": true, "cancel": true, "cancellation": true, "max": true, "min": true, "num": true,
	"total": true, "count": true, "input": true, "output": true, "prompt": true, "completion": true,
	"eos": true, "bos": true, "pad": true, "unk": true, "sep": true, "cls": true, "mask": true,
	"special": true, "stop": true, "start": true, "end": true, "csrf": true, "xsrf": true,
}

// keyPrefixes are the words that make "key" a secret word when they come
// before it, directly or through one of _ - . (api_key, SECRET-KEY,
// accessKey).
var keyPrefixes = []string{"api", "access", "secret", "auth", "client", "signing", "encryption", "master", "app"}

// secretWordAt returns the start of the secret word that ends at end in s
// (s[start:end] is token, secret, password, passwd, passphrase, or key
// with one of keyPrefixes), or -1.
func secretWordAt(s string, end int) int {
	for _, w := range [...]string{"token", "secret", "password", "passwd", "passphrase"} {
		if end >= len(w) && prefixFold(s[end-len(w):end], w) {
			return end - len(w)
		}
	}
	if end < 3 || !prefixFold(s[end-3:end], "key") {
		return -1
	}
	i := end - 3
	if i > 0 && (s[i-1] == '_' || s[i-1] == '-' || s[i-1] == '.') {
		i--
	}
	for _, p := range keyPrefixes {
		if i >= len(p) && prefixFold(s[i-len(p):i], p) {
			return i - len(p)
		}
	}
	return -1
}

// assignedSecrets returns the spans of the values assigned to secret names
// in s. Each place where a secret word ends is looked at: the word must
// end a name (nameQualifier), and be followed by an optional closing
// quote, a separator (=, :, :=, =>, or for a command-line flag spaces), an
// optional opening quote and a value of at least 12 characters that
// literalSecret accepts.
//
// The scan is linear in len(s): words are found in one pass, and a value
// that starts inside a value already looked at (token=xxxx_token=…) is
// looked at only while a budget of 8 × len(s) + 4096 bytes lasts, so that
// a text made of nested assignments costs no more than a few passes. Past
// the budget such a value is taken for a secret without being looked at:
// the limit fails closed.
func assignedSecrets(s string) [][2]int {
	var out [][2]int
	budget := 8*len(s) + 4096
	lookedTo := 0 // the end of the last value looked at
	var run valueRun
	for i := 0; i < len(s); i++ {
		end := secretWordEnd(s, i)
		if end < 0 {
			continue
		}
		ws := secretWordAt(s, end)
		if ws < 0 {
			continue
		}
		vs, ve, ok := assignedValue(s, ws, end, &run)
		if !ok || (len(out) > 0 && vs < out[len(out)-1][1]) {
			continue // no value, or inside a secret already found
		}
		if vs < lookedTo {
			if budget <= 0 {
				// Past the budget a nested value is not looked at: it is
				// taken for a secret (fail closed), never let through.
				out = append(out, [2]int{vs, ve})
				continue
			}
			budget -= ve - vs
		}
		lookedTo = max(lookedTo, ve)
		if literalSecret(s, vs, ve) {
			out = append(out, [2]int{vs, ve})
		}
	}
	return out
}

// secretWordEnd returns the end of the secret word (token, secret,
// password, passwd, passphrase or key) that starts at s[i], or -1.
func secretWordEnd(s string, i int) int {
	switch lower(s[i]) {
	case 't':
		if len(s)-i >= 5 && prefixFold(s[i:], "token") {
			return i + 5
		}
	case 's':
		if len(s)-i >= 6 && prefixFold(s[i:], "secret") {
			return i + 6
		}
	case 'k':
		if len(s)-i >= 3 && prefixFold(s[i:], "key") {
			return i + 3
		}
	case 'p':
		for _, w := range [...]string{"password", "passwd", "passphrase"} {
			if len(s)-i >= len(w) && prefixFold(s[i:], w) {
				return i + len(w)
			}
		}
	}
	return -1
}

// valueRun is the last run of value bytes found: a value that starts
// inside it ends where it ends, without reading it again.
type valueRun struct{ start, end int }

// assignedValue returns the span of the value assigned to the secret word
// s[ws:we], if the word ends a name and an assignment follows it.
func assignedValue(s string, ws, we int, run *valueRun) (int, int, bool) {
	qual, ok := nameQualifier(s, ws)
	if !ok || (we-ws == 5 && prefixFold(s[ws:we], "token") && notSecretTokens[qual]) {
		return 0, 0, false
	}
	i := we
	if i < len(s) && isQuote(s[i]) {
		i++
	}
	spaces := i
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	switch {
	case i+1 < len(s) && (s[i:i+2] == ":=" || s[i:i+2] == "=>"):
		i += 2
	case i < len(s) && (s[i] == '=' || s[i] == ':'):
		i++
	case i > spaces && flagName(s, ws):
		// --api-key VALUE: only a flag takes its value after a space; in
		// prose ("the token abc…") a space is not an assignment.
	default:
		return 0, 0, false
	}
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i < len(s) && isQuote(s[i]) {
		i++
	}
	vs := i
	if run.start <= vs && vs < run.end {
		i = run.end
	} else {
		for i < len(s) && valueByte(s[i]) {
			i++
		}
		*run = valueRun{vs, i}
	}
	if i-vs < 12 {
		return 0, 0, false
	}
	return vs, i, true
}

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// valueByte reports whether c may be part of an assigned secret.
func valueByte(c byte) bool {
	return isAlnum(c) || c == '_' || c == '.' || c == '/' || c == '+' || c == '=' || c == '~' || c == '-'
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
	for _, w := range placeholderWords {
		if indexFold(v, w) >= 0 {
			return false
		}
	}
	if identifier(v) || dottedReference(v) || filePath(v) {
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

// filePath reports whether v is the path of a file holding the secret
// (client_secret: /etc/app/client_secret.json, --token ./token_2.txt):
// it starts at /, ./, ../ or ~/ and has a dot or a second slash.
func filePath(v string) bool {
	for _, p := range [...]string{"/", "./", "../", "~/"} {
		if strings.HasPrefix(v, p) {
			rest := v[len(p):]
			return strings.ContainsAny(rest, "./")
		}
	}
	return false
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
	if len(name) > 256 {
		return false
	}
	ws := secretWordAt(name, len(name))
	if ws < 0 {
		return false
	}
	qual, ok := nameQualifier(name, ws)
	return ok && !(len(name)-ws == 5 && notSecretTokens[qual])
}

// MemberSecret reports whether value, the string value of the JSON member
// name, is a secret because of its name: name ends in a secret word
// (api_key, GITHUB_TOKEN, client-secret) and value is a literal that looks
// random, as in an assignment.
func MemberSecret(name, value string) bool {
	return len(value) >= 12 && secretName(name) && validValue(value) && literalSecret(value, 0, len(value))
}

// validValue reports whether every byte of v is one an assigned secret is
// made of (valueByte).
func validValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if !valueByte(v[i]) {
			return false
		}
	}
	return true
}
