package effects

func (s *state) scanCode(lang, code string) { s.unknown(false, "%s: not yet", lang) }
