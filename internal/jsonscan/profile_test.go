package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCheckProfile(t *testing.T) {
	for _, tc := range []struct {
		in, reason, path string
	}{
		{`{"a":1,"b":2}`, "", ""},
		{`{"a":{"x":1},"b":{"x":2}}`, "", ""}, // the same name in two objects is fine
		{`[{"a":1},{"a":2}]`, "", ""},
		{`"h\u00e9llo \ud83d\ude00 日本"`, "", ""},
		{`{"a":1,"a":2}`, "duplicate member name", "a"},
		{`{"params":{"payload":{"arguments":{"command":"ls","command":"rm -rf /"}}}}`, "duplicate member name", "params.payload.arguments.command"},
		{`{"events":[{"x":1},{"p":{"k":1,"k":1}}]}`, "duplicate member name", "events[1].p.k"},
		{`{"a":1,"\u0061":2}`, "duplicate member name", "a"}, // the same name, escaped
		{`{"a.b":{"c":1,"c":2}}`, "duplicate member name", `["a.b"].c`},
		// Go's encoding/json matches member names to struct fields ignoring
		// case, so these read differently there and everywhere else.
		{`{"command":"ls","Command":"rm -rf /"}`, "member names that differ only in letter case", "Command"},
		{`{"iD":0,"id":1}`, "member names that differ only in letter case", "id"},
		{`{"kind":1,"Kind":2}`, "member names that differ only in letter case", `["Kind"]`},
		{`{"s":1,"ſ":2}`, "member names that differ only in letter case", `["ſ"]`},
		{`{"a":1,"b":2,"A1":3}`, "", ""},
		{"{\"a\":\"\xff\"}", "invalid UTF-8 in a string", "a"},
		{"{\"a\":[\"ok\",\"\xc3\x28\"]}", "invalid UTF-8 in a string", "a[1]"},
		{"{\"\xed\xa0\x80\":1}", "invalid UTF-8 in a string", ""}, // an encoded surrogate is not UTF-8
		{`{"a":"\ud800"}`, "unpaired UTF-16 surrogate escape in a string", "a"},
		{`{"a":"\udc00\ud800"}`, "unpaired UTF-16 surrogate escape in a string", "a"},
		{`{"a":"x\ud83dy"}`, "unpaired UTF-16 surrogate escape in a string", "a"},
		{`{"n":[1e400]}`, "number too large for a double", "n[0]"},
		{`{"n":-20000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000}`, "number too large for a double", "n"},
		{`{"n":123456789012345678901234567890,"m":1.000000000000000000000001,"z":1e-400}`, "", ""},
	} {
		err := Check([]byte(tc.in))
		if tc.reason == "" {
			if err != nil {
				t.Errorf("Check(%q) = %v, want nil", tc.in, err)
			}
			continue
		}
		var pe *ProfileError
		if !errors.As(err, &pe) {
			t.Errorf("Check(%q) = %v, want a ProfileError", tc.in, err)
			continue
		}
		if pe.Reason != tc.reason || pe.PathString() != tc.path {
			t.Errorf("Check(%q) = %q at %q, want %q at %q", tc.in, pe.Reason, pe.PathString(), tc.reason, tc.path)
		}
	}
}

// Object refuses a duplicated member anywhere in the object, names it,
// and still hands out every member first so a caller can read an id.
func TestObjectRefusesDuplicates(t *testing.T) {
	in := `{"id":7,"params":{"payload":{"arguments":{"command":"ls","command":"rm -rf /"}}},"method":"m"}`
	var seen []string
	err := Object([]byte(in), func(k, v []byte) error { seen = append(seen, string(k)); return nil })
	var pe *ProfileError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want ProfileError", err)
	}
	if got := pe.Error(); got != `duplicate member name "command" at params.payload.arguments.command` {
		t.Errorf("message %q", got)
	}
	if strings.Join(seen, ",") != "id,params,method" {
		t.Errorf("members seen %v", seen)
	}
	// Top-level duplicates too.
	err = Object([]byte(`{"method":"a","method":"b"}`), func(k, v []byte) error { return nil })
	if !errors.As(err, &pe) || pe.PathString() != "method" {
		t.Errorf("top-level duplicate: %v", err)
	}
	// A syntax error later in the input wins over a profile problem.
	err = Object([]byte(`{"a":1,"a":2,"b":}`), func(k, v []byte) error { return nil })
	if !errors.Is(err, ErrSyntax) {
		t.Errorf("syntax error after a duplicate: %v", err)
	}
}

// Objects with many members switch to a map; duplicates are still found,
// and a wide object does not take quadratic time.
func TestDuplicatesInLargeObjects(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 5000; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k`)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(`_`)
		b.WriteString(itoa(i))
		b.WriteString(`":1`)
	}
	ok := b.String() + "}"
	if err := Check([]byte(ok)); err != nil {
		t.Fatalf("distinct members refused: %v", err)
	}
	// Member 0 is "ka_0" ("k", no x, "a", "_0").
	var pe *ProfileError
	if err := Check([]byte(b.String() + `,"ka_0":2}`)); !errors.As(err, &pe) || pe.Key != "ka_0" {
		t.Fatalf("duplicate in a large object: %v", err)
	}
}

// The fold used for large objects agrees with bytes.EqualFold, which the
// pairwise comparison of small ones uses.
func TestFoldNameAgreesWithEqualFold(t *testing.T) {
	names := []string{"k", "K", "\u212a", "s", "S", "\u017f", "ß", "ẞ", "σ", "Σ", "ς", "µ", "μ", "Μ", "ǅ", "ǆ", "Ǆ", "i", "İ", "ı", "id", "ID", "Id", "ab", "a"}
	for _, a := range names {
		for _, b := range names {
			if got, want := foldName(a) == foldName(b), bytes.EqualFold([]byte(a), []byte(b)); got != want {
				t.Errorf("%q %q: foldName equal %v, bytes.EqualFold %v", a, b, got, want)
			}
		}
	}
	// Large objects (the map path) refuse case twins too.
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 40; i++ {
		b.WriteString(`"key` + itoa(i) + `":1,`)
	}
	b.WriteString(`"KEY7":2}`)
	var pe *ProfileError
	if err := Check([]byte(b.String())); !errors.As(err, &pe) || pe.Reason != reasonCaseTwin {
		t.Fatalf("case twin in a large object: %v", err)
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// Long or odd member names are cut in the message.
func TestProfileErrorBounded(t *testing.T) {
	long := strings.Repeat("k", 1000)
	err := Check([]byte(`{"` + long + `":1,"` + long + `":2}`))
	if err == nil || len(err.Error()) > 200 {
		t.Fatalf("message not bounded: %d bytes", len(err.Error()))
	}
}

// Valid stays a syntax check (it agrees with encoding/json), Check adds
// the profile.
func TestValidIsSyntaxOnly(t *testing.T) {
	for _, s := range []string{`{"a":1,"a":2}`, "\"\xff\"", `"\ud800"`} {
		if !Valid([]byte(s)) {
			t.Errorf("Valid(%q) = false", s)
		}
		if Check([]byte(s)) == nil {
			t.Errorf("Check(%q) = nil", s)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c","b":"d"}]}`, "{\"a\":\"\xff\"}", `"\ud800\udc00"`, `{"a":1,"\u0061":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if strings.Count(string(b), "[")+strings.Count(string(b), "{") >= MaxNesting {
			return
		}
		err := Check(b)
		if (err == nil || !errors.Is(err, ErrSyntax)) != json.Valid(b) {
			t.Fatalf("Check(%q) = %v, encoding/json.Valid = %v", b, err, json.Valid(b))
		}
		if err != nil {
			return
		}
		// Accepted input reads one way: re-encoding what encoding/json
		// decoded loses no member and changes no string.
		var v any
		if json.Unmarshal(b, &v) != nil {
			t.Fatalf("accepted %q but encoding/json cannot decode it", b)
		}
		out, _ := json.Marshal(v)
		if Check(out) != nil {
			t.Fatalf("re-encoded %q refused", out)
		}
	})
}

var benchMessage = []byte(`{"jsonrpc":"2.0","id":"4f8b5a9e-4b8a-4c1e-9d1a-2f2b7c1d9e01","method":"ahp/event","params":{"event_type":"pre_action","session_id":"sess-0001","agent_id":"agent-main","timestamp":"2026-11-21T10:00:00.000Z","depth":0,"payload":{"action_type":"tool_call","tool_name":"bash","arguments":{"command":"ls -la /workspace/project"}}}}`)

// BenchmarkObjectChecked is the validating pass of every incoming message,
// with the I-JSON checks.
func BenchmarkObjectChecked(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchMessage)))
	for b.Loop() {
		if err := Object(benchMessage, func(k, v []byte) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidSyntaxOnly is the same pass without the I-JSON checks.
func BenchmarkValidSyntaxOnly(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchMessage)))
	for b.Loop() {
		if !Valid(benchMessage) {
			b.Fatal("invalid")
		}
	}
}
