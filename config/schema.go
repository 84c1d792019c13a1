package config

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"
)

// Schema is the JSON Schema (2020-12) of the configuration file, for
// editors and for ValidateYAML.
//
//go:embed schema.json
var Schema []byte

// ValidateYAML checks a configuration file's content against Schema.
func ValidateYAML(data []byte) error {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	if doc == nil {
		return nil
	}
	// Round trip through JSON so that YAML maps become JSON objects.
	js, err := json.Marshal(yamlToJSON(doc))
	if err != nil {
		return err
	}
	var inst any
	if err := json.Unmarshal(js, &inst); err != nil {
		return err
	}
	sch, err := compiledSchema()
	if err != nil {
		return err
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("config does not match its schema: %w", err)
	}
	return nil
}

// compiledSchema is Schema, resolved once, when a configuration is first
// checked (not at start-up: most commands never check one).
var compiledSchema = sync.OnceValues(func() (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(Schema, &s); err != nil {
		return nil, fmt.Errorf("config schema: %w", err)
	}
	return s.Resolve(nil)
})

// yamlToJSON converts map[any]any (which YAML may produce) to
// map[string]any recursively.
func yamlToJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = yamlToJSON(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = yamlToJSON(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = yamlToJSON(e)
		}
	}
	return v
}
