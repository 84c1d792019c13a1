package effects

// code reads interpreter code; payload reads a tool call. Placeholders until
// the interpreter and tool readers land: everything is Unknown.
func (s *state) code(lang, code string) {
	s.unknown(false, "%s reader not built", lang)
}

func (s *state) payload(p map[string]any) {
	s.unknown(false, "tool reader not built")
}
