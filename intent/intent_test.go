package intent

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestClassify(t *testing.T) {
	cases := map[string]string{
		"Where is the config loader?":               "locate",
		"Explain how the scheduler works":           "understand",
		"What did we decide earlier about retries?": "retrieve",
		"Show me the project structure":             "explore",
		"Why did the build fail?":                   "reason",
		"Verify that the migration ran":             "validate",
		"What is the difference between v1 and v2?": "compare",
		"What is the status of the deploy?":         "track",
		"Write a haiku about spring":                Unknown,
	}
	for prompt, want := range cases {
		got := Classify(prompt)
		if got.Intent != want {
			t.Errorf("Classify(%q) = %q, want %q", prompt, got.Intent, want)
		}
		if want == Unknown && got.Confidence != 0 {
			t.Errorf("Classify(%q): unknown with confidence %v", prompt, got.Confidence)
		}
		if want != Unknown && (got.Confidence < 0.3 || got.Confidence > 0.95) {
			t.Errorf("Classify(%q): confidence %v out of range", prompt, got.Confidence)
		}
	}
}

func TestClassifyMoreTriggersMoreConfident(t *testing.T) {
	one := Classify("find the file")
	two := Classify("find the file, search for it")
	if two.Confidence <= one.Confidence {
		t.Fatalf("two triggers %v not above one %v", two.Confidence, one.Confidence)
	}
}

// Issue 8 item 5: the exact prompt of the report. The target was the
// trigger phrase ("where is") with the intent as its type.
func TestRegressionTargetIsTheThingSought(t *testing.T) {
	r := Detect("where is the config loader?", "")
	want := Target{Name: "config loader", Type: TargetConcept}
	if r.Intent != "locate" || r.Target != want {
		t.Fatalf("got intent %q target %+v; want locate %+v", r.Intent, r.Target, want)
	}
	if r.Trigger != "where is" {
		t.Errorf("trigger %q, want \"where is\"", r.Trigger)
	}
	if r.Confidence < 0.8 {
		t.Errorf("confidence %v for a prompt understood in full; want at least 0.8", r.Confidence)
	}
}

func TestTargetTypes(t *testing.T) {
	cases := []struct{ prompt, name, typ string }{
		{"where is parseConfig?", "parseConfig", TargetSymbol},
		{"where is Foo.Bar?", "Foo.Bar", TargetSymbol},
		{"find MAX_DEPTH", "MAX_DEPTH", TargetSymbol},
		{"find the Run() method", "Run", TargetSymbol},
		{"find the type Handler", "Handler", TargetSymbol},
		{"where is main.go?", "main.go", TargetFile},
		{"where is .env", ".env", TargetFile},
		{"find the Makefile", "Makefile", TargetFile},
		{"find docs/intent.md", "docs/intent.md", TargetFile},
		{"where is src/x/?", "src/x/", TargetDirectory},
		{"where is internal/jsonscan", "internal/jsonscan", TargetDirectory},
		{"find the testdata folder", "testdata", TargetDirectory},
		{"where is the policy package?", "policy", TargetPackage},
		{"where is https://example.com/spec", "https://example.com/spec", TargetURL},
		{"where is the config loader?", "config loader", TargetConcept},
		{"where is the GitHub workflow?", "GitHub workflow", TargetConcept},
		{"find version v1.2.3", "version v1.2.3", TargetConcept},
		{`where is "rate limiter" handled?`, "rate limiter", TargetConcept},
		{"where is `limiter` handled?", "limiter", TargetSymbol},
		{"give me an overview of the codebase", "codebase", TargetWorkspace},
		{"why did it fail?", "", ""}, // a pronoun and a verb name nothing
	}
	for _, c := range cases {
		r := Detect(c.prompt, "")
		if r.Target != (Target{Name: c.name, Type: c.typ}) {
			t.Errorf("%q: target %+v, want {%s %s}", c.prompt, r.Target, c.name, c.typ)
		}
	}
}

// Polite prefixes, articles, contractions and trailing punctuation do not
// change what is read.
func TestPhrasingVariantsAgree(t *testing.T) {
	want := Target{Name: "config loader", Type: TargetConcept}
	for _, p := range []string{
		"Where is the config loader",
		"where's the config loader??",
		"Can you tell me where the config loader is?",
		"Please, where is the config loader?",
		"Hey, could you find the config loader for me please",
		"I'm looking for the config loader.",
		"WHERE IS THE CONFIG LOADER?",
		"  where   is a config loader ?  ",
	} {
		r := Detect(p, "")
		if r.Intent != "locate" || !strings.EqualFold(r.Target.Name, want.Name) || r.Target.Type != want.Type {
			t.Errorf("%q: %s %+v; want locate %+v", p, r.Intent, r.Target, want)
		}
	}
}

// Confidence reflects how much of the prompt was understood and how
// clearly one intent won.
func TestConfidenceReflectsUnderstanding(t *testing.T) {
	full := Detect("where is the config loader?", "")
	noisy := Detect("where is the config loader? zebra quantum marmalade velvet tangerine", "")
	if noisy.Confidence >= full.Confidence {
		t.Errorf("unexplained words: %v not below %v", noisy.Confidence, full.Confidence)
	}
	contested := Detect("where is the config loader and why did it fail", "")
	if contested.Confidence >= full.Confidence {
		t.Errorf("two intents: %v not below %v", contested.Confidence, full.Confidence)
	}
	weak := Detect("what is this", "")
	if weak.Intent != "understand" || weak.Confidence >= full.Confidence {
		t.Errorf("weak trigger, no target: %+v not below %v", weak, full.Confidence)
	}
}

// The language hint picks a phrase table; a language without one falls
// back to the prompt's script (English for Latin letters), and a hint that
// does not fit the prompt does not stop it being read.
func TestLanguageHint(t *testing.T) {
	en := Detect("where is the config loader?", "")
	for _, hint := range []string{"en", "en-US", "en_GB", "English", " EN ", "zh", "fr-CA", "x-unknown"} {
		r := Detect("where is the config loader?", hint)
		if r.Intent != en.Intent || r.Target != en.Target || r.Language != "en" {
			t.Errorf("hint %q: %+v, want %+v", hint, r, en)
		}
	}
	for _, hint := range []string{"zh", "zh-CN", "", "en", "fr"} {
		if r := Detect("配置加载器在哪里？", hint); r.Intent != "locate" || r.Language != "zh" ||
			r.Target != (Target{Name: "配置加载器", Type: TargetConcept}) {
			t.Errorf("Chinese prompt, hint %q: %+v", hint, r)
		}
	}
	if r := Detect("where is the café module?", ""); r.Target != (Target{Name: "café", Type: TargetPackage}) {
		t.Errorf("non-ASCII target: %+v", r.Target)
	}
}

// A prompt is read up to MaxPromptBytes, cut at a character boundary.
func TestLongPromptIsBounded(t *testing.T) {
	long := strings.Repeat("é", MaxPromptBytes) + " where is the config loader?"
	if r := Detect(long, ""); r.Intent != Unknown {
		t.Errorf("trigger beyond the bound was read: %+v", r)
	}
	if got := boundPrompt(long); len(got) > MaxPromptBytes || !utf8.ValidString(got) {
		t.Errorf("bound: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	start := time.Now()
	Detect(strings.Repeat("find the config loader in main.go, ", 1<<15), "")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a 1 MiB prompt took %v", d)
	}
}

func TestTokenize(t *testing.T) {
	toks := tokenize("Where's `Client.Dial`, vs. \"the loader\" (see parseConfig())?", lexiconFor("en"))
	var got []string
	for _, tk := range toks {
		s := tk.norm
		if tk.quote != 0 {
			s = string(tk.quote) + tk.text
		}
		if tk.call {
			s += "()"
		}
		if tk.end {
			s += "|"
		}
		got = append(got, s)
	}
	want := "where is `Client.Dial| vs \"the loader see parseconfig()|"
	if strings.Join(got, " ") != want {
		t.Errorf("tokens %q\nwant   %q", strings.Join(got, " "), want)
	}
}

func FuzzDetect(f *testing.F) {
	for _, c := range corpus {
		f.Add(c.prompt)
	}
	f.Add("`unclosed 'quote \"and (parens")
	f.Add("— , ; ? ! ...")
	f.Fuzz(func(t *testing.T, p string) {
		r := Detect(p, "")
		if r.Intent == Unknown {
			if r.Confidence != 0 || r.Target != (Target{}) {
				t.Fatalf("unknown with %+v", r)
			}
			return
		}
		if r.Confidence < 0.3 || r.Confidence > 0.95 {
			t.Fatalf("confidence %v", r.Confidence)
		}
		if (r.Target.Name == "") != (r.Target.Type == "") {
			t.Fatalf("target %+v", r.Target)
		}
	})
}
