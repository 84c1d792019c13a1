package descriptor

import (
	"errors"
	"fmt"
	"strings"
)

// Problem is one defect found in a descriptor, or one failure while
// resolving an agent's instructions. Where locates it the way a reader of
// the descriptor would look for it, for example `agent "triage": tools[1]`
// or `runtime.entry_agent`; Err says what is wrong.
type Problem struct {
	Where string
	Err   error
}

// Error formats the problem as "WHERE: MESSAGE".
func (p *Problem) Error() string {
	if p.Where == "" {
		return p.Err.Error()
	}
	return p.Where + ": " + p.Err.Error()
}

// Unwrap returns the underlying error so that errors.Is and errors.As see
// through a Problem (for example to fs.ErrNotExist).
func (p *Problem) Unwrap() error { return p.Err }

// Error collects every problem found in one pass over a descriptor, so that
// an author can fix them all at once. Source names the descriptor (a file
// path, or empty for in-memory data).
type Error struct {
	Source   string
	Problems []*Problem
}

// Error renders the problems one per line, after a heading line when there
// is more than one.
func (e *Error) Error() string {
	var b strings.Builder
	prefix := "descriptor"
	if e.Source != "" {
		prefix += " " + e.Source
	}
	if len(e.Problems) == 1 {
		return prefix + ": " + e.Problems[0].Error()
	}
	fmt.Fprintf(&b, "%s: %d problems:", prefix, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.Error())
	}
	return b.String()
}

// Unwrap exposes each problem to errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p
	}
	return errs
}

// aiocError is a message worded exactly as aioc words it: a whole
// sentence, with its final period, so that a descriptor refused by both
// loaders reads the same in both.
type aiocError string

func (e aiocError) Error() string { return string(e) }

// aiocf formats an aiocError.
func aiocf(format string, args ...any) error { return aiocError(fmt.Sprintf(format, args...)) }

// problems accumulates Problems while a descriptor is checked.
type problems struct {
	list []*Problem
}

// add records a problem at where with a formatted message.
func (ps *problems) add(where, format string, args ...any) {
	ps.list = append(ps.list, &Problem{Where: where, Err: fmt.Errorf(format, args...)})
}

// addErr records err at where.
func (ps *problems) addErr(where string, err error) {
	ps.list = append(ps.list, &Problem{Where: where, Err: err})
}

// err returns the collected problems as an *Error, or nil when there are none.
func (ps *problems) err(source string) error {
	if len(ps.list) == 0 {
		return nil
	}
	return &Error{Source: source, Problems: ps.list}
}

// ProblemsOf returns the problems carried by err when it is (or wraps) an
// *Error, and otherwise a single Problem wrapping err. It returns nil for a
// nil error.
func ProblemsOf(err error) []*Problem {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Problems
	}
	return []*Problem{{Err: err}}
}

// agentWhere is the location prefix of an agent's field.
func agentWhere(id, field string) string {
	if field == "" {
		return fmt.Sprintf("agent %q", id)
	}
	return fmt.Sprintf("agent %q: %s", id, field)
}
