package intent

import "testing"

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
