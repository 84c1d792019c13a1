package redact

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Rules are the operator's additions to the built-in detectors.
type Rules struct {
	// Fields are dot paths whose values are always redacted, whatever they
	// hold: "arguments.password" or "payload.arguments.password" (in the
	// payload), "metadata.api_key" (in the envelope metadata),
	// "context.current_task" (in the envelope context). A segment "*"
	// matches any member or array element; arrays are also looked through
	// ("items.pin" reaches the pin of every element of items). Segments
	// match member names without regard to case (Unicode simple folding).
	Fields []string `yaml:"fields" json:"fields"`
	// Patterns are additional detectors: each match of the regular
	// expression (RE2 syntax; its first group when it has one) is replaced
	// by a marker of the given kind. They redact only: the secrets policy
	// rules see the built-in detectors.
	Patterns []Pattern `yaml:"patterns" json:"patterns"`
}

// Pattern is an operator-defined detector.
type Pattern struct {
	// Kind names the secret in markers: lower case letters, digits and _.
	Kind string `yaml:"kind" json:"kind"`
	// Regexp is an RE2 regular expression.
	Regexp string `yaml:"regexp" json:"regexp"`
}

// Bounds on Rules.
const (
	MaxFields   = 256
	MaxPatterns = 64
	maxPathLen  = 256
	maxRegexLen = 4096
)

var kindRE = lazyRE(`^[a-z0-9_]{1,64}$`)

// FieldKind is the kind in the marker of a value redacted because of its
// field path (and in which no detector found a secret).
const FieldKind = "field"

// Validate checks every field path and pattern and reports all problems,
// each naming its entry.
func (r Rules) Validate() error {
	_, err := r.compile()
	return err
}

// compiled are validated Rules.
type compiled struct {
	paths    [][]string // split field paths, rooted at payload, metadata or context
	patterns []detector
}

func (r Rules) compile() (compiled, error) {
	var c compiled
	var errs []error
	if len(r.Fields) > MaxFields {
		errs = append(errs, fmt.Errorf("redaction.fields: %d paths, at most %d", len(r.Fields), MaxFields))
	}
	if len(r.Patterns) > MaxPatterns {
		errs = append(errs, fmt.Errorf("redaction.patterns: %d patterns, at most %d", len(r.Patterns), MaxPatterns))
	}
	for i, f := range r.Fields {
		p, err := splitPath(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("redaction.fields[%d] %q: %w", i, f, err))
			continue
		}
		c.paths = append(c.paths, p)
	}
	for i, p := range r.Patterns {
		if !kindRE().MatchString(p.Kind) {
			errs = append(errs, fmt.Errorf("redaction.patterns[%d].kind %q: want 1 to 64 of a-z, 0-9 and _", i, p.Kind))
		} else if p.Kind == FieldKind {
			errs = append(errs, fmt.Errorf("redaction.patterns[%d].kind: %q is reserved for field paths", i, p.Kind))
		}
		if p.Regexp == "" || len(p.Regexp) > maxRegexLen {
			errs = append(errs, fmt.Errorf("redaction.patterns[%d].regexp: must be 1 to %d bytes", i, maxRegexLen))
			continue
		}
		re, err := regexp.Compile(p.Regexp)
		if err != nil {
			// The regexp package's message quotes only the offending part of
			// the pattern, which the operator wrote.
			errs = append(errs, fmt.Errorf("redaction.patterns[%d].regexp: %w", i, err))
			continue
		}
		if re.MatchString("") {
			errs = append(errs, fmt.Errorf("redaction.patterns[%d].regexp: matches the empty string", i))
			continue
		}
		g := 0
		if re.NumSubexp() > 0 {
			g = 1
		}
		c.patterns = append(c.patterns, detector{kind: p.Kind, re: re, group: g})
	}
	return c, errors.Join(errs...)
}

// splitPath splits a field path and roots it: payload, metadata or context.
func splitPath(s string) ([]string, error) {
	if s == "" || len(s) > maxPathLen {
		return nil, fmt.Errorf("must be 1 to %d bytes", maxPathLen)
	}
	segs := strings.Split(s, ".")
	for _, seg := range segs {
		if seg == "" {
			return nil, errors.New("empty segment (two dots, or a dot at an end)")
		}
	}
	switch segs[0] {
	case "payload", "metadata", "context":
		if len(segs) == 1 {
			return nil, errors.New("names a whole section; name a field inside it")
		}
		return segs, nil
	}
	return append([]string{"payload"}, segs...), nil
}
