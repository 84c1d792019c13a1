package effects

func (s *state) payload(p map[string]any) {}
