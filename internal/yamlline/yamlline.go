// Package yamlline finds the line of a YAML syntax error. yaml.v3 names,
// for its parser's errors, the line before the construct it was reading
// (a 0-based line number), and for a tab in the indentation the line
// before the tab's: both one line early. Syntax reports the line a person
// should look at.
package yamlline

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
)

var lineRe = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// Syntax reads a yaml.v3 error message ("yaml: line N: MSG") about data
// and returns the line to report (0 when the message names none) and the
// message without its prefix.
func Syntax(data []byte, errMsg string) (int, string) {
	m := lineRe.FindStringSubmatch(errMsg)
	if m == nil {
		return 0, strings.TrimPrefix(errMsg, "yaml: ")
	}
	line, _ := strconv.Atoi(m[1])
	msg := m[2]
	switch {
	case strings.HasPrefix(msg, "did not find expected"):
		line++
	case strings.HasPrefix(msg, "found a tab character"):
		if l := tabIndentedLine(data, line); l > 0 {
			line = l
		}
	}
	return line, msg
}

// tabIndentedLine returns the first line from line on whose indentation
// holds a tab, or 0.
func tabIndentedLine(data []byte, from int) int {
	for i, l := range bytes.Split(data, []byte("\n")) {
		if i+1 < from {
			continue
		}
		indent := l[:len(l)-len(bytes.TrimLeft(l, " \t"))]
		if bytes.IndexByte(indent, '\t') >= 0 {
			return i + 1
		}
	}
	return 0
}
