package effects

import (
	"encoding/json"
	"testing"
)

// FuzzCode: arbitrary code in any of the languages read never panics, and
// the analysis keeps its bounds (at most MaxEffects effects, each with a
// kind). Arbitrary JSON as a tool call likewise.
func FuzzCode(f *testing.F) {
	for _, c := range codeTable {
		f.Add(c.lang, c.code)
	}
	for _, c := range toolTable {
		f.Add("payload", c.payload)
	}
	f.Add("python", "exec('exec(\"exec(1)\")')")
	f.Add("perl", "<<EOF")
	f.Add("ruby", "%x(")
	f.Add("node", "`${")
	f.Add("php", "'\\")
	f.Fuzz(func(t *testing.T, lang, code string) {
		var got []Effect
		if lang == "payload" {
			var p map[string]any
			if json.Unmarshal([]byte(code), &p) != nil {
				return
			}
			got = Payload(p, testCtx)
		} else {
			got = Code(lang, code, testCtx)
		}
		if len(got) > MaxEffects {
			t.Fatalf("%d effects", len(got))
		}
		for _, e := range got {
			if e.Kind == "" {
				t.Fatalf("an effect with no kind: %+v", e)
			}
		}
	})
}
