//go:build !cgo

package effects

// pyParserName names the Python parser of this build in reasons.
const pyParserName = "none (built without cgo)"

// parsePython has no parser in a build without cgo: tree-sitter-python is
// C. Python code is then an Unknown effect with this reason.
func parsePython(src []byte) (*pyNode, string) {
	return nil, "Python is not read in a build without cgo (tree-sitter-python needs cgo)"
}
