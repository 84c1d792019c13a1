package redact

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Raw returns raw, a message that need not be valid JSON (one the server
// refused), with every secret replaced by its marker in place, and the
// kinds found. Unlike JSON it never decodes and re-encodes the document:
// everything but the secrets stays byte for byte as received (member order,
// duplicate members, invalid UTF-8), so that a stored refused message still
// shows why it was refused. Each string literal is read with its escapes
// decoded (a secret written with \u escapes is found too) and the secret's
// escaped text is replaced; the text between literals is scanned as it is.
// raw is returned unchanged (same slice) when nothing is redacted.
func (r *Redactor) Raw(raw []byte) ([]byte, Kinds) {
	rw := rawRedaction{r: r, raw: raw}
	if len(raw) == 0 || !r.mayHold(raw, nil) {
		return raw, rw.k
	}
	rw.pair = holdsAWSKeyID(raw)
	for i := 0; i < len(raw); {
		if raw[i] == '"' {
			end := i + 1
			for end < len(raw) && raw[end] != '"' {
				if raw[end] == '\\' {
					end++
				}
				end++
			}
			end = min(end, len(raw)) // an unterminated literal runs to the end
			rw.literal(i+1, end)
			rw.member(i+1, end)
			i = end + 1
			continue
		}
		end := bytes.IndexByte(raw[i:], '"')
		if end < 0 {
			end = len(raw)
		} else {
			end += i
		}
		rw.plain(i, end)
		i = end
	}
	if rw.out == nil {
		return raw, rw.k
	}
	return append(rw.out, raw[rw.last:]...), rw.k
}

// rawRedaction is the state of one Raw call.
type rawRedaction struct {
	r    *Redactor
	raw  []byte
	out  []byte // the redacted text up to last; nil until the first secret
	last int
	k    Kinds
	pair bool // the message holds an AWS access key id (Redactor.findIn)
	// name is the body of the last literal when a colon follows it (a
	// member name), for member: its value may be a secret because of it.
	name      string
	nameValid bool
	nameEnd   int // the offset of the name's closing quote
}

// member redacts the literal body raw[start:end] when it is the value of a
// member whose name makes it a secret ({"GITHUB_TOKEN": "…"}; MemberSecret),
// and remembers it as a name when a colon follows it. Literals with escapes
// are left to the detectors.
func (rw *rawRedaction) member(start, end int) {
	body := rw.raw[start:end]
	if rw.nameValid && start >= rw.last && bytes.IndexByte(body, '\\') < 0 {
		// The value follows the name's colon directly (spaces aside).
		if between := bytes.TrimSpace(rw.raw[rw.nameEnd+1 : start-1]); len(between) == 1 && between[0] == ':' &&
			MemberSecret(rw.name, string(body)) {
			rw.replace(start, end, assignKind, string(body))
		}
	}
	rw.nameValid = false
	j := end + 1
	for j < len(rw.raw) && (rw.raw[j] == ' ' || rw.raw[j] == '\t' || rw.raw[j] == '\n' || rw.raw[j] == '\r') {
		j++
	}
	if j < len(rw.raw) && rw.raw[j] == ':' {
		rw.name, rw.nameValid, rw.nameEnd = string(body), true, end
	}
}

// replace puts the marker of secret (its decoded text) in place of
// raw[start:end].
func (rw *rawRedaction) replace(start, end int, kind, secret string) {
	start = max(start, rw.last) // spans never overlap; this is a safeguard
	if end <= start {
		return
	}
	if rw.out == nil {
		rw.out = make([]byte, 0, len(rw.raw))
	}
	rw.out = append(rw.out, rw.raw[rw.last:start]...)
	rw.out = append(rw.out, rw.r.marker(kind, secret)...)
	rw.last = end
	rw.k.add(kind)
}

// plain redacts raw[start:end], text without escapes.
func (rw *rawRedaction) plain(start, end int) {
	s := string(rw.raw[start:end])
	for _, sp := range rw.r.findIn(s, rw.pair) {
		rw.replace(start+sp.start, start+sp.end, sp.kind, s[sp.start:sp.end])
	}
}

// literal redacts the body raw[start:end] of a JSON string literal. Its
// escapes are decoded, each decoded byte remembering the raw bytes it came
// from, so that a secret found in the decoded text is replaced in the raw.
func (rw *rawRedaction) literal(start, end int) {
	body := rw.raw[start:end]
	if bytes.IndexByte(body, '\\') < 0 {
		rw.plain(start, end)
		return
	}
	if !rw.r.mayHold(body, nil) {
		return
	}
	dec := make([]byte, 0, len(body))
	from := make([]int, 0, len(body)) // raw offset of the escape each decoded byte comes from
	to := make([]int, 0, len(body))   // raw offset just after it
	for i := 0; i < len(body); {
		unit, n := decodeUnit(body[i:])
		for range unit {
			from, to = append(from, start+i), append(to, start+i+n)
		}
		dec = append(dec, unit...)
		i += n
	}
	s := string(dec)
	for _, sp := range rw.r.findIn(s, rw.pair) {
		rw.replace(from[sp.start], to[sp.end-1], sp.kind, s[sp.start:sp.end])
	}
}

// decodeUnit decodes the first character or escape of a string literal's
// body b: its bytes and the number of raw bytes read. An escape that is
// not valid stands for itself (its backslash is kept).
func decodeUnit(b []byte) ([]byte, int) {
	if b[0] != '\\' || len(b) < 2 {
		return b[:1], 1
	}
	switch b[1] {
	case '"', '\\', '/':
		return b[1:2], 2
	case 'b':
		return []byte{'\b'}, 2
	case 'f':
		return []byte{'\f'}, 2
	case 'n':
		return []byte{'\n'}, 2
	case 'r':
		return []byte{'\r'}, 2
	case 't':
		return []byte{'\t'}, 2
	case 'u':
		r1, ok := hex4(b[2:])
		if !ok {
			break
		}
		if utf16.IsSurrogate(r1) && len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
			if r2, ok := hex4(b[8:]); ok {
				if c := utf16.DecodeRune(r1, r2); c != utf8.RuneError {
					return utf8.AppendRune(nil, c), 12
				}
			}
		}
		return utf8.AppendRune(nil, r1), 6
	}
	return b[:1], 1
}

// hex4 reads the 4 hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 16)
	return rune(v), err == nil
}
