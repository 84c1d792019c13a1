package intent

import "strings"

// match is one phrase of the lexicon found in the prompt.
type match struct {
	start, end int // tokens [start, end)
	trig       trigger
	text       string // the phrase, lower case
}

// analysis is a tokenized prompt with its phrases found and scored.
type analysis struct {
	lx      *lexicon
	toks    []token
	matches []match
	label   []int // per token: index in matches, or -1 for a free word

	intent       string  // the winner, "" when nothing matched
	best, second float64 // the winner's score and the best other score
	anchor       match   // the winning phrase the target was read next to
	result       Target  // the target found (set by findTarget)
}

// analyze finds the lexicon's phrases in toks (longest first, left to
// right, never across a clause boundary nor inside a quoted span) and
// picks the intent with the highest total weight.
func analyze(toks []token, lx *lexicon) *analysis {
	a := &analysis{lx: lx, toks: toks, label: make([]int, len(toks))}
	for i := range a.label {
		a.label[i] = -1
	}
	for i := 0; i < len(toks); {
		if m, ok := a.phraseAt(i); ok {
			for k := m.start; k < m.end; k++ {
				a.label[k] = len(a.matches)
			}
			a.matches = append(a.matches, m)
			i = m.end
			continue
		}
		i++
	}
	score := map[string]float64{}
	for _, m := range a.matches {
		if m.trig.intent != "" {
			score[m.trig.intent] += m.trig.weight
		}
	}
	for _, in := range lx.priority {
		s := score[in]
		switch {
		case s > a.best:
			a.second = max(a.second, a.best)
			a.intent, a.best = in, s
		case s > a.second:
			a.second = s
		}
	}
	return a
}

// phraseAt returns the longest phrase of the lexicon starting at token i.
func (a *analysis) phraseAt(i int) (match, bool) {
	var b strings.Builder
	for n := min(a.lx.maxPhrase, len(a.toks)-i); n >= 1; n-- {
		b.Reset()
		ok := true
		for k := i; k < i+n; k++ {
			if a.toks[k].quote != 0 || a.toks[k].call || (k < i+n-1 && a.toks[k].end) {
				ok = false
				break
			}
			if k > i {
				b.WriteByte(' ')
			}
			b.WriteString(a.toks[k].norm)
		}
		if !ok {
			continue
		}
		if t, found := a.lx.phrases[b.String()]; found {
			return match{start: i, end: i + n, trig: t, text: b.String()}, true
		}
	}
	return match{}, false
}

// candidates returns the winning intent's phrases, strongest first, then
// in the order they appear.
func (a *analysis) candidates() []match {
	var out []match
	for _, m := range a.matches {
		if m.trig.intent == a.intent {
			out = append(out, m)
		}
	}
	// A stable insertion sort on weight: there are few matches.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].trig.weight > out[j-1].trig.weight; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// passable reports whether token k may be part of a target read next to a
// phrase of the winning intent: a free word, or a word of another intent's
// phrase ("status" in "where is the status page").
func (a *analysis) passable(k int) bool {
	l := a.label[k]
	return l < 0 || (a.matches[l].trig.intent != "" && a.matches[l].trig.intent != a.intent)
}

// after returns the words that follow m in its clause: phrases right
// after m are skipped, then words are taken up to the next politeness
// phrase, phrase of the same intent or the end of the clause.
func (a *analysis) after(m match) []int {
	k := m.end
	if k >= len(a.toks) || a.toks[k-1].end {
		return nil
	}
	clause := a.toks[m.start].clause
	for k < len(a.toks) && a.toks[k].clause == clause && a.label[k] >= 0 {
		k++
	}
	var out []int
	for ; k < len(a.toks) && a.toks[k].clause == clause && a.passable(k); k++ {
		out = append(out, k)
	}
	return out
}

// before returns the words that precede m in its clause, back to the
// previous politeness phrase or phrase of the same intent.
func (a *analysis) before(m match) []int {
	clause := a.toks[m.start].clause
	k := m.start - 1
	for ; k >= 0 && a.toks[k].clause == clause && a.passable(k); k-- {
	}
	var out []int
	for j := k + 1; j < m.start; j++ {
		out = append(out, j)
	}
	return out
}

// clauseWords returns the free words of clause c.
func (a *analysis) clauseWords(c int) []int {
	var out []int
	for k, t := range a.toks {
		if t.clause == c && a.label[k] < 0 {
			out = append(out, k)
		}
	}
	return out
}
