package effects

import "testing"

// TestPythonReader: a build that has a parser says so and names it; one
// without says it reads no Python, never that it does.
func TestPythonReader(t *testing.T) {
	name, ok := PythonReader()
	if name != pyParserName {
		t.Fatalf("PythonReader() names %q, want %q", name, pyParserName)
	}
	_, reason := parsePython([]byte("x = 1\n"))
	if ok != (reason == "") {
		t.Fatalf("PythonReader() ok = %v, but parsePython gives reason %q", ok, reason)
	}
	if ok && name == "none (built without cgo)" {
		t.Fatal("a build without a parser says it reads Python")
	}
}
