package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Kind says whether a case is an action the guard should stop.
type Kind string

// The two kinds of case.
const (
	Risky    Kind = "risky"
	Ordinary Kind = "ordinary"
)

// Form is how a case is written in the corpus, and so which tool calls
// it becomes (see expand).
type Form string

// The forms of a case.
const (
	FormShell Form = "sh"    // a shell command: tool bash, arguments.command
	FormPy    Form = "py"    // Python code: python3 <<'EOF' through bash, and an execute_code call
	FormWrite Form = "write" // a file written: Claude Code Write and Gemini CLI write_file
	FormEdit  Form = "edit"  // a file edited: Claude Code Edit and Gemini CLI replace
	FormRead  Form = "read"  // a file read: Claude Code Read and Gemini CLI read_file
	FormTool  Form = "tool"  // any other tool call, given as AGENT TOOL JSON
)

// Case is one entry of a corpus: an action, whether it is risky, the
// danger (or activity) it belongs to and, for a risky one, the pack
// expected to stop it.
type Case struct {
	Source   string // corpus name: "corpus", "gtfobins", "atomic", "tldr"
	File     string // file the case came from
	Line     int    // its first line there (0 when it has none)
	Kind     Kind
	Category string
	Pack     string // expected pack (risky cases)
	Cwd      string
	Form     Form
	Path     string // write, edit, read: the file
	Text     string // the command, the code, the content, or the tool's JSON
	Old      string // edit: the text replaced (Text is the new text)
	Agent    string // tool: the agent whose tool it is
	Tool     string // tool: the tool's name
	// Session, when set, is the recorded session the action belongs to:
	// the actions of cases with the same Session are sent in order in one
	// harness session (InterCode's trajectories). Unset, each action has
	// a session of its own.
	Session string
}

// Where names the case for a reader: file:line, or its source.
func (c *Case) Where() string {
	if c.Line > 0 {
		return fmt.Sprintf("%s:%d", c.File, c.Line)
	}
	if c.File != "" {
		return c.File
	}
	return c.Source
}

// editSeparator divides the old text from the new one in an edit block.
const editSeparator = "====="

// ParseCorpus reads a corpus in the line format of bench/guard/README.md.
// name is used in error messages and as Case.File.
func ParseCorpus(r io.Reader, name string) ([]Case, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var (
		out  []Case
		cur  = Case{Source: "corpus", File: name}
		line int
	)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		raw := sc.Text()
		t := strings.TrimSpace(raw)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if strings.HasPrefix(t, "@") {
			key, val, _ := strings.Cut(t[1:], " ")
			val = strings.TrimSpace(val)
			switch key {
			case "kind":
				switch Kind(val) {
				case Risky, Ordinary:
					cur.Kind = Kind(val)
				default:
					return nil, fail("@kind %q is not risky or ordinary", val)
				}
			case "category":
				cur.Category = val
			case "pack":
				cur.Pack = val
			case "cwd":
				if val != "" && !strings.HasPrefix(val, "/") && val != "~" && !strings.HasPrefix(val, "~/") {
					return nil, fail("@cwd %q is not an absolute path (or one under ~)", val)
				}
				cur.Cwd = val
			default:
				return nil, fail("unknown directive @%s", key)
			}
			continue
		}
		form, rest, _ := strings.Cut(t, " ")
		rest = strings.TrimSpace(rest)
		c := cur
		c.Line = line
		c.Form = Form(form)
		switch {
		case c.Kind == "":
			return nil, fail("case before @kind")
		case c.Category == "":
			return nil, fail("case before @category")
		case c.Kind == Risky && c.Pack == "":
			return nil, fail("risky case before @pack")
		}
		// A body: the rest ends with <<TAG, and the lines up to TAG follow.
		var body *string
		if i := strings.LastIndex(rest, "<<"); i >= 0 && isTag(rest[i+2:]) {
			tag := rest[i+2:]
			rest = strings.TrimSpace(rest[:i])
			var lines []string
			closed := false
			for sc.Scan() {
				line++
				if strings.TrimRight(sc.Text(), " \t") == tag {
					closed = true
					break
				}
				lines = append(lines, sc.Text())
			}
			if !closed {
				return nil, fmt.Errorf("%s:%d: body opened with <<%s is not closed", name, c.Line, tag)
			}
			b := strings.Join(lines, "\n")
			body = &b
		}
		switch c.Form {
		case FormShell, FormPy:
			if body != nil {
				if rest != "" {
					return nil, fail("%s: text before <<TAG", form)
				}
				c.Text = *body
			} else {
				c.Text = rest
			}
		case FormRead:
			if body != nil {
				return nil, fail("read takes no body")
			}
			c.Path = rest
		case FormWrite:
			c.Path = rest
			if body == nil {
				return nil, fail("write PATH <<TAG: the content is missing")
			}
			c.Text = *body
		case FormEdit:
			c.Path = rest
			if body == nil {
				return nil, fail("edit PATH <<TAG: the old and new text are missing")
			}
			old, nw, ok := cutLine(*body, editSeparator)
			if !ok {
				return nil, fail("edit: old and new text must be separated by a line %s", editSeparator)
			}
			c.Old, c.Text = old, nw
		case FormTool:
			if body != nil {
				return nil, fail("tool takes no body")
			}
			f := strings.SplitN(rest, " ", 3)
			if len(f) != 3 {
				return nil, fail("tool AGENT NAME JSON")
			}
			c.Agent, c.Tool, c.Text = f[0], f[1], strings.TrimSpace(f[2])
			if !strings.HasPrefix(c.Text, "{") {
				return nil, fail("tool arguments must be a JSON object")
			}
		default:
			return nil, fail("unknown form %q (want sh, py, write, edit, read, tool)", form)
		}
		if c.Form != FormShell && c.Form != FormPy && c.Form != FormTool && c.Path == "" {
			return nil, fail("%s: the path is missing", form)
		}
		if c.Text == "" && (c.Form == FormShell || c.Form == FormPy) {
			return nil, fail("%s: empty", form)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// cutLine splits text around its first line equal to sep.
func cutLine(text, sep string) (before, after string, ok bool) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if l == sep {
			return strings.Join(lines[:i], "\n"), strings.Join(lines[i+1:], "\n"), true
		}
	}
	return "", "", false
}

// isTag reports whether s is a here-document tag of the corpus format:
// upper-case letters, at least two.
func isTag(s string) bool {
	if len(s) < 2 {
		return false
	}
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

// LoadCorpusDir reads every *.txt file under dir (sorted by path).
func LoadCorpusDir(dir string) ([]Case, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".txt") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.txt corpus files under %s", dir)
	}
	sort.Strings(files)
	var all []Case
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(dir, f)
		cs, err := ParseCorpus(fh, rel)
		fh.Close()
		if err != nil {
			return nil, err
		}
		all = append(all, cs...)
	}
	return all, nil
}
