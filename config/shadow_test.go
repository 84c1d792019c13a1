package config

import (
	"strings"
	"testing"
)

func TestPolicyShadowSettings(t *testing.T) {
	c := Default()
	text := "policy:\n  mode: shadow\n  shadow:\n    files: [candidate.yaml]\n    sample: 0.1\n"
	if err := Parse([]byte(text), &c); err != nil {
		t.Fatal(err)
	}
	if c.Policy.Mode != "shadow" || len(c.Policy.Shadow.Files) != 1 || c.Policy.Shadow.Sample != 0.1 {
		t.Fatalf("parsed %+v", c.Policy)
	}
	if err := ValidateYAML([]byte(text)); err != nil {
		t.Fatalf("schema: %v", err)
	}
	for text, want := range map[string]string{
		"policy:\n  mode: dryrun\n":             `policy.mode: "dryrun" is not one of enforce, shadow`,
		"policy:\n  shadow:\n    sample: 0\n":   "policy.shadow.sample: 0 is not in (0, 1]",
		"policy:\n  shadow:\n    sample: 1.5\n": "policy.shadow.sample: 1.5 is not in (0, 1]",
	} {
		c := Default()
		if err := Parse([]byte(text), &c); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %s", text, err, want)
		}
		if ValidateYAML([]byte(text)) == nil {
			t.Errorf("%q: the schema accepts it", text)
		}
	}
}
