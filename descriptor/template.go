package descriptor

import (
	"fmt"
	"regexp"
	"strings"
)

// segment is a piece of an instruction template: literal text, or a
// {{context.PATH}} placeholder when path is set.
type segment struct {
	lit  string
	path string
}

// template is a compiled instruction text.
type template []segment

// placeholderError describes one refused placeholder.
type placeholderError struct {
	placeholder string
	msg         string
}

func (e placeholderError) Error() string {
	return fmt.Sprintf("placeholder %s: %s", e.placeholder, e.msg)
}

// jsSpace is the class of characters JavaScript's \s matches (ASCII white
// space, NBSP, the Unicode space separators, line and paragraph
// separators and the BOM); Go's \s is ASCII only.
const jsSpace = `[\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]`

// contextPlaceholder finds the placeholders aioc 0.2.8 renders: "{{",
// optional white space, "context.", a path of at least one character with
// no "}", optional white space, "}}". The match is leftmost-first with a
// lazy path, as with JavaScript's RegExp.
var contextPlaceholder = regexp.MustCompile(`\{\{` + jsSpace + `*context\.([^}]+?)` + jsSpace + `*\}\}`)

// compileTemplate splits text into literals and context placeholders.
//
// A placeholder is exactly what aioc 0.2.8 treats as one (contextPlaceholder):
// text between double braces that starts with "context.". Its path must be
// a plain context path, normalized as normalizePath does; anything else
// after "context." (expressions, operators, filters, defaults, calls) is
// refused, as aioc refuses it. Every other "{{...}}" is literal text, as in
// aioc: {{input.message}} and {{runtime.now_iso}} are substituted only in
// context field defaults, and inside instructions stay as written.
func compileTemplate(text string) (template, []error) {
	var (
		t    template
		errs []error
		lit  strings.Builder
	)
	last := 0
	for _, m := range contextPlaceholder.FindAllStringSubmatchIndex(text, -1) {
		lit.WriteString(text[last:m[0]])
		last = m[1]
		whole := text[m[0]:m[1]]
		path, err := normalizePath(text[m[2]:m[3]], "the path")
		if err != nil {
			errs = append(errs, placeholderError{placeholder: whole,
				msg: fmt.Sprintf("not a plain context path: expressions, operators, filters, defaults and calls are not supported (%v)", err)})
			lit.WriteString(whole)
			continue
		}
		if lit.Len() > 0 {
			t = append(t, segment{lit: lit.String()})
			lit.Reset()
		}
		t = append(t, segment{path: path})
	}
	lit.WriteString(text[last:])
	if lit.Len() > 0 {
		t = append(t, segment{lit: lit.String()})
	}
	return t, errs
}

// normalizePath reads a context path as aioc does: the text is split at
// dots, each segment is trimmed of white space and empty segments are
// dropped, so that "session..channel" and " session . channel " both name
// session.channel. What remains must be at least one segment, each of ASCII
// letters, digits, '_' and '-'. label starts the error messages, which are
// aioc's, for example `Context reference path contains invalid segment "a b".`
func normalizePath(p, label string) (string, error) {
	var segs []string
	for seg := range strings.SplitSeq(p, ".") {
		seg = strings.TrimSpace(seg)
		if seg == "" {
			continue
		}
		for _, c := range seg {
			if !(c == '_' || c == '-' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')) {
				return "", aiocf("%s contains invalid segment %q.", label, seg)
			}
		}
		segs = append(segs, seg)
	}
	if len(segs) == 0 {
		return "", aiocf("%s cannot be empty.", label)
	}
	return strings.Join(segs, "."), nil
}

// paths returns the context paths the template reads, in order of first use.
func (t template) paths() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range t {
		if s.path != "" && !seen[s.path] {
			seen[s.path] = true
			out = append(out, s.path)
		}
	}
	return out
}
