package descriptor

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Registry tells which tool targets the host application can execute. The
// descriptor's tools section maps each logical tool id to a target; a
// registry binds targets to implementations.
type Registry interface {
	// HasTarget reports whether target is bound to an implementation.
	HasTarget(target string) bool
}

// Targets is a Registry holding a plain set of bound target names.
type Targets map[string]struct{}

// NewTargets returns a Targets holding names.
func NewTargets(names ...string) Targets {
	t := make(Targets, len(names))
	for _, n := range names {
		t[n] = struct{}{}
	}
	return t
}

// HasTarget reports whether name is in the set.
func (t Targets) HasTarget(name string) bool {
	_, ok := t[name]
	return ok
}

// Validate checks that every tool an agent declares is bound in reg, and
// returns an *Error listing each agent tool whose target is missing. Load
// and Parse have already checked everything that does not depend on a
// registry (entry agent, tool ids, handoffs, placeholders, where gates); a
// nil reg therefore makes Validate return nil. An empty, non-nil registry
// binds nothing.
func (d *Descriptor) Validate(reg Registry) error {
	if reg == nil {
		return nil
	}
	ps := &problems{}
	for _, id := range d.agentIDs {
		a := d.agents[id]
		for i, tool := range a.tools {
			target := d.tools[tool]
			if !reg.HasTarget(target) {
				ps.add(agentWhere(id, fmt.Sprintf("tools[%d]", i)), "tool %q: target %q is not bound in the registry", tool, target)
			}
		}
	}
	return ps.err(d.source)
}

// check runs the checks that relate parts of the descriptor to each other:
// the entry agent, tool ids, handoffs, instruction placeholders, where
// gates and context defaults.
func (d *Descriptor) check(ps *problems) {
	if d.entry != "" && len(d.declared) > 0 {
		if !d.declared[d.entry] {
			ps.add("runtime.entry_agent", "unknown agent %q", d.entry)
		}
	}
	for _, id := range d.agentIDs {
		a := d.agents[id]
		for i, tool := range a.tools {
			if _, ok := d.tools[tool]; tool != "" && !ok {
				ps.add(agentWhere(id, fmt.Sprintf("tools[%d]", i)), "unknown tool %q (declare it under tools)", tool)
			}
		}
		for i := range a.handoffs {
			h := &a.handoffs[i]
			if h.Agent != "" && !d.declared[h.Agent] {
				ps.add(agentWhere(id, fmt.Sprintf("handoffs[%d]", i)), "unknown agent %q", h.Agent)
			}
			if h.whereRaw != "" {
				h.Where = d.checkGate(h.whereRaw, fmt.Sprintf("Agent %q handoff %q where", id, h.Agent), agentWhere(id, fmt.Sprintf("handoffs[%d].where.context", i)), ps)
			}
		}
	}
	for _, name := range sortedKeysString(d.catalog) {
		t, errs := compileTemplate(d.catalog[name])
		where := fmt.Sprintf("instruction_parts %q", name)
		for _, err := range errs {
			ps.addErr(where, err)
		}
		d.checkPlaceholders(t, where, ps)
	}
	if d.defaults.instr != nil {
		d.compile(d.defaults.instr, ps)
	}
	for _, id := range d.agentIDs {
		if a := d.agents[id]; a.ownInstr {
			d.compile(a.instr, ps)
		}
	}
	d.checkDefaults(ps)
}

// compile compiles each part of instr, reporting refused or undeclared
// placeholders and bad where gates. Parts copied from instruction_parts are
// compiled but their placeholders were already reported for the catalog.
func (d *Descriptor) compile(instr *instructions, ps *problems) {
	for i := range instr.parts {
		p := &instr.parts[i]
		where := instr.owner + ": " + p.field
		if p.origin != "" {
			where += " (" + p.origin + ")"
		}
		t, errs := compileTemplate(p.text)
		p.tmpl = t
		if !p.fromRef {
			for _, err := range errs {
				ps.addErr(where, err)
			}
			d.checkPlaceholders(t, where, ps)
		}
		if p.where != "" {
			p.gate = d.checkGate(p.where, instr.label+" instruction where", instr.owner+": "+p.field+".where.context", ps)
		}
	}
}

// checkPlaceholders reports placeholders whose path is not an exact
// declared reference.
func (d *Descriptor) checkPlaceholders(t template, where string, ps *problems) {
	for _, path := range t.paths() {
		if _, ok := d.refs[path]; !ok {
			ps.add(where, "placeholder {{context.%s}}: %s", path, d.undeclared(path))
		}
	}
}

// checkGate checks a where gate as aioc does and returns its normalized
// path: the path must be declared under context.references with type
// "boolean" exactly (a bare true reference, or one without a type, is
// refused). label names the gate in aioc's words, for example
// `Agent "router" instruction where`; where locates a malformed path.
func (d *Descriptor) checkGate(raw, label, where string, ps *problems) string {
	path, err := normalizePath(raw, "the where.context path")
	if err != nil {
		ps.addErr(where, err)
		return ""
	}
	r, ok := d.refs[path]
	if !ok {
		ps.addErr("", aiocf("%s references undeclared context path %q.%s", label, path, d.exactHint(path)))
		return path
	}
	if r.Type != "boolean" {
		ps.addErr("", aiocf("%s context path %q must be declared with type %q.", label, path, "boolean"))
	}
	return path
}

// exactHint points out a declared parent of an undeclared path, since
// reference paths are exact, or returns "".
func (d *Descriptor) exactHint(path string) string {
	for p := parentPath(path); p != ""; p = parentPath(p) {
		if _, ok := d.refs[p]; ok {
			return fmt.Sprintf(" (%q is declared, but reference paths are exact: a parent does not allow its children)", p)
		}
	}
	return ""
}

// undeclared explains that path is not declared, pointing out a declared
// parent, since reference paths are exact.
func (d *Descriptor) undeclared(path string) string {
	msg := fmt.Sprintf("context path %q is not declared in context.references", path)
	for p := parentPath(path); p != ""; p = parentPath(p) {
		if _, ok := d.refs[p]; ok {
			return msg + fmt.Sprintf(" (%q is, but reference paths are exact: a parent does not allow its children)", p)
		}
	}
	return msg
}

// checkDefaults reports context field defaults that cannot be combined:
// a default nested under a parent field whose default is not an object.
func (d *Descriptor) checkDefaults(ps *problems) {
	seen := map[string]any{}
	fields := slices.Clone(d.fields)
	slices.SortFunc(fields, func(a, b Field) int { // a parent before its children
		return slices.Compare(fieldSegments(a.Path), fieldSegments(b.Path))
	})
	for _, f := range fields {
		if !f.HasDefault {
			continue
		}
		path := strings.Join(fieldSegments(f.Path), ".")
		for p := parentPath(path); p != ""; p = parentPath(p) {
			if v, ok := seen[p]; ok {
				if _, obj := v.(map[string]any); !obj {
					ps.add(fmt.Sprintf("context.fields %q", f.Path), "its default cannot be placed under the default of %q, which is not an object", p)
				}
			}
		}
		seen[path] = f.Default
	}
}

// parentPath returns the dot path without its last segment, or "".
func parentPath(p string) string {
	i := strings.LastIndexByte(p, '.')
	if i < 0 {
		return ""
	}
	return p[:i]
}

// sortedKeysString returns the keys of m in byte order.
func sortedKeysString(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
