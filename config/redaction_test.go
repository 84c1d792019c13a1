package config

import (
	"strings"
	"testing"
)

func TestRedactionSection(t *testing.T) {
	good := []byte("redaction:\n  fields: [arguments.password, metadata.api_key]\n  patterns:\n    - {kind: employee_id, regexp: 'EMP-\\d{6}'}\n")
	c := Default()
	if err := Parse(good, &c); err != nil {
		t.Fatalf("valid redaction refused: %v", err)
	}
	if err := ValidateYAML(good); err != nil {
		t.Fatalf("schema refuses a valid redaction section: %v", err)
	}
	if len(c.Redaction.Fields) != 2 || c.Redaction.Patterns[0].Kind != "employee_id" {
		t.Fatalf("parsed %+v", c.Redaction)
	}
	bad := []byte("redaction:\n  fields: ['a..b']\n  patterns:\n    - {kind: x, regexp: '('}\n")
	c = Default()
	err := Parse(bad, &c)
	if err == nil || !strings.Contains(err.Error(), "redaction.fields[0]") || !strings.Contains(err.Error(), "redaction.patterns[0].regexp") {
		t.Fatalf("bad redaction: %v", err)
	}
}
