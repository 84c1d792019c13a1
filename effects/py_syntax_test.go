package effects

import "testing"

// TestPythonSyntax: the parser reads current Python (3.8 to 3.13 syntax:
// walrus, match, positional-only parameters, except*, PEP 695 generics
// and type aliases, PEP 701 f-strings) without a syntax error, so that
// such code is read rather than reported Unknown. Python 3.14's t-strings
// are not in this grammar: they are an Unknown.
func TestPythonSyntax(t *testing.T) {
	if !pythonParsed() {
		t.Skip("no Python parser in a build without cgo")
	}
	if n, _ := parsePython([]byte("x = t'hello {name}'")); n == nil || !hasBad(n, 0) {
		t.Errorf("t-string read without error: the grammar changed, update docs/effects.md")
	}
	for _, src := range []string{
		"type Point = tuple[float, float]",
		"def first[T](xs: list[T]) -> T:\n    return xs[0]",
		"class Box[T]:\n    pass",
		"try:\n    pass\nexcept* ValueError:\n    pass",
		"match p:\n    case {'x': x} if x > 0:\n        pass\n    case [1, *rest]:\n        pass",
		"x = f\"{d[\"a\"]}\"",
		"x = f'{x!r:>{w}}'",
		"def f(a, /, b, *, c): pass",
		"async def m():\n    async with a as b:\n        pass\n    async for x in y:\n        pass",
		"@(lambda f: f)\ndef g(): pass",
		"print(*a, sep='')",
		"[y for x in data if (y := f(x))]",
		"with (open('a') as f, open('b') as g):\n    pass",
	} {
		n, why := parsePython([]byte(src))
		if n == nil {
			t.Errorf("%q: %s", src, why)
			continue
		}
		if hasBad(n, 0) {
			t.Errorf("syntax error reported for %q", src)
		}
	}
}
