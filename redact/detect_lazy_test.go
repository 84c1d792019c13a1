package redact

import "testing"

// The built-in patterns are compiled on first use, not at start: each one
// must still compile (a typo would otherwise surface only when a text
// first holds its hint).
func TestBuiltinPatternsCompile(t *testing.T) {
	for i := range builtin {
		if builtin[i].scan != nil {
			continue // a scanner, with its own lazy patterns
		}
		if builtin[i].re != nil || builtin[i].lazy == nil {
			t.Errorf("%s: compiled at start or without a lazy pattern", builtin[i].kind)
			continue
		}
		if re := builtin[i].pattern(); re == nil || re != builtin[i].pattern() {
			t.Errorf("%s: pattern not compiled once", builtin[i].kind)
		}
	}
	if markerRE() == nil || kindRE() == nil || assignRE() == nil || awsSecretRE() == nil {
		t.Error("marker or kind pattern missing")
	}
}
