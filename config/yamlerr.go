package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/ahp-go/ahp/internal/yamlline"
)

var unknownFieldRe = regexp.MustCompile(`line (\d+): field (\S+) not found in type config\.(\w+)`)

// cleanYAMLError rewrites a yaml.v3 error about a configuration file in the
// file's own terms: the section's YAML name instead of a Go type, the keys
// it takes, and syntax errors at their real line.
func cleanYAMLError(data []byte, err error) error {
	msg := err.Error()
	if !strings.Contains(msg, "unmarshal errors:") {
		line, m := yamlline.Syntax(data, msg)
		if line > 0 {
			return fmt.Errorf("line %d: %s", line, m)
		}
		return errors.New(m)
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.ReplaceAll(msg, "unmarshal errors:\n  ", "")
	sections := sectionKeys()
	msg = unknownFieldRe.ReplaceAllStringFunc(msg, func(s string) string {
		m := unknownFieldRe.FindStringSubmatch(s)
		sec, ok := sections[m[3]]
		if !ok {
			return s
		}
		where := "at the top level"
		if sec.path != "" {
			where = "in section " + sec.path
		}
		return fmt.Sprintf("line %s: unknown key %s %s (valid keys: %s)", m[1], m[2], where, strings.Join(sec.keys, ", "))
	})
	msg = strings.ReplaceAll(msg, " in type config.", " in section ")
	return errors.New(msg)
}

type section struct {
	path string   // YAML path of the section ("" for the top level)
	keys []string // its keys, sorted
}

// sectionKeys maps the Go type name of every section of Config to its
// YAML path and keys.
func sectionKeys() map[string]section {
	out := map[string]section{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeOf(Config{}).PkgPath() {
			return
		}
		if _, seen := out[t.Name()]; seen {
			return
		}
		sec := section{path: path}
		out[t.Name()] = sec
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			sec.keys = append(sec.keys, name)
			sub := name
			if path != "" {
				sub = path + "." + name
			}
			walk(f.Type, sub)
		}
		sort.Strings(sec.keys)
		out[t.Name()] = sec
	}
	walk(reflect.TypeOf(Config{}), "")
	return out
}
