package descriptor

import (
	"fmt"
	"slices"
	"strings"
)

// Source keys that the loader replaces by a materialized "instructions".
const (
	keyInstructions         = "instructions"
	keyInstructionsFile     = "instructions_file"
	keyInstructionsFiles    = "instructions_files"
	keyInstructionsSequence = "instructions_sequence"
)

// partSeparator joins the files of instructions_files (and the inline text
// after them) and, at resolution time, the included parts of a list.
const partSeparator = "\n\n"

// part is one materialized instruction block.
type part struct {
	text    string
	where   string   // context path of the where gate as written; "" when unconditional
	gate    string   // where, normalized (set when the descriptor is checked)
	field   string   // descriptor field it came from, e.g. "instructions_sequence[2]"
	origin  string   // where its text came from when not inline, e.g. `file "a.md"`
	fromRef bool     // text copied from instruction_parts (checked there)
	tmpl    template // compiled text
}

// instructions is the materialized instructions of an agent or of
// agent_defaults.
type instructions struct {
	parts []part
	owner string // location prefix of the descriptor field that set them
	label string // aioc's name of the owner in messages: Agent "id", or agent_defaults
}

// materializer turns the instruction fields of agents and agent_defaults
// into a materialized "instructions" value, in place in the tree.
type materializer struct {
	scope   *pathScope
	catalog map[string]string // instruction_parts
	ps      *problems
}

// present reports whether key is set to something other than null.
func present(obj map[string]any, key string) bool {
	v, ok := obj[key]
	return ok && v != nil
}

// run materializes the instruction fields of holder, an agent or
// agent_defaults object, whose messages are prefixed by where(field). It
// returns nil when holder sets no instructions.
func (m *materializer) run(holder map[string]any, where func(string) string) *instructions {
	hasInline := present(holder, keyInstructions)
	hasFile := present(holder, keyInstructionsFile)
	hasFiles := present(holder, keyInstructionsFiles)
	hasSeq := present(holder, keyInstructionsSequence)

	bad := false
	if hasSeq {
		var others []string
		if hasInline {
			others = append(others, keyInstructions)
		}
		if hasFile {
			others = append(others, keyInstructionsFile)
		}
		if hasFiles {
			others = append(others, keyInstructionsFiles)
		}
		if len(others) > 0 {
			m.ps.add(where(keyInstructionsSequence), "cannot be combined with %s", strings.Join(others, ", "))
			bad = true
		}
	}
	if hasFile && hasFiles {
		m.ps.add(where(keyInstructionsFile), "cannot be combined with instructions_files (use instructions_files alone)")
		bad = true
	}
	if hasFile && hasInline {
		m.ps.add(where(keyInstructionsFile), "cannot be combined with inline instructions (use instructions_files to append inline text to files)")
		bad = true
	}
	if bad {
		return nil
	}

	var out *instructions
	switch {
	case hasSeq:
		out = m.sequence(holder, where)
	case hasFile:
		out = m.file(holder, where)
	case hasFiles:
		out = m.files(holder, where)
	case hasInline:
		out = m.inline(holder, where)
	}
	delete(holder, keyInstructionsFile)
	delete(holder, keyInstructionsFiles)
	delete(holder, keyInstructionsSequence)
	if out != nil {
		out.owner = where("")
	}
	return out
}

// file handles instructions_file: the file's content becomes the text.
func (m *materializer) file(holder map[string]any, where func(string) string) *instructions {
	raw, ok := holder[keyInstructionsFile].(string)
	if !ok {
		m.ps.add(where(keyInstructionsFile), "must be a string, not %s", kindOf(holder[keyInstructionsFile]))
		return nil
	}
	content, err := m.scope.read(raw)
	if err != nil {
		m.ps.addErr(where(keyInstructionsFile), err)
		return nil
	}
	holder[keyInstructions] = content
	return &instructions{parts: []part{{text: content, field: keyInstructionsFile, origin: fmt.Sprintf("file %q", raw)}}}
}

// files handles instructions_files, with optional inline text appended.
func (m *materializer) files(holder map[string]any, where func(string) string) *instructions {
	list, ok := holder[keyInstructionsFiles].([]any)
	if !ok || len(list) == 0 {
		m.ps.add(where(keyInstructionsFiles), "must be a non-empty list of paths")
		return nil
	}
	failed := false
	texts := make([]string, 0, len(list)+1)
	for i, e := range list {
		field := fmt.Sprintf("%s[%d]", keyInstructionsFiles, i)
		raw, ok := e.(string)
		if !ok {
			m.ps.add(where(field), "must be a string, not %s", kindOf(e))
			failed = true
			continue
		}
		content, err := m.scope.read(raw)
		if err != nil {
			m.ps.addErr(where(field), err)
			failed = true
			continue
		}
		texts = append(texts, content)
	}
	if inline, set := holder[keyInstructions]; set && inline != nil {
		s, ok := inline.(string)
		if !ok {
			m.ps.add(where(keyInstructions), "must be a string when combined with instructions_files, not %s", kindOf(inline))
			failed = true
		} else if s != "" {
			texts = append(texts, s)
		}
	}
	if failed {
		return nil
	}
	text := strings.Join(texts, partSeparator)
	holder[keyInstructions] = text
	return &instructions{parts: []part{{text: text, field: keyInstructionsFiles}}}
}

// sequence handles instructions_sequence: each item becomes one part.
func (m *materializer) sequence(holder map[string]any, where func(string) string) *instructions {
	list, ok := holder[keyInstructionsSequence].([]any)
	if !ok || len(list) == 0 {
		m.ps.add(where(keyInstructionsSequence), "must be a non-empty list of items")
		return nil
	}
	failed := false
	parts := make([]part, 0, len(list))
	tree := make([]any, 0, len(list))
	for i, e := range list {
		field := fmt.Sprintf("%s[%d]", keyInstructionsSequence, i)
		p, ok := m.sequenceItem(e, field, where)
		if !ok {
			failed = true
			continue
		}
		parts = append(parts, p)
		tree = append(tree, partTree(p))
	}
	if !failed {
		holder[keyInstructions] = tree
	}
	// On failure the parts that did materialize are still returned, so that
	// their placeholders and gates are checked too; the load fails anyway.
	return &instructions{parts: parts}
}

// sequenceItem materializes one item of instructions_sequence.
func (m *materializer) sequenceItem(e any, field string, where func(string) string) (part, bool) {
	item, ok := e.(map[string]any)
	if !ok {
		m.ps.add(where(field), "must be an object with one of file, ref or text, not %s", kindOf(e))
		return part{}, false
	}
	ok = true
	var sources []string
	for k := range item {
		switch k {
		case "file", "ref", "text":
			sources = append(sources, k)
		case "where":
		default:
			m.ps.add(where(field), "unknown key %q (want file, ref or text, and optionally where)", k)
			ok = false
		}
	}
	slices.Sort(sources)
	if len(sources) != 1 {
		if len(sources) == 0 {
			m.ps.add(where(field), "must set exactly one of file, ref or text")
		} else {
			m.ps.add(where(field), "must set exactly one of file, ref or text, not %s", strings.Join(sources, " and "))
		}
		return part{}, false
	}
	p := part{field: field}
	gate, gateOK := m.where(item, field, where)
	p.where = gate
	kind := sources[0]
	value, isString := item[kind].(string)
	if !isString {
		m.ps.add(where(field+"."+kind), "must be a string, not %s", kindOf(item[kind]))
		return part{}, false
	}
	switch kind {
	case "file":
		content, err := m.scope.read(value)
		if err != nil {
			m.ps.addErr(where(field+".file"), err)
			return part{}, false
		}
		p.text = content
		p.origin = fmt.Sprintf("file %q", value)
	case "ref":
		text, found := m.catalog[value]
		if !found {
			m.ps.add(where(field+".ref"), "unknown instruction part %q (declare it under instruction_parts)", value)
			return part{}, false
		}
		if err := m.scope.count(len(text)); err != nil {
			m.ps.addErr(where(field+".ref"), err)
			return part{}, false
		}
		p.text = text
		p.origin = fmt.Sprintf("ref %q", value)
		p.fromRef = true
	case "text":
		p.text = value
	}
	return p, ok && gateOK
}

// where reads the optional where gate of an item: {context: PATH}.
func (m *materializer) where(item map[string]any, field string, where func(string) string) (string, bool) {
	w, set := item["where"]
	if !set || w == nil {
		return "", true
	}
	obj, ok := w.(map[string]any)
	if !ok {
		m.ps.add(where(field+".where"), "must be an object {context: PATH}, not %s", kindOf(w))
		return "", false
	}
	ok = true
	for k := range obj {
		if k != "context" {
			m.ps.add(where(field+".where"), "unknown key %q (only context is supported)", k)
			ok = false
		}
	}
	path, isString := obj["context"].(string)
	if !isString || strings.TrimSpace(path) == "" {
		m.ps.add(where(field+".where.context"), "must be a non-empty context path")
		return "", false
	}
	return path, ok
}

// inline handles instructions given directly: a string, or a list of
// {text, where} parts (the materialized list form).
func (m *materializer) inline(holder map[string]any, where func(string) string) *instructions {
	switch v := holder[keyInstructions].(type) {
	case string:
		return &instructions{parts: []part{{text: v, field: keyInstructions}}}
	case []any:
		if len(v) == 0 {
			m.ps.add(where(keyInstructions), "must not be an empty list")
			return nil
		}
		parts := make([]part, 0, len(v))
		for i, e := range v {
			field := fmt.Sprintf("%s[%d]", keyInstructions, i)
			item, ok := e.(map[string]any)
			if !ok {
				m.ps.add(where(field), "must be an object {text, where}, not %s", kindOf(e))
				continue
			}
			for k := range item {
				if k != "text" && k != "where" {
					m.ps.add(where(field), "unknown key %q (want text and optionally where)", k)
				}
			}
			text, ok := item["text"].(string)
			if !ok {
				m.ps.add(where(field+".text"), "must be a string")
				continue
			}
			gate, _ := m.where(item, field, where)
			parts = append(parts, part{text: text, where: gate, field: field})
		}
		// Invalid items are left out; the remaining parts are still checked
		// and the load fails anyway.
		return &instructions{parts: parts}
	default:
		m.ps.add(where(keyInstructions), "must be a string or a list of parts, not %s", kindOf(v))
		return nil
	}
}

// partTree is the materialized tree form of a part.
func partTree(p part) map[string]any {
	t := map[string]any{"text": p.text}
	if p.where != "" {
		t["where"] = map[string]any{"context": p.where}
	}
	return t
}
