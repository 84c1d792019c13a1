package policy

import (
	"embed"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

//go:embed packs/*.yaml
var packFS embed.FS

// Pack describes a built-in rule pack.
type Pack struct {
	// Name is how Options.Packs and the CLI's --packs refer to the pack.
	Name string
	// Description says what the pack guards against.
	Description string
	// Default reports whether the pack is on unless switched off.
	Default bool
	// Params are the parameters the pack reads (as config.NAME) with their
	// default values.
	Params map[string]any
	// Requires lists the parameters that must be set to a non-empty value
	// when the pack is on.
	Requires []string

	source Source
	node   *yaml.Node // the parsed file
}

// packFields are the top-level keys of a pack file.
var packFields = []string{"pack", "description", "default", "params", "requires", "rules"}

// builtinPacks parses the embedded packs once.
var builtinPacks = sync.OnceValue(func() []*Pack {
	entries, err := packFS.ReadDir("packs")
	if err != nil {
		panic(fmt.Sprintf("policy: embedded packs: %v", err))
	}
	var out []*Pack
	for _, e := range entries {
		name := path.Join("packs", e.Name())
		data, err := packFS.ReadFile(name)
		if err != nil {
			panic(fmt.Sprintf("policy: embedded pack %s: %v", name, err))
		}
		p, err := parsePackHeader(Source{Name: "builtin:" + name, Data: data})
		if err != nil {
			panic(fmt.Sprintf("policy: embedded pack %s: %v", name, err))
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
})

// parsePackHeader reads everything of a pack file except its rules.
func parsePackHeader(src Source) (*Pack, error) {
	ps := &problems{}
	root := parseYAML(src.Name, src.Data, ps)
	f := mapping(src.Name, root, "", ps, packFields...)
	p := &Pack{source: src, node: root, Params: map[string]any{}}
	p.Name, _ = scalarString(orEmpty(f["pack"]))
	p.Description, _ = scalarString(orEmpty(f["description"]))
	if v := f["default"]; v != nil {
		if err := v.Decode(&p.Default); err != nil {
			ps.add(src.Name, v.Line, "", "default: %v", err)
		}
	}
	if v := f["params"]; v != nil {
		if err := v.Decode(&p.Params); err != nil {
			ps.add(src.Name, v.Line, "", "params: %v", err)
		}
	}
	if v := f["requires"]; v != nil {
		var err error
		if p.Requires, err = stringList(v); err != nil {
			ps.add(src.Name, v.Line, "", "requires: %v", err)
		}
	}
	if p.Name == "" {
		ps.add(src.Name, 0, "", "missing pack name")
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return p, nil
}

func orEmpty(n *yaml.Node) *yaml.Node {
	if n == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	}
	return n
}

// Packs lists the built-in rule packs, sorted by name.
func Packs() []Pack {
	ps := builtinPacks()
	out := make([]Pack, len(ps))
	for i, p := range ps {
		out[i] = *p
		out[i].Params = cloneParams(p.Params)
		out[i].Requires = append([]string(nil), p.Requires...)
	}
	return out
}

func packByName(name string) (*Pack, bool) {
	for _, p := range builtinPacks() {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}

// PackNames returns the names of the built-in packs, sorted.
func PackNames() []string {
	var out []string
	for _, p := range builtinPacks() {
		out = append(out, p.Name)
	}
	return out
}

func cloneParams(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// enabledPacks returns the packs the options turn on, reporting unknown
// names.
func enabledPacks(opts Options, ps *problems) []*Pack {
	for name := range opts.Packs {
		if _, ok := packByName(name); !ok {
			ps.add("", 0, "", "unknown pack %q (known: %s)", name, strings.Join(PackNames(), ", "))
		}
	}
	var out []*Pack
	for _, p := range builtinPacks() {
		if opts.PackEnabled(p.Name) {
			out = append(out, p)
		}
	}
	return out
}

// mergeParams combines the defaults of the enabled packs with the caller's
// parameters, checking kinds and required parameters.
func mergeParams(packs []*Pack, user map[string]any, ps *problems) map[string]any {
	out := map[string]any{}
	declared := map[string]any{}
	for _, p := range packs {
		for k, v := range p.Params {
			out[k] = v
			declared[k] = v
		}
	}
	for k, v := range user {
		if def, ok := declared[k]; ok && def != nil && v != nil && kindOf(def) != kindOf(v) {
			ps.add("", 0, "", "param %s: expected %s, got %s", k, kindOf(def), kindOf(v))
			continue
		}
		out[k] = v
	}
	for _, p := range packs {
		for _, k := range p.Requires {
			if isEmpty(out[k]) {
				ps.add("", 0, "", "pack %s needs param %s", p.Name, k)
			}
		}
	}
	return out
}

// kindOf names the JSON kind of a parameter value.
func kindOf(v any) string {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map:
		return "a map"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.String, reflect.Array:
		return rv.Len() == 0
	}
	return false
}
