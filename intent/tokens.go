package intent

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// token is one word of a prompt.
type token struct {
	text   string // as written, without surrounding punctuation or quotes
	norm   string // lower case, the form phrases are matched against
	quote  rune   // the opening quote of a quoted span (` " '), 0 otherwise
	call   bool   // written with a call suffix: parseConfig()
	end    bool   // a clause ends after this token (, ; : ? ! . or a dash)
	clause int    // index of the clause the token is in
}

// quoteClose maps the quotes that open a quoted span to the one that closes it.
var quoteClose = map[rune]rune{'`': '`', '"': '"', '“': '”', '\'': '\'', '‘': '’', '「': '」', '『': '』', '《': '》'}

// tokenize splits a prompt into words. A quoted or backticked span is one
// token (a name the user designated); contractions are expanded; trailing
// punctuation is removed and marks the end of a clause.
func tokenize(s string, lx *lexicon) []token {
	var toks []token
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		if closer, ok := quoteClose[r]; ok {
			if span, next, ok := quotedSpan(s, i+size, closer); ok {
				t := token{text: span, norm: strings.ToLower(span), quote: r}
				if r == '“' || r == '‘' || r == '「' || r == '『' || r == '《' {
					t.quote = '"'
				}
				// Punctuation right after the closing quote ends the clause.
				rest := strings.TrimLeft(s[next:], ")]}")
				if r1, _ := utf8.DecodeRuneInString(rest); rest != "" && strings.ContainsRune(",;:?!.，。？！：；、", r1) {
					t.end = true
				}
				toks = append(toks, t)
				i = next
				continue
			}
		}
		j := i
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if unicode.IsSpace(r) {
				break
			}
			if _, q := quoteClose[r]; q && lx.split != nil && j > i && r != '\'' {
				break // no spaces: a quote may open right after a word
			}
			j += size
		}
		if lx.split != nil {
			toks = appendChunk(toks, s[i:j], lx)
		} else {
			toks = appendWord(toks, s[i:j], lx)
		}
		i = j
	}
	clause := 0
	for k := range toks {
		toks[k].clause = clause
		if toks[k].end {
			clause++
		}
	}
	return toks
}

// quotedSpan returns the text up to closer, starting at from, when the
// span is closed before the end of the prompt and is not empty. A single
// quote closes only before a space or punctuation, so apostrophes inside
// words do not close it.
func quotedSpan(s string, from int, closer rune) (span string, next int, ok bool) {
	for k := from; k < len(s); {
		r, size := utf8.DecodeRuneInString(s[k:])
		if r == closer {
			after, _ := utf8.DecodeRuneInString(s[k+size:])
			if closer == '\'' && k+size < len(s) && (unicode.IsLetter(after) || unicode.IsDigit(after)) {
				k += size
				continue
			}
			span = strings.TrimSpace(s[from:k])
			return span, k + size, span != ""
		}
		k += size
	}
	return "", 0, false
}

// appendWord adds the tokens of one whitespace-separated word.
func appendWord(toks []token, w string, lx *lexicon) []token {
	w = strings.NewReplacer("’", "'", "‘", "'").Replace(w)
	if isDash(w) {
		return markEnd(toks)
	}
	w = strings.TrimLeft(w, "([{<*\"'")
	end, call := false, false
	for w != "" {
		last := w[len(w)-1]
		switch {
		case strings.HasSuffix(w, "()"):
			w, call = w[:len(w)-2], true
		case strings.IndexByte(",;:?!", last) >= 0:
			end = true
			w = w[:len(w)-1]
		case last == '.':
			if lx.abbreviations[strings.ToLower(w)] {
				w = w[:len(w)-1]
				continue
			}
			end = true
			w = w[:len(w)-1]
		case strings.IndexByte(")]}>*\"'", last) >= 0:
			w = w[:len(w)-1]
		default:
			goto done
		}
	}
done:
	if w == "" {
		if end {
			return markEnd(toks)
		}
		return toks
	}
	norm := strings.ToLower(w)
	if call {
		return append(toks, token{text: w, norm: norm, call: true, end: end})
	}
	if parts, ok := lx.contractions[norm]; ok {
		for k, p := range parts {
			toks = append(toks, token{text: p, norm: p, end: end && k == len(parts)-1})
		}
		return toks
	}
	if base, ok := strings.CutSuffix(norm, "n't"); ok && base != "" && len(w) > 3 {
		// The suffix is ASCII in w too; w and norm may differ in length.
		toks = append(toks, token{text: w[:len(w)-3], norm: base}, token{text: "not", norm: "not", end: end})
		return toks
	}
	return append(toks, token{text: w, norm: norm, end: end})
}

// markEnd marks the last token as the end of a clause.
func markEnd(toks []token) []token {
	if len(toks) > 0 {
		toks[len(toks)-1].end = true
	}
	return toks
}

// isDash reports whether w is a dash used as punctuation.
func isDash(w string) bool {
	return w == "-" || w == "--" || w == "—" || w == "–"
}
