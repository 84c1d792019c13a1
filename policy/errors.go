package policy

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one error found while loading policies.
type Problem struct {
	File    string // source name (a file path), "" for problems of the options
	Line    int    // 1-based, 0 when unknown
	RuleID  string // "" when the problem is not inside a rule
	Message string
}

// String formats the problem as "file:line: rule ID: message", leaving out
// the parts that are unknown.
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.RuleID != "" {
		b.WriteString("rule " + p.RuleID + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// LoadError lists every problem found in a set of policies. Nothing of the
// set was installed.
type LoadError struct {
	Problems []Problem
}

// Error returns the problems, one per line.
func (e *LoadError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// problems collects Problems while loading.
type problems struct {
	list []Problem
}

func (ps *problems) add(file string, line int, ruleID, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: file, Line: line, RuleID: ruleID, Message: fmt.Sprintf(format, args...)})
}

// err returns a *LoadError sorted by file and line, or nil.
func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	sort.SliceStable(ps.list, func(i, j int) bool {
		a, b := ps.list[i], ps.list[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return &LoadError{Problems: ps.list}
}
