package descriptor

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Keys each object of the descriptor may hold. Objects not listed here
// (the top level, metadata, modelSettings, context field and reference
// entries) are open: aioc keeps unknown top-level keys, and so does the
// hash.
var (
	runtimeKeys  = []string{"entry_agent", "max_turns"}
	contextKeys  = []string{"fields", "references"}
	toolKeys     = []string{"target"}
	instrKeys    = []string{keyInstructions, keyInstructionsFile, keyInstructionsFiles, keyInstructionsSequence}
	defaultsKeys = append([]string{"model", "modelSettings"}, instrKeys...)
	agentKeys    = append([]string{"name", "handoffDescription", "model", "modelSettings", "tools", "handoffs"}, instrKeys...)
)

// build turns a decoded tree into a Descriptor. It materializes instruction
// fields in place, so that the tree becomes the materialized descriptor
// that is hashed, then checks everything and reports all problems at once.
func build(tree map[string]any, scope *pathScope, source string) (*Descriptor, error) {
	ps := &problems{}
	d := &Descriptor{
		source:  source,
		refs:    map[string]Reference{},
		tools:   map[string]string{},
		catalog: map[string]string{},
		agents:  map[string]*Agent{},
	}
	if v, set := tree["descriptor_version"]; set && v != nil {
		s, ok := v.(string)
		if !ok || s != DescriptorVersion {
			ps.add("descriptor_version", "unsupported version %s (want %q)", show(v), DescriptorVersion)
		}
		d.version = s
	}
	if md := optObject(tree, "metadata", "metadata", ps); md != nil {
		d.metadata = md
		d.name = optString(md, "name", "metadata.name", ps)
		d.metaVersion = optString(md, "version", "metadata.version", ps)
	}
	d.buildRuntime(tree, ps)
	d.buildContext(tree, ps)
	if cat := optObject(tree, "instruction_parts", "instruction_parts", ps); cat != nil {
		for _, name := range sortedKeys(cat) {
			s, ok := cat[name].(string)
			if !ok {
				ps.add(fmt.Sprintf("instruction_parts %q", name), "must be a string, not %s", kindOf(cat[name]))
				continue
			}
			d.catalog[name] = s
		}
	}
	if tools := optObject(tree, "tools", "tools", ps); tools != nil {
		for _, id := range sortedKeys(tools) {
			where := fmt.Sprintf("tools %q", id)
			if strings.TrimSpace(id) == "" {
				ps.add("tools", "tool ids must not be empty")
				continue
			}
			obj, ok := tools[id].(map[string]any)
			if !ok {
				ps.add(where, "must be an object {target: NAME}, not %s", kindOf(tools[id]))
				continue
			}
			checkKeys(obj, toolKeys, where, ps)
			target, ok := obj["target"].(string)
			if !ok || strings.TrimSpace(target) == "" {
				ps.add(where+": target", "is required and must be a non-empty string")
				continue
			}
			d.tools[id] = target
		}
	}

	m := &materializer{scope: scope, catalog: d.catalog, ps: ps}
	if ad := optObject(tree, "agent_defaults", "agent_defaults", ps); ad != nil {
		where := func(field string) string {
			if field == "" {
				return "agent_defaults"
			}
			return "agent_defaults: " + field
		}
		checkKeys(ad, defaultsKeys, "agent_defaults", ps)
		d.defaults.model = optString(ad, "model", where("model"), ps)
		d.defaults.settings = optObject(ad, "modelSettings", where("modelSettings"), ps)
		d.defaults.instr = m.run(ad, where)
		if d.defaults.instr != nil {
			d.defaults.instr.label = "agent_defaults"
		}
	}
	d.buildAgents(tree, m, ps)
	d.check(ps)
	if err := ps.err(source); err != nil {
		return nil, err
	}

	var b bytes.Buffer
	if err := writeCanonical(&b, tree); err != nil {
		return nil, &Error{Source: source, Problems: []*Problem{{Err: err}}}
	}
	d.canon = b.Bytes()
	d.hash = hashCanonical(d.canon)
	return d, nil
}

// buildRuntime reads runtime.
func (d *Descriptor) buildRuntime(tree map[string]any, ps *problems) {
	rt, ok := tree["runtime"].(map[string]any)
	if !ok {
		ps.add("runtime", "is required and must be an object with entry_agent")
		return
	}
	checkKeys(rt, runtimeKeys, "runtime", ps)
	entry, ok := rt["entry_agent"].(string)
	if !ok || strings.TrimSpace(entry) == "" {
		ps.add("runtime.entry_agent", "is required and must be a non-empty string")
	}
	d.entry = entry
	if v, set := rt["max_turns"]; set && v != nil {
		f, ok := v.(float64)
		if !ok || f != math.Trunc(f) || f < 1 || f > math.MaxInt32 {
			ps.add("runtime.max_turns", "must be a positive integer, not %s", show(v))
		} else {
			d.maxTurns = int(f)
		}
	}
}

// buildContext reads context.fields and context.references.
func (d *Descriptor) buildContext(tree map[string]any, ps *problems) {
	ctx := optObject(tree, "context", "context", ps)
	if ctx == nil {
		return
	}
	checkKeys(ctx, contextKeys, "context", ps)
	if fields := optObject(ctx, "fields", "context.fields", ps); fields != nil {
		// Field keys are taken as written: NewContext splits them at dots
		// and skips empty segments, as aioc's createContext does.
		for _, path := range sortedKeys(fields) {
			where := fmt.Sprintf("context.fields %q", path)
			obj, ok := fields[path].(map[string]any)
			if !ok {
				ps.add(where, "must be an object with a type, not %s", kindOf(fields[path]))
				continue
			}
			typ, ok := obj["type"].(string)
			if !ok || strings.TrimSpace(typ) == "" {
				ps.add(where+": type", "is required and must be a non-empty string")
			}
			f := Field{Path: path, Type: typ}
			if v, set := obj["default"]; set {
				f.Default, f.HasDefault = v, true
				if len(fieldSegments(path)) == 0 {
					ps.add(where, "a field with a default needs a path with at least one segment")
				}
			}
			f.Optional = optBool(obj, "optional", where+": optional", ps)
			f.Mutable = optBool(obj, "mutable", where+": mutable", ps)
			f.Redact = optBool(obj, "redact", where+": redact", ps)
			d.fields = append(d.fields, f)
		}
	}
	if refs := optObject(ctx, "references", "context.references", ps); refs != nil {
		written := map[string]string{} // normalized path -> key as written
		for _, key := range sortedKeys(refs) {
			where := fmt.Sprintf("context.references %q", key)
			if v, isBool := refs[key].(bool); isBool && !v {
				continue // declared unreadable, whatever the path
			}
			path, err := normalizePath(key, "Context reference path")
			if err != nil {
				ps.addErr(where, err)
				continue
			}
			var r Reference
			switch v := refs[key].(type) {
			case bool:
				r = Reference{Path: path}
			case map[string]any:
				r = Reference{
					Path:     path,
					Type:     optString(v, "type", where+": type", ps),
					Optional: optBool(v, "optional", where+": optional", ps),
				}
			default:
				ps.add(where, "must be true, false or an object, not %s", kindOf(v))
				continue
			}
			if other, dup := written[path]; dup {
				ps.add(where, "declares the same path %q as %q; keep one of them", path, other)
				continue
			}
			written[path] = key
			d.refs[path] = r
			d.refList = append(d.refList, r)
		}
		slices.SortFunc(d.refList, func(a, b Reference) int { return strings.Compare(a.Path, b.Path) })
	}
}

// buildAgents reads agents, applying agent_defaults.
func (d *Descriptor) buildAgents(tree map[string]any, m *materializer, ps *problems) {
	agents, ok := tree["agents"].(map[string]any)
	if !ok {
		ps.add("agents", "is required and must be an object of agents")
		return
	}
	if len(agents) == 0 {
		ps.add("agents", "must define at least one agent")
		return
	}
	d.declared = make(map[string]bool, len(agents))
	for _, id := range sortedKeys(agents) {
		d.declared[id] = true
		if strings.TrimSpace(id) == "" {
			ps.add("agents", "agent ids must not be empty")
			continue
		}
		where := func(field string) string { return agentWhere(id, field) }
		obj, ok := agents[id].(map[string]any)
		if !ok {
			ps.add(where(""), "must be an object, not %s", kindOf(agents[id]))
			continue
		}
		checkKeys(obj, agentKeys, where(""), ps)
		a := &Agent{
			id:                 id,
			name:               optString(obj, "name", where("name"), ps),
			handoffDescription: optString(obj, "handoffDescription", where("handoffDescription"), ps),
			model:              optString(obj, "model", where("model"), ps),
			modelSettings:      optObject(obj, "modelSettings", where("modelSettings"), ps),
			tools:              stringList(obj, "tools", where, ps),
			handoffs:           handoffList(obj, where, ps),
		}
		if a.name == "" {
			a.name = id
		}
		if a.model == "" {
			a.model = d.defaults.model
		}
		if a.modelSettings == nil {
			a.modelSettings = d.defaults.settings
		}
		a.instr = m.run(obj, where)
		a.ownInstr = a.instr != nil
		if a.ownInstr {
			a.instr.label = fmt.Sprintf("Agent %q", id)
		}
		if a.instr == nil {
			a.instr = d.defaults.instr
		}
		d.agents[id] = a
		d.agentIDs = append(d.agentIDs, id)
	}
}

// sortedKeys returns the keys of obj in byte order.
func sortedKeys(obj map[string]any) []string { return slices.Sorted(maps.Keys(obj)) }

// checkKeys reports keys of obj that are not in allowed.
func checkKeys(obj map[string]any, allowed []string, where string, ps *problems) {
	for _, k := range sortedKeys(obj) {
		if !slices.Contains(allowed, k) {
			ps.add(where, "unknown key %q (allowed: %s)", k, strings.Join(allowed, ", "))
		}
	}
}

// optObject returns obj[key] when it is an object, nil when it is absent or
// null, and reports anything else.
func optObject(obj map[string]any, key, where string, ps *problems) map[string]any {
	v, set := obj[key]
	if !set || v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		ps.add(where, "must be an object, not %s", kindOf(v))
		return nil
	}
	return m
}

// optString returns obj[key] when it is a string, "" when it is absent or
// null, and reports anything else.
func optString(obj map[string]any, key, where string, ps *problems) string {
	v, set := obj[key]
	if !set || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		ps.add(where, "must be a string, not %s", kindOf(v))
	}
	return s
}

// optBool returns obj[key] when it is a boolean, false when it is absent or
// null, and reports anything else.
func optBool(obj map[string]any, key, where string, ps *problems) bool {
	v, set := obj[key]
	if !set || v == nil {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		ps.add(where, "must be a boolean, not %s", kindOf(v))
	}
	return b
}

// stringList reads a list of distinct non-empty strings, such as tools or
// handoffs. Invalid entries are reported and kept as "" so that indexes
// still match the descriptor.
func stringList(obj map[string]any, key string, where func(string) string, ps *problems) []string {
	v, set := obj[key]
	if !set || v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		ps.add(where(key), "must be a list of strings, not %s", kindOf(v))
		return nil
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		field := fmt.Sprintf("%s[%d]", key, i)
		s, ok := e.(string)
		if !ok || strings.TrimSpace(s) == "" {
			ps.add(where(field), "must be a non-empty string, not %s", show(e))
			s = "" // keep positions aligned with the descriptor for later messages
		} else if slices.Contains(out, s) {
			ps.add(where(field), "%q is listed twice", s)
		}
		out = append(out, s)
	}
	return out
}

// show renders a value for a message.
func show(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case float64:
		return jsNumberString(x)
	}
	b, err := MarshalCanonical(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}
