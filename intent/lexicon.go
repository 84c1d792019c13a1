package intent

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// A lexicon is the phrase table of one language: everything Detect knows
// about that language lives here, so another language is one more table
// (and, for a language written without spaces, its own word splitter).
type lexicon struct {
	code    string   // IETF primary subtag: "en"
	aliases []string // other hints that select this table: "english"

	// phrases maps a phrase (its words, lower case, separated by one space)
	// to what it signals. A phrase with an empty intent is politeness or
	// scaffolding ("can you", "show me"): understood, never a target.
	phrases   map[string]trigger
	maxPhrase int // words in the longest phrase

	// contractions expands a contracted word ("where's") into words.
	contractions map[string][]string
	// abbreviations end in a dot that does not end a clause ("vs.").
	abbreviations set

	// A target phrase is read from the words next to the winning trigger:
	lead       set    // dropped at its start: articles, wh-words, auxiliaries, pronouns
	about      set    // the topic follows these: "about", "regarding"
	relational set    // "usages" in "usages of X": the target is X
	relPreps   set    // the prepositions after a relational noun: of, for, on
	cut        set    // end the target: copulas, conjunctions, subject pronouns, predicate verbs
	relative   set    // relative pronouns: cut unless only a head noun precedes
	subjects   set    // subject pronouns: "where do we parse X": the verb after one is dropped
	aux        set    // auxiliaries: after "why does", the subject ends at the first of verbs
	verbs      set    // verbs that may also be nouns: cut only after an auxiliary
	preps      set    // scope prepositions that end the target: "config loader in the client"
	trail      set    // dropped at its end: "please", "again", "flaky"
	pastSuffix string // a word with this ending ends the target when not first ("defined")
	pastExcept string // ... unless it ends in this ("seed", "need")
	heads      map[string]string
	workspace  set // words naming the whole project
	joiners    set // separate the operands of a comparison

	// priority breaks ties between intents with the same score: earlier wins.
	priority []string

	// split, for a language written without spaces, cuts a run of its
	// script into words; nil for languages that separate words by spaces.
	// dict and maxWordRunes are the words it knows (set by register).
	split        func(run string, lx *lexicon) []string
	dict         set
	maxWordRunes int
	// andSep joins the operands of a comparison (" and " when "").
	andSep string
	// targetBefore reads the target from the words before a trigger
	// before trying the words after it.
	targetBefore bool
}

// trigger is what a phrase of a lexicon signals.
type trigger struct {
	intent string  // "" for scaffolding
	weight float64 // 1 weak (a generic opener), 2 usual, 3 specific
	infix  bool    // a comparison with an operand on each side ("X vs Y")
}

// set is a set of lower-case words.
type set map[string]bool

func words(s string) set {
	m := set{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// lexicons holds the phrase tables by language code, built on first use
// (loadLexicons): a process that never reads an intent does not pay for
// them at start.
var lexicons = map[string]*lexicon{}

// loadLexicons builds the tables once.
var loadLexicons = sync.OnceFunc(func() {
	registerEnglish()
	registerChinese()
})

// register adds lx to the tables and computes its derived fields.
func register(lx *lexicon) {
	for p := range lx.phrases {
		if n := len(strings.Fields(p)); n > lx.maxPhrase {
			lx.maxPhrase = n
		}
	}
	if lx.split != nil {
		lx.dict = set{}
		addAll := func(ws ...string) {
			for _, w := range ws {
				lx.dict[w] = true
				lx.maxWordRunes = max(lx.maxWordRunes, utf8.RuneCountInString(w))
			}
		}
		for p := range lx.phrases {
			addAll(p)
		}
		for _, s := range []set{lx.lead, lx.about, lx.relational, lx.cut, lx.trail, lx.workspace, lx.joiners, lx.subjects, lx.verbs} {
			for w := range s {
				addAll(w)
			}
		}
		for w := range lx.heads {
			addAll(w)
		}
	}
	lexicons[lx.code] = lx
	for _, a := range lx.aliases {
		lexicons[a] = lx
	}
}

// lexiconFor picks the table for a language hint: its primary subtag or
// its name, English when there is no table for it.
func lexiconFor(hint string) *lexicon {
	if lx, ok := lookupLexicon(hint); ok {
		return lx
	}
	loadLexicons()
	return lexicons["en"]
}

// lookupLexicon returns the table a hint names, if there is one.
func lookupLexicon(hint string) (*lexicon, bool) {
	h := strings.ToLower(strings.TrimSpace(hint))
	if i := strings.IndexAny(h, "-_"); i >= 0 {
		h = h[:i]
	}
	loadLexicons()
	lx, ok := lexicons[h]
	return lx, ok
}

// join writes the words of a name: separated by spaces, or for a
// language written without spaces, run together except between two words
// of a spaced script ("登录函数", "config 模块").
func (lx *lexicon) join(texts []string) string {
	if lx.split == nil {
		return strings.Join(texts, " ")
	}
	var b strings.Builder
	for i, t := range texts {
		if i > 0 && !endsHan(texts[i-1]) && !startsHan(t) {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	return b.String()
}

func startsHan(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isHan(r)
}

func endsHan(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return isHan(r)
}

// known reports whether w is a function word of the language: understood
// even when it is neither a trigger nor part of the target.
func (lx *lexicon) known(w string) bool {
	return lx.lead[w] || lx.about[w] || lx.relational[w] || lx.relPreps[w] || lx.cut[w] ||
		lx.relative[w] || lx.preps[w] || lx.trail[w] || lx.heads[w] != "" || lx.joiners[w] ||
		lx.subjects[w] || lx.aux[w] || lx.verbs[w] || lx.pastParticiple(w)
}

// pastParticiple reports whether w looks like a past participle ("defined").
func (lx *lexicon) pastParticiple(w string) bool {
	return lx.pastSuffix != "" && len(w) >= 5 && strings.HasSuffix(w, lx.pastSuffix) &&
		(lx.pastExcept == "" || !strings.HasSuffix(w, lx.pastExcept))
}
