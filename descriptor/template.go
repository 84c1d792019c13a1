package descriptor

import (
	"fmt"
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

// compileTemplate splits text into literals and context placeholders.
//
// Every "{{ ... }}" must be exactly a context path reference,
// {{context.a.b}}, with optional spaces inside the braces; the path is
// normalized as normalizePath does. Anything else
// between double braces (expressions, filters, calls, the built-ins
// input.message and runtime.now_iso, which only apply to context defaults)
// is refused, so that a template cannot silently render as literal text. A
// "{{" with no closing "}}" is plain text.
func compileTemplate(text string) (template, []error) {
	var (
		t    template
		errs []error
		lit  strings.Builder
	)
	rest := text
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			lit.WriteString(rest)
			break
		}
		j := strings.Index(rest[i+2:], "}}")
		if j < 0 {
			lit.WriteString(rest)
			break
		}
		lit.WriteString(rest[:i])
		whole := rest[i : i+2+j+2]
		inner := strings.TrimSpace(rest[i+2 : i+2+j])
		rest = rest[i+2+j+2:]

		p, err := placeholderPath(inner)
		if err != nil {
			errs = append(errs, placeholderError{placeholder: whole, msg: err.Error()})
			lit.WriteString(whole)
			continue
		}
		if lit.Len() > 0 {
			t = append(t, segment{lit: lit.String()})
			lit.Reset()
		}
		t = append(t, segment{path: p})
	}
	if lit.Len() > 0 {
		t = append(t, segment{lit: lit.String()})
	}
	return t, errs
}

// placeholderPath returns the context path of a placeholder's inner text.
func placeholderPath(inner string) (string, error) {
	switch {
	case inner == "":
		return "", fmt.Errorf("empty placeholder")
	case inner == "input.message" || inner == "runtime.now_iso":
		return "", fmt.Errorf("the built-in %s is only substituted in context field defaults; declare a context field defaulting to it and reference that field", inner)
	}
	p, ok := strings.CutPrefix(inner, "context.")
	if !ok {
		return "", fmt.Errorf("only context path references such as {{context.a.b}} are supported")
	}
	path, err := normalizePath(p, "the path")
	if err != nil {
		return "", fmt.Errorf("not a plain context path: expressions, operators, filters, defaults and calls are not supported (%v)", err)
	}
	return path, nil
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
