package descriptor

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// FuzzHashCanonical checks that a descriptor's hash depends on its meaning
// and not on its spelling: a JSON document and its own re-serialisation
// as canonical JSON, when both load, hash the same.
func FuzzHashCanonical(f *testing.F) {
	f.Add([]byte(`{"runtime":{"entry_agent":"a"},"agents":{"a":{"instructions":"Hi."}}}`))
	f.Add([]byte(`{"agents":{"a":{"instructions":"Hi."}},"runtime":{"entry_agent":"a"},"metadata":{"k":"\u00e9","n":1.0e1}}`))
	if b, err := os.ReadFile("testdata/aioc/numbers.json"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<14 {
			return
		}
		l := Loader{Prompts: map[string]string{}}
		d1, err := l.Parse(b, FormatJSON, "/nonexistent")
		if err != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber() // 1e400 and 12345678901234567890 kept as written
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("loaded %q, encoding/json refuses it: %v", b, err)
		}
		canon, err := MarshalCanonical(v)
		if err != nil {
			return // numbers canonical JSON cannot hold: nothing to compare
		}
		d2, err := l.Parse(canon, FormatJSON, "/nonexistent")
		if err != nil {
			t.Fatalf("loaded %q but not its canonical form %q: %v", b, canon, err)
		}
		if d1.Hash() != d2.Hash() {
			t.Fatalf("hash %s of %q differs from hash %s of its canonical form %q", d1.Hash(), b, d2.Hash(), canon)
		}
	})
}
