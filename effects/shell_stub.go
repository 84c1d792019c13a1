package effects

// shell reads a shell script. Placeholder until the shell reader lands:
// everything is Unknown.
func (s *state) shell(script string) {
	s.unknown(false, "shell reader not built")
}
