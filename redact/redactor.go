package redact

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ahp-go/ahp/protocol"
)

// Options configure a Redactor.
type Options struct {
	// Key is the per-deployment HMAC key of fingerprints (at least 16
	// bytes; see LoadOrCreateKey).
	Key []byte
	// Rules are the operator's field paths and detectors.
	Rules Rules
	// ContextFields are the paths of context fields an Agent Harness
	// Descriptor declares with redact: true. Each is redacted in the
	// payload and the metadata, at its path and under a "context" member.
	ContextFields []string
}

// Redactor replaces secrets with markers. It is safe for concurrent use.
type Redactor struct {
	key      []byte
	patterns []detector
	// paths by section of the event (payload, metadata, context), without
	// the section name.
	payload, metadata, context [][]string
	// decision holds the payload paths under modified_payload.
	decision [][]string
	// names are the last literal segments of every path, in lower case,
	// for a cheap test of whether a JSON text can hold one; wild is set when
	// that test cannot be made: a path ends in * or its last segment is not
	// ASCII.
	names []string
	wild  bool
}

// New returns a Redactor, or the problems of opts.Rules.
func New(opts Options) (*Redactor, error) {
	if len(opts.Key) < 16 {
		return nil, errors.New("redact: the fingerprint key must be at least 16 bytes")
	}
	rules := opts.Rules
	for _, f := range opts.ContextFields {
		f = strings.TrimPrefix(f, "context.")
		rules.Fields = append(rules.Fields, "payload."+f, "payload.context."+f, "metadata."+f, "metadata.context."+f)
	}
	c, err := rules.compile()
	if err != nil {
		return nil, err
	}
	r := &Redactor{key: slices.Clone(opts.Key), patterns: c.patterns}
	for _, p := range c.paths {
		rest := p[1:]
		switch p[0] {
		case "payload":
			r.payload = append(r.payload, rest)
			r.decision = append(r.decision, append([]string{"modified_payload"}, rest...))
		case "metadata":
			r.metadata = append(r.metadata, rest)
		case "context":
			r.context = append(r.context, rest)
		}
		last := strings.ToLower(p[len(p)-1])
		if last == "*" || !isASCII(last) {
			r.wild = true
		} else if !slices.Contains(r.names, last) {
			r.names = append(r.names, last)
		}
	}
	return r, nil
}

// Kinds is the set of detector kinds that fired in one redaction.
type Kinds struct{ m map[string]struct{} }

func (k *Kinds) add(kind string) {
	if k.m == nil {
		k.m = make(map[string]struct{}, 2)
	}
	k.m[kind] = struct{}{}
}

// Merge adds the kinds of o.
func (k *Kinds) Merge(o Kinds) {
	for kind := range o.m {
		k.add(kind)
	}
}

// Empty reports whether nothing was redacted.
func (k Kinds) Empty() bool { return len(k.m) == 0 }

// List returns the kinds, sorted.
func (k Kinds) List() []string {
	if len(k.m) == 0 {
		return nil
	}
	out := make([]string, 0, len(k.m))
	for kind := range k.m {
		out = append(out, kind)
	}
	slices.Sort(out)
	return out
}

// Fingerprint returns the first 8 hex digits of HMAC-SHA256(key, secret).
func (r *Redactor) Fingerprint(secret string) string {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(secret))
	return hex.EncodeToString(m.Sum(nil)[:4])
}

// marker returns the marker of one secret.
func (r *Redactor) marker(kind, secret string) string {
	return "[REDACTED:" + kind + ":" + r.Fingerprint(secret) + "]"
}

// span is one secret found in a string.
type span struct {
	start, end int
	kind       string
}

// find returns the non-overlapping secrets in s, in order: built-in
// detectors first, then the operator's.
func (r *Redactor) find(s string) []span {
	out := builtinSpans(s)
	if len(r.patterns) == 0 {
		return out
	}
	for i := range r.patterns {
		out = addSpans(out, &r.patterns[i], s)
	}
	slices.SortFunc(out, func(a, b span) int { return a.start - b.start })
	return out
}

// findIn is find, and when pair is set (the document s comes from holds an
// AWS access key id) also the 40-character strings that look like its
// secret access key: the two halves of a key pair may be written in two
// members ({"id": "AKIA…", "secret": "…"}).
func (r *Redactor) findIn(s string, pair bool) []span {
	out := r.find(s)
	if !pair {
		return out
	}
	n := len(out)
	for _, m := range awsSecretCandidates(s) {
		overlaps := false
		for _, o := range out[:n] {
			if m[0] < o.end && o.start < m[1] {
				overlaps = true
				break
			}
		}
		if !overlaps {
			out = append(out, span{m[0], m[1], "aws_secret_key"})
		}
	}
	slices.SortFunc(out, func(a, b span) int { return a.start - b.start })
	return out
}

// holdsAWSKeyID reports whether the text b holds an AWS access key id.
func holdsAWSKeyID(b []byte) bool {
	for _, h := range awsIDHints {
		if containsFold(b, h) {
			return awsIDRE().Match(b)
		}
	}
	return false
}

// String returns s with every secret replaced by its marker, and the kinds
// found.
func (r *Redactor) String(s string) (string, Kinds) { return r.text(s, false) }

// text is String; pair is findIn's.
func (r *Redactor) text(s string, pair bool) (string, Kinds) {
	var k Kinds
	spans := r.findIn(s, pair)
	if len(spans) == 0 {
		return s, k
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(r.marker(sp.kind, s[sp.start:sp.end]))
		k.add(sp.kind)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String(), k
}

// forced returns the marker(s) replacing a value at a redacted field path:
// the markers of the secrets a detector finds in it (so that their kinds
// survive), or one marker of kind "field".
func (r *Redactor) forced(v any, k *Kinds) string {
	var text string
	if s, ok := v.(string); ok {
		text = s
		if spans := r.find(s); len(spans) > 0 {
			ms := make([]string, len(spans))
			for i, sp := range spans {
				ms[i] = r.marker(sp.kind, s[sp.start:sp.end])
				k.add(sp.kind)
			}
			return strings.Join(ms, " ")
		}
	} else {
		b, _ := json.Marshal(v)
		text = string(b)
	}
	k.add(FieldKind)
	return r.marker(FieldKind, text)
}

// mayHold reports whether a JSON text can need redaction with paths: a
// detector's hint, a marker-like escape or a path's field name occurs in
// it. Most texts hold none and are left without being decoded.
//
// Field names match without regard to case, with Unicode simple folding
// (as encoding/json and the policy's member lookup do). The name test
// ignores ASCII case only; a text with a non-ASCII byte may hold a name
// that folds to an ASCII one (the Kelvin sign to k, the long s to s), so it
// is always decoded when paths apply.
func (r *Redactor) mayHold(raw []byte, paths [][]string) bool {
	if len(r.patterns) > 0 || bytes.Contains(raw, []byte(`\u`)) {
		return true
	}
	if len(paths) > 0 {
		if r.wild || !isASCII(raw) {
			return true
		}
		for _, n := range r.names {
			if containsFold(raw, n) {
				return true
			}
		}
	}
	return anyHint(raw)
}

// containsFold reports whether b contains needle (lower-case ASCII),
// ignoring ASCII case. It looks for each case of the first byte in turn.
func containsFold(b []byte, needle string) bool {
	first := [2]byte{needle[0], needle[0]}
	if c := needle[0]; c >= 'a' && c <= 'z' {
		first[1] = c - 'a' + 'A'
	}
	for n, c := range first {
		if n == 1 && c == first[0] {
			break
		}
		for i := 0; i+len(needle) <= len(b); i++ {
			j := bytes.IndexByte(b[i:len(b)-len(needle)+1], c)
			if j < 0 {
				break
			}
			i += j
			if prefixFold(b[i:], needle) {
				return true
			}
		}
	}
	return false
}

// isASCII reports whether s has only ASCII bytes.
func isASCII[T ~string | ~[]byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// JSON returns raw with every secret inside its strings replaced, and the
// kinds found. raw is returned unchanged (same slice) when nothing is
// redacted or when it is not valid JSON (stores reject invalid JSON).
func (r *Redactor) JSON(raw json.RawMessage) (json.RawMessage, Kinds) {
	return r.doc(raw, nil)
}

// Decision returns the JSON of a decision redacted like JSON, with the
// payload field paths applied to its modified_payload.
func (r *Redactor) Decision(raw json.RawMessage) (json.RawMessage, Kinds) {
	return r.doc(raw, r.decision)
}

// doc redacts a JSON document with field paths rooted at its top.
func (r *Redactor) doc(raw json.RawMessage, paths [][]string) (json.RawMessage, Kinds) {
	var k Kinds
	if len(raw) == 0 || !r.mayHold(raw, paths) {
		return raw, k
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw, k
	}
	nv, changed := r.walk(v, paths, &k, holdsAWSKeyID(raw))
	if !changed {
		return raw, k
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(nv); err != nil {
		return raw, k
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), k
}

// walk redacts v in place; paths are what remains of the field paths at
// this point (a path of length 1 names a member of v); pair is findIn's.
func (r *Redactor) walk(v any, paths [][]string, k *Kinds, pair bool) (any, bool) {
	switch x := v.(type) {
	case string:
		s, kk := r.text(x, pair)
		if kk.Empty() {
			return x, false
		}
		k.Merge(kk)
		return s, true
	case []any:
		// Arrays are looked through; a "*" segment also matches an element.
		next, force := paths, false
		for _, p := range paths {
			if p[0] == "*" {
				if len(p) == 1 {
					force = true
				} else {
					next = append(next[:len(next):len(next)], p[1:])
				}
			}
		}
		changed := false
		for i, e := range x {
			if force {
				x[i], changed = r.forced(e, k), true
				continue
			}
			ne, c := r.walk(e, next, k, pair)
			if c {
				x[i], changed = ne, true
			}
		}
		return x, changed
	case map[string]any:
		changed := false
		var renamed []string // members whose names hold a secret
		for key, e := range x {
			if len(r.find(key)) > 0 {
				renamed = append(renamed, key)
			}
			var next [][]string
			force := false
			for _, p := range paths {
				if p[0] != "*" && !strings.EqualFold(p[0], key) {
					continue
				}
				if len(p) == 1 {
					force = true
				} else {
					next = append(next, p[1:])
				}
			}
			if force {
				x[key], changed = r.forced(e, k), true
				continue
			}
			ne, c := r.walk(e, next, k, pair)
			if c {
				x[key], changed = ne, true
			} else if v, ok := e.(string); ok && MemberSecret(key, v) {
				// {"OPENAI_API_KEY": "…"}: the name says what the value is.
				x[key], changed = r.marker(assignKind, v), true
				k.add(assignKind)
			}
		}
		if len(renamed) > 0 {
			r.renameKeys(x, renamed, k)
			changed = true
		}
		return x, changed
	}
	return v, false
}

// renameKeys gives the members of m named in keys (names holding a secret)
// their redacted names. Distinct secrets have distinct markers, but a
// redacted name may still equal another member's name (one already
// redacted, say): a suffix " #2", " #3" ... then keeps the names unique, so
// that the object stays valid JSON and no member is lost.
func (r *Redactor) renameKeys(m map[string]any, keys []string, k *Kinds) {
	slices.Sort(keys) // the same input always gets the same names
	vals := make([]any, len(keys))
	for i, key := range keys {
		vals[i] = m[key]
		delete(m, key)
	}
	for i, key := range keys {
		name, kk := r.String(key)
		k.Merge(kk)
		m[UniqueName(m, name)] = vals[i]
	}
}

// UniqueName returns name, or when m already has a member of that name,
// name with the first suffix " #2", " #3" ... that m does not have.
func UniqueName[V any](m map[string]V, name string) string {
	if _, taken := m[name]; !taken {
		return name
	}
	for n := 2; ; n++ {
		alt := name + " #" + strconv.Itoa(n)
		if _, taken := m[alt]; !taken {
			return alt
		}
	}
}

// Event returns ev as it may be stored: every secret in its strings, and
// every value at a redacted field path, replaced by a marker. ev is
// returned itself when nothing is redacted, else a copy; ev is never
// modified. payloadClean says that the built-in detectors already scanned
// the whole payload and found nothing (the secrets policy ran): the payload
// is then scanned only for the operator's paths and patterns.
func (r *Redactor) Event(ev *protocol.Event, payloadClean bool) (*protocol.Event, Kinds) {
	var k Kinds
	out := ev // copied on the first change
	edit := func(kk Kinds) *protocol.Event {
		if out == ev {
			cp := *ev
			out = &cp
		}
		k.Merge(kk)
		return out
	}
	if ns, kk := r.String(ev.SessionID); !kk.Empty() {
		edit(kk).SessionID = ns
	}
	if ns, kk := r.String(ev.AgentID); !kk.Empty() {
		edit(kk).AgentID = ns
	}
	if ns, kk := r.String(ev.Timestamp); !kk.Empty() {
		edit(kk).Timestamp = ns
	}
	if !payloadClean || len(r.patterns) > 0 || len(r.payload) > 0 {
		if p, kk := r.doc(ev.Payload, r.payload); !kk.Empty() {
			edit(kk).Payload = p
		}
	}
	if len(ev.Metadata) > 0 {
		if m, kk := r.doc(ev.Metadata, r.metadata); !kk.Empty() {
			edit(kk).Metadata = m
		}
	}
	if ev.Context != nil {
		if c, kk, err := r.eventContext(ev.Context); err != nil || !kk.Empty() {
			edit(kk).Context = c
		}
	}
	return out, k
}

// eventContext redacts an envelope context through its JSON form. A
// context that cannot be round-tripped is dropped rather than stored raw.
func (r *Redactor) eventContext(c *protocol.EventContext) (*protocol.EventContext, Kinds, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, Kinds{}, err
	}
	nb, k := r.doc(b, r.context)
	if k.Empty() {
		return c, k, nil
	}
	var nc protocol.EventContext
	if err := json.Unmarshal(nb, &nc); err != nil {
		return nil, k, fmt.Errorf("redact: context: %w", err)
	}
	return &nc, k, nil
}

// EventJSON redacts the JSON of a recorded event envelope (as the audit
// log and approvals hold it): field paths apply to its payload, metadata
// and context members, detectors to every string.
func (r *Redactor) EventJSON(raw json.RawMessage) (json.RawMessage, Kinds) {
	paths := make([][]string, 0, len(r.payload)+len(r.metadata)+len(r.context))
	for _, sec := range [...]struct {
		name  string
		paths [][]string
	}{{"payload", r.payload}, {"metadata", r.metadata}, {"context", r.context}} {
		for _, p := range sec.paths {
			paths = append(paths, append([]string{sec.name}, p...))
		}
	}
	return r.doc(raw, paths)
}
