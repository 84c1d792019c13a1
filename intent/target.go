package intent

import "strings"

// findTarget reads the target next to the winning intent's phrases: the
// words after the strongest phrase, else the words before it, else the
// next or the previous clause. It returns the target and which tokens it
// used.
func (a *analysis) findTarget() (Target, []bool) {
	used := make([]bool, len(a.toks))
	cands := a.candidates()
	try := func(idx []int) bool {
		var t Target
		var took []int
		if a.intent == "compare" {
			t, took = a.operands(idx, nil)
		} else {
			t, took = a.clean(idx)
		}
		if t.Name == "" {
			return false
		}
		for _, k := range took {
			used[k] = true
		}
		a.result = t
		return true
	}
	for _, m := range cands {
		a.anchor = m
		if a.intent == "explore" {
			// "the project structure": the trigger names the workspace.
			for k := m.start; k < m.end; k++ {
				if a.lx.workspace[a.toks[k].norm] && len(a.after(m)) == 0 {
					used[k] = true
					return Target{Name: a.toks[k].text, Type: TargetWorkspace}, used
				}
			}
			if w := a.workspacePrefix(m); w != "" && len(a.after(m)) == 0 {
				return Target{Name: w, Type: TargetWorkspace}, used
			}
		}
		if a.intent == "compare" {
			if t, took := a.operands(a.after(m), a.before(m)); t.Name != "" {
				for _, k := range took {
					used[k] = true
				}
				return t, used
			}
			continue
		}
		if a.lx.targetBefore {
			if try(a.before(m)) || try(a.after(m)) {
				return a.result, used
			}
		} else if try(a.after(m)) || try(a.before(m)) {
			return a.result, used
		}
	}
	a.anchor = cands[0]
	c := a.toks[a.anchor.start].clause
	if try(a.clauseWords(c+1)) || (c > 0 && try(a.clauseWords(c-1))) {
		return a.result, used
	}
	return Target{}, used
}

// operands reads the things compared: the words after the phrase split at
// "and", "with", "vs"…; the words before it make the first operand when
// the phrase stands between them ("X vs Y", "how does X compare to Y").
func (a *analysis) operands(after, before []int) (Target, []int) {
	groups := a.split(after)
	if a.anchor.trig.infix || len(groups) < 2 {
		groups = append(a.split(before), groups...)
	}
	var names []string
	var took []int
	typ := ""
	for _, g := range groups {
		t, k := a.clean(g)
		if t.Name == "" {
			continue
		}
		names = append(names, t.Name)
		took = append(took, k...)
		switch typ {
		case "":
			typ = t.Type
		case t.Type:
		default:
			typ = TargetConcept
		}
	}
	if len(names) == 0 {
		return Target{}, nil
	}
	sep := " and "
	if a.lx.andSep != "" {
		sep = a.lx.andSep
	}
	return Target{Name: strings.Join(names, sep), Type: typ}, took
}

// split cuts idx at the words that join the operands of a comparison.
func (a *analysis) split(idx []int) [][]int {
	var out [][]int
	var cur []int
	for _, k := range idx {
		if a.lx.joiners[a.toks[k].norm] && a.toks[k].quote == 0 {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, k)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// clean turns the words next to a trigger into a target: a quoted name
// wins; else function words are dropped at the start, "about X" and
// "usages of X" narrow to X, the phrase ends at a verb, conjunction or
// scope preposition, and a name written as code wins over the words
// around it ("the parseConfig function" is parseConfig). A head noun
// ("package", "function", "file") gives the type.
func (a *analysis) clean(idx []int) (Target, []int) {
	lx := a.lx
	norm := func(k int) string { return a.toks[k].norm }
	// After "why does", "how do"… the words are subject then verb.
	afterAux := len(idx) > 0 && idx[0] == a.anchor.end && lx.aux[a.toks[a.anchor.end-1].norm]
	p := a.dropLead(idx)
	for _, k := range p {
		if a.toks[k].quote != 0 {
			return Target{Name: a.toks[k].text, Type: a.quotedType(k)}, []int{k}
		}
	}
	for j, k := range p {
		if lx.about[norm(k)] && j+1 < len(p) {
			p = a.dropLead(p[j+1:])
			break
		}
	}
	for len(p) >= 3 && lx.relational[norm(p[0])] && lx.relPreps[norm(p[1])] {
		p = a.dropLead(p[2:])
	}
	if len(p) == 1 && lx.cut[norm(p[0])] && a.codeType(p[0]) == "" {
		return Target{}, nil // a lone verb is not a target: "why did it fail"
	}
	for j := 1; j < len(p); j++ {
		w := norm(p[j])
		if a.codeType(p[j]) != "" {
			continue
		}
		if lx.relative[w] {
			if a.allHeads(p[:j]) {
				j++ // "the code that handles X": the verb belongs to the clause
				continue
			}
			p = p[:j]
			break
		}
		if lx.cut[w] || lx.pastParticiple(w) || (afterAux && lx.verbs[w]) {
			p = p[:j]
			break
		}
	}
	for j := 1; j < len(p); j++ {
		w := norm(p[j])
		if !lx.preps[w] {
			continue
		}
		if lx.relPreps[w] && j+1 < len(p) && a.allRelational(p[:j]) {
			p = a.dropLead(p[j+1:])
			j = 0
			continue
		}
		p = p[:j]
		break
	}
	for len(p) > 0 {
		k := p[len(p)-1]
		if a.codeType(k) != "" || !(lx.trail[norm(k)] || lx.lead[norm(k)]) {
			break
		}
		p = p[:len(p)-1]
	}
	if len(p) == 0 {
		return Target{}, nil
	}
	for _, k := range p {
		if typ := a.codeType(k); typ != "" {
			return Target{Name: a.toks[k].text, Type: typ}, []int{k}
		}
	}
	typ := ""
	switch {
	case lx.heads[norm(p[len(p)-1])] == TargetConcept || lx.heads[norm(p[0])] == TargetConcept:
		// "retry logic", "code that…": a vague head stays part of the name.
	case len(p) > 1 && lx.heads[norm(p[len(p)-1])] != "":
		typ, p = lx.heads[norm(p[len(p)-1])], p[:len(p)-1]
	case len(p) > 1 && lx.heads[norm(p[0])] != "":
		typ = lx.heads[norm(p[0])]
		if !lx.relative[norm(p[1])] {
			p = p[1:]
		}
	case len(p) == 1 && lx.heads[norm(p[0])] != "":
		typ = lx.heads[norm(p[0])]
	}
	texts, norms := make([]string, len(p)), make([]string, len(p))
	for j, k := range p {
		texts[j], norms[j] = a.toks[k].text, norm(k)
	}
	if lx.workspace[lx.join(norms)] {
		typ = TargetWorkspace
	}
	if typ == "" {
		typ = TargetConcept
	}
	return Target{Name: lx.join(texts), Type: typ}, p
}

// dropLead drops function words at the start of a phrase, and the verb
// after a subject pronoun ("we parse" in "where do we parse the config").
func (a *analysis) dropLead(p []int) []int {
	subject := false
	for len(p) > 0 && a.toks[p[0]].quote == 0 && a.codeType(p[0]) == "" {
		w := a.toks[p[0]].norm
		switch {
		case a.lx.subjects[w]:
			subject = true
		case a.lx.lead[w]:
		case subject && a.lx.heads[w] == "" && len(p) > 1:
			subject = false
		default:
			return p
		}
		p = p[1:]
	}
	return p
}

// allHeads reports whether every word of p is a head noun ("function").
func (a *analysis) allHeads(p []int) bool {
	for _, k := range p {
		if a.lx.heads[a.toks[k].norm] == "" {
			return false
		}
	}
	return len(p) > 0
}

// allRelational reports whether every word of p is a relational noun.
func (a *analysis) allRelational(p []int) bool {
	for _, k := range p {
		if !a.lx.relational[a.toks[k].norm] {
			return false
		}
	}
	return len(p) > 0
}

// workspacePrefix returns the word naming the project that a one-word
// trigger of a language written without spaces starts with ("项目" in
// "项目结构"), or "".
func (a *analysis) workspacePrefix(m match) string {
	if a.lx.split == nil || m.end-m.start != 1 {
		return ""
	}
	best := ""
	for w := range a.lx.workspace {
		if len(w) > len(best) && len(w) < len(m.text) && strings.HasPrefix(m.text, w) {
			best = w
		}
	}
	return best
}
