package effects

// PythonReader reports which Python parser this binary reads agents'
// Python code with, and whether it works: it parses a one-line program and
// says ok only when a syntax tree came back. A build without cgo has no
// parser (tree-sitter-python is C): it returns ok false, and every piece of
// Python code is then an Unknown effect, held for a human by the default
// packs. ahp version prints the answer, so that an operator can see what
// the binary they run reads.
func PythonReader() (parser string, ok bool) {
	root, _ := parsePython([]byte("print(1 + 1)\n"))
	return pyParserName, root != nil
}
