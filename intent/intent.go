// Package intent reads a prompt the way the harness answers an
// intent_detection event: which of the AHP intents it expresses (locate,
// understand, retrieve, explore, reason, validate, compare, track), what it
// is about (the target, with the kind of thing it is) and how much of the
// prompt was understood. It works from per-language phrase tables, with no
// model and no I/O.
package intent

import (
	"math"
	"strings"
)

// Unknown is returned when no trigger phrase matches.
const Unknown = "unknown"

// The kinds of target Detect tells apart (Target.Type).
const (
	TargetFile      = "file"      // a file name or path with an extension: main.go, docs/intent.md, .env
	TargetDirectory = "directory" // a path without an extension or ending in a slash: src/x/, internal/jsonscan
	TargetPackage   = "package"   // something called a package or module: "the policy package"
	TargetSymbol    = "symbol"    // an identifier in code: parseConfig, Foo.Bar, max_depth, Run()
	TargetURL       = "url"       // a URL: https://example.com/x
	TargetWorkspace = "workspace" // the project as a whole: "the repo", "this codebase"
	TargetConcept   = "concept"   // words naming anything else: "config loader", "retry policy"
)

// intents lists the intents in the order of the spec (PerceptionIntent).
var intents = []string{"recognize", "understand", "locate", "retrieve", "explore", "reason", "validate", "compare", "track"}

// Intents lists the intents Detect may return, besides Unknown.
func Intents() []string { return append([]string(nil), intents...) }

// Target is what a prompt is about.
type Target struct {
	// Name is the thing sought, as the prompt writes it ("config loader",
	// "parseConfig", "sqlite and postgres" for a comparison).
	Name string
	// Type is one of the Target* kinds; "" when Name is "".
	Type string
}

// Result is a classification.
type Result struct {
	// Intent is one of Intents(), or Unknown.
	Intent string
	// Confidence is 0 for Unknown, else in [0.3, 0.95]: higher when the
	// trigger phrases are specific, when no other intent matched, when a
	// target was found and when more of the prompt's words were understood.
	Confidence float32
	// Trigger is the phrase that decided the intent, "" for Unknown.
	Trigger string
	// Target is what the prompt is about; zero when none was found.
	Target Target
	// Language is the code of the phrase table used ("en", "zh"); "" when
	// an LLM decided.
	Language string
	// Classifier is which classifier decided (Classifier*); "" from Detect.
	Classifier string
}

// MaxPromptBytes bounds the part of a prompt that is read; the rest is
// ignored (a prompt can be as large as a message).
const MaxPromptBytes = 16 << 10

// Classify is Detect with no language hint.
func Classify(prompt string) Result { return Detect(prompt, "") }

// Detect classifies prompt with the phrase table of languageHint (an
// IETF tag such as "en", "en-US" or "zh-CN", or a language name). With no
// hint, or a hint with no table of its own, the table is chosen by the
// prompt's script (Chinese for a prompt mostly in Han characters), else
// English. When the hinted table finds no intent and the prompt's script
// has another table, that table is tried too (an agent that always sends
// "en" still gets Chinese prompts read).
func Detect(prompt, languageHint string) Result {
	prompt = strings.ToValidUTF8(boundPrompt(prompt), "\uFFFD")
	script := scriptLanguage(prompt)
	lx, ok := lookupLexicon(languageHint)
	if !ok {
		lx = lexiconFor(script)
	}
	r := detectWith(prompt, lx)
	if other := lexiconFor(script); r.Intent == Unknown && other != lx {
		if r2 := detectWith(prompt, other); r2.Intent != Unknown {
			return r2
		}
	}
	return r
}

// detectWith classifies prompt with one phrase table.
func detectWith(prompt string, lx *lexicon) Result {
	toks := tokenize(prompt, lx)
	a := analyze(toks, lx)
	if a.intent == "" {
		return Result{Intent: Unknown, Language: lx.code}
	}
	target, used := a.findTarget()
	if target.Name != "" && target.Type == TargetWorkspace && a.intent == "understand" {
		// "explain the repo" asks for a tour of the project.
		a.intent = "explore"
	}
	return Result{
		Intent:     a.intent,
		Confidence: a.confidence(target, used),
		Trigger:    a.anchor.text,
		Target:     target,
		Language:   lx.code,
	}
}

// confidence combines how specific the winning triggers are, how clearly
// they beat other intents, whether a target was found and which share of
// the prompt's words were understood (triggers, known function words,
// politeness, the target itself).
func (a *analysis) confidence(t Target, used []bool) float32 {
	strength := math.Min(1, a.best/4)
	understood := 0
	for i, tk := range a.toks {
		if used[i] || a.label[i] >= 0 || a.lx.known(tk.norm) {
			understood++
		}
	}
	coverage := 1.0
	if len(a.toks) > 0 {
		coverage = float64(understood) / float64(len(a.toks))
	}
	c := 0.35 + 0.2*strength + 0.3*coverage
	if t.Name != "" {
		c += 0.1
	}
	c *= 1 - 0.5*a.second/a.best
	c = math.Max(0.3, math.Min(0.95, c))
	return float32(math.Round(c*100) / 100)
}

// boundPrompt cuts p to MaxPromptBytes at a character boundary.
func boundPrompt(p string) string {
	if len(p) <= MaxPromptBytes {
		return p
	}
	n := MaxPromptBytes
	for n > 0 && p[n]&0xC0 == 0x80 {
		n--
	}
	return p[:n]
}
