package perception

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

const (
	contextLines    = 5    // lines shown before and after a match
	headLines       = 40   // lines shown of a file named by a location target
	maxSnippetBytes = 4096 // bytes of one snippet before the context limit
)

// excerpt is a piece of a file with its 1-based line range.
type excerpt struct {
	text       string
	start, end int
}

// window returns the lines around byte offset off of data: contextLines
// before the line of off and contextLines after it.
func window(data []byte, off int) excerpt {
	off = min(max(off, 0), len(data))
	start := lineStart(data, off)
	for i := 0; i < contextLines && start > 0; i++ {
		start = lineStart(data, start-1)
	}
	end := off
	for i := 0; i <= contextLines && end < len(data); i++ {
		j := bytes.IndexByte(data[end:], '\n')
		if j < 0 {
			end = len(data)
			break
		}
		end += j + 1
	}
	if end-start > maxSnippetBytes {
		start = max(start, off-maxSnippetBytes/4)
		end = min(end, start+maxSnippetBytes)
	}
	return cut(data, start, end)
}

// head returns the first lines of data.
func head(data []byte, lines int) excerpt {
	end := 0
	for i := 0; i < lines && end < len(data); i++ {
		j := bytes.IndexByte(data[end:], '\n')
		if j < 0 {
			end = len(data)
			break
		}
		end += j + 1
	}
	return cut(data, 0, min(end, maxSnippetBytes))
}

// lineStart returns the offset of the start of the line holding offset i.
func lineStart(data []byte, i int) int {
	return bytes.LastIndexByte(data[:i], '\n') + 1
}

// cut returns data[start:end] moved inward to UTF-8 boundaries, without its
// final newline, invalid UTF-8 replaced, with its line range.
func cut(data []byte, start, end int) excerpt {
	for start < end && !utf8.RuneStart(data[start]) {
		start++
	}
	for end > start && end < len(data) && !utf8.RuneStart(data[end]) {
		end--
	}
	b := bytes.TrimRight(data[start:end], "\r\n")
	first := 1 + bytes.Count(data[:start], []byte{'\n'})
	return excerpt{
		text:  strings.ToValidUTF8(string(b), "\uFFFD"),
		start: first,
		end:   first + bytes.Count(b, []byte{'\n'}),
	}
}

// truncateChars cuts s to at most n characters (Unicode code points).
func truncateChars(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
