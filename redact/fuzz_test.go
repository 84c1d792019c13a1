package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// FuzzDetectors feeds agent-chosen text to every way the detectors are
// used: spans must be in order, inside the text and apart; redacting must
// not panic, must remove what was found and must be stable.
func FuzzDetectors(f *testing.F) {
	for _, c := range assignedLines {
		f.Add(c.line)
	}
	for _, l := range ordinaryLines {
		f.Add(l)
	}
	f.Add(`{"GITHUB_TOKEN" : "` + plainKey + `","a":"\u0067hp_x", "b":"` + fakeAWSID + `"}`)
	f.Add(`{"k":"` + fakeAWSSecret + `","secret":"x` + `\"` + `"}`)
	r, err := New(Options{Key: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spans := builtinSpans(s)
		for i, sp := range spans {
			if sp.start < 0 || sp.end > len(s) || sp.start >= sp.end || (i > 0 && sp.start < spans[i-1].end) {
				t.Fatalf("bad spans %v in %q", spans, s)
			}
		}
		out, k := r.String(s)
		if len(spans) > 0 && k.Empty() {
			t.Fatalf("found %v, redacted nothing: %q", spans, s)
		}
		for _, sp := range spans {
			if secret := s[sp.start:sp.end]; len(secret) >= 8 && strings.Contains(out, secret) && !strings.Contains(out, "[REDACTED:") {
				t.Fatalf("%q left in %q", secret, out)
			}
		}
		if again, _ := r.String(out); again != out {
			t.Fatalf("not stable: %q -> %q -> %q", s, out, again)
		}
		_ = Plain(s)
		r.Raw([]byte(s))
		if json.Valid([]byte(s)) {
			if red, _ := r.JSON(json.RawMessage(s)); !json.Valid(red) {
				t.Fatalf("JSON redaction gave invalid JSON: %s", red)
			}
			r.Event(&protocol.Event{EventType: "pre_action", Payload: json.RawMessage(s)}, false)
		}
	})
}
