package redact

import (
	"strings"
	"testing"
	"time"
)

// The built-in patterns are compiled on first use, not at start: each one
// must still compile (a typo would otherwise surface only when a text
// first holds its hint).
func TestBuiltinPatternsCompile(t *testing.T) {
	for i := range builtin {
		if builtin[i].scan != nil {
			continue // a scanner, with its own lazy patterns
		}
		if builtin[i].re != nil || builtin[i].lazy == nil {
			t.Errorf("%s: compiled at start or without a lazy pattern", builtin[i].kind)
			continue
		}
		if re := builtin[i].pattern(); re == nil || re != builtin[i].pattern() {
			t.Errorf("%s: pattern not compiled once", builtin[i].kind)
		}
	}
	if markerRE() == nil || kindRE() == nil || awsSecretRE() == nil {
		t.Error("marker or kind pattern missing")
	}
}

// anyHint finds every hint of every built-in detector, in either case,
// though the table keeps only hints no shorter one starts.
func TestAnyHintFindsEveryHint(t *testing.T) {
	for i := range builtin {
		for _, h := range builtin[i].hint {
			if !anyHint("x "+h+" y") || !anyHint(strings.ToUpper(h)) {
				t.Errorf("%s: hint %q not found", builtin[i].kind, h)
			}
		}
	}
	if anyHint("ls -la /workspace/project") {
		t.Error("a clean text holds a hint")
	}
}

// indexFold agrees with strings.Index on lower-cased text, and stays
// linear when one case of the needle's first byte is absent.
func TestIndexFold(t *testing.T) {
	hay := []string{"", "x", "xxPRIVATE KEY", "private kePrivate Key", "aXaxAXAXaxkey", "KEYkeyKeY", "tokentoken_TOKEN"}
	needles := []string{"x", "private key", "key", "axk", "token_t", "zz"}
	for _, h := range hay {
		for _, n := range needles {
			if got, want := indexFold(h, n), strings.Index(strings.ToLower(h), n); got != want {
				t.Errorf("indexFold(%q, %q) = %d, want %d", h, n, got, want)
			}
		}
	}
	long := strings.Repeat("x", 1<<20)
	start := time.Now()
	if indexFold(long, "xy") != -1 || indexFold(long+"XY", "xy") != 1<<20 {
		t.Fatal("long text")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("1 MiB of one case: %v", d)
	}
}

// Every hint has the two bytes the anyHint filter reads.
func TestHintsHaveTwoBytes(t *testing.T) {
	for i := range builtin {
		for _, h := range builtin[i].hint {
			if len(h) < 2 || strings.ToLower(h) != h {
				t.Errorf("%s: hint %q: want two or more lower-case bytes", builtin[i].kind, h)
			}
		}
	}
}
