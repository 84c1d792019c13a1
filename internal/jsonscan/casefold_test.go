package jsonscan

import "testing"

func TestCaseVariant(t *testing.T) {
	names := []string{"session_id", "params", "id"}
	for key, want := range map[string]string{
		"session_id":      "", // exact: not a variant
		"Session_ID":      "session_id",
		"\u017Fession_id": "session_id", // long s folds to s
		"PARAMS":          "params",
		"ID":              "id",
		"iD":              "id",
		"idd":             "",
		"param":           "",
		"paramsx":         "",
		"\u212Aey":        "", // Kelvin sign folds to k: no such name
		"":                "",
	} {
		got, ok := CaseVariant([]byte(key), names...)
		if got != want || ok != (want != "") {
			t.Errorf("CaseVariant(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
	if got, ok := CaseVariant([]byte("\u212Aind"), "kind"); !ok || got != "kind" {
		t.Errorf("Kelvin sign: %q, %v; want kind", got, ok)
	}
}
