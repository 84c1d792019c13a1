package descriptor

import (
	"fmt"
	"strings"
	"time"
)

// Built-in placeholders, recognised in context field defaults only.
const (
	// BuiltinMessage is replaced by ContextInput.Message.
	BuiltinMessage = "input.message"
	// BuiltinNow is replaced by the current time in UTC, formatted like
	// 2006-01-02T15:04:05.000Z (ECMAScript's Date.prototype.toISOString).
	BuiltinNow = "runtime.now_iso"
)

// nowLayout is the format of {{runtime.now_iso}}.
const nowLayout = "2006-01-02T15:04:05.000Z"

// ContextInput is what the application supplies to NewContext.
type ContextInput struct {
	// Message is the user message of the run. It replaces defaults that are
	// exactly "{{input.message}}".
	Message string
	// Now returns the current time for defaults that are exactly
	// "{{runtime.now_iso}}". It is called at most once per NewContext. Nil
	// means time.Now; tests inject a fixed clock here.
	Now func() time.Time
	// Overrides are merged over the defaults: objects are merged key by key,
	// recursively; any other value (arrays included) replaces the default.
	// Values may be any JSON-encodable Go values.
	Overrides map[string]any
}

// NewContext builds a run context: the defaults of context.fields, placed
// at their dot paths (so "a.b" becomes {"a": {"b": ...}}), with the
// built-in placeholders substituted, then the overrides merged in. Fields
// without a default are left out. The result uses the JSON data model
// (map[string]any, []any, string, float64, bool, nil) and belongs to the
// caller. The application remains responsible for validating it.
func (d *Descriptor) NewContext(in ContextInput) (map[string]any, error) {
	ctx := map[string]any{}
	var nowISO string
	now := func() string {
		if nowISO == "" {
			clock := in.Now
			if clock == nil {
				clock = time.Now
			}
			nowISO = clock().UTC().Format(nowLayout)
		}
		return nowISO
	}
	for _, f := range d.fields {
		if !f.HasDefault {
			continue
		}
		v := cloneValue(f.Default)
		if s, ok := v.(string); ok {
			switch builtinName(s) {
			case BuiltinMessage:
				v = in.Message
			case BuiltinNow:
				v = now()
			}
		}
		setPath(ctx, f.Path, v)
	}
	if in.Overrides != nil {
		o, err := normalizeValue(in.Overrides)
		if err != nil {
			return nil, fmt.Errorf("descriptor: context overrides: %w", err)
		}
		mergeInto(ctx, o.(map[string]any))
	}
	return ctx, nil
}

// builtinName returns the built-in named by s when s is exactly one
// built-in placeholder (spaces inside the braces allowed), and "" otherwise.
func builtinName(s string) string {
	inner, ok := strings.CutPrefix(s, "{{")
	if !ok {
		return ""
	}
	inner, ok = strings.CutSuffix(inner, "}}")
	if !ok {
		return ""
	}
	switch name := strings.TrimSpace(inner); name {
	case BuiltinMessage, BuiltinNow:
		return name
	}
	return ""
}

// fieldSegments splits a context field path at dots and drops empty
// segments, as aioc's createContext does; segments are not trimmed.
func fieldSegments(path string) []string {
	var segs []string
	for s := range strings.SplitSeq(path, ".") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	return segs
}

// setPath stores v at the segments of a field path, creating (or replacing
// non-object) intermediate objects. A path without segments is ignored
// (Load refuses such a field when it has a default).
func setPath(ctx map[string]any, path string, v any) {
	segs := fieldSegments(path)
	if len(segs) == 0 {
		return
	}
	cur := ctx
	for _, s := range segs[:len(segs)-1] {
		next, ok := cur[s].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[s] = next
		}
		cur = next
	}
	cur[segs[len(segs)-1]] = v
}

// mergeInto merges src into dst: objects recursively, anything else by
// replacement.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				mergeInto(dv, sv)
				continue
			}
		}
		dst[k] = cloneValue(v)
	}
}

// lookup reads a normalized dot path (see normalizePath) from a
// normalized context. A null value counts as missing.
func lookup(ctx map[string]any, path string) (any, bool) {
	var cur any = ctx
	for s := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[s]; !ok {
			return nil, false
		}
	}
	return cur, cur != nil
}

// ResolveInstructions renders the instructions of an agent against a run
// context (typically one built by NewContext and then updated by the
// application). Parts are taken in order; a part with a where gate is kept
// only when the context holds exactly true at the gate's path, and a gate
// whose value is missing or not a boolean is an error. Placeholders of kept
// parts are replaced by the values at their paths: strings as they are,
// numbers and booleans in JSON notation, objects and arrays as canonical
// JSON. A missing (or null) value renders as "" for an optional reference
// and is an error for a required one. Kept parts are joined with a blank
// line. An agent without instructions yields "".
//
// All failures are reported together in an *Error.
func (d *Descriptor) ResolveInstructions(agentID string, ctx map[string]any) (string, error) {
	a, ok := d.agents[agentID]
	if !ok {
		return "", fmt.Errorf("descriptor: unknown agent %q", agentID)
	}
	if a.instr == nil {
		return "", nil
	}
	root := map[string]any{}
	if ctx != nil {
		n, err := normalizeValue(ctx)
		if err != nil {
			return "", fmt.Errorf("descriptor: run context: %w", err)
		}
		root = n.(map[string]any)
	}
	ps := &problems{}
	var out []string
	for _, p := range a.instr.parts {
		where := agentWhere(agentID, p.field)
		if p.gate != "" {
			open, err := gateHolds(root, p.gate)
			if err != nil {
				ps.addErr(where+".where", err)
				continue
			}
			if !open {
				continue
			}
		}
		out = append(out, d.render(p.tmpl, root, where, ps))
	}
	if err := ps.err(d.source); err != nil {
		return "", err
	}
	return strings.Join(out, partSeparator), nil
}

// gateHolds evaluates a where gate: the value at path must be a boolean.
func gateHolds(ctx map[string]any, path string) (bool, error) {
	v, found := lookup(ctx, path)
	if !found {
		return false, fmt.Errorf("context path %q is missing; a where gate needs a boolean", path)
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, fmt.Errorf("context path %q holds %s; a where gate needs a boolean", path, kindOf(v))
	}
	return b, nil
}

// render substitutes the placeholders of t.
func (d *Descriptor) render(t template, ctx map[string]any, where string, ps *problems) string {
	var b strings.Builder
	for _, s := range t {
		if s.path == "" {
			b.WriteString(s.lit)
			continue
		}
		v, found := lookup(ctx, s.path)
		if !found {
			if !d.refs[s.path].Optional {
				ps.add(where, "required context path %q is missing", s.path)
			}
			continue
		}
		b.WriteString(stringify(v))
	}
	return b.String()
}

// stringify renders a context value inside instructions.
func stringify(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		s, err := formatNumber(x)
		if err != nil {
			return ""
		}
		return s
	default:
		b, err := MarshalCanonical(x)
		if err != nil {
			return ""
		}
		return string(b)
	}
}
