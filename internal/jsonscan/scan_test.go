package jsonscan

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestObject(t *testing.T) {
	in := ` { "a" : 1 , "b":"x\"}y", "c":{"d":[1,"]",{"e":"{"}]}, "k\u0065y":null, "t":true } `
	var keys, vals []string
	err := Object([]byte(in), func(k, v []byte) error {
		keys = append(keys, string(k))
		vals = append(vals, string(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantK := []string{"a", "b", "c", "key", "t"}
	wantV := []string{"1", `"x\"}y"`, `{"d":[1,"]",{"e":"{"}]}`, "null", "true"}
	for i := range wantK {
		if keys[i] != wantK[i] || vals[i] != wantV[i] {
			t.Fatalf("member %d: %q=%q", i, keys[i], vals[i])
		}
	}
	if err := Object([]byte(`[1]`), func(k, v []byte) error { return nil }); err != ErrNotObject {
		t.Fatalf("array: %v", err)
	}
	if err := Object([]byte(`{}`), func(k, v []byte) error { t.Fatal("called"); return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestString(t *testing.T) {
	for _, s := range []string{"plain", "quote\"back\\slash", "tab\tnl\n", "é ü 中", "emoji 😀", "</script>", "\u2028"} {
		b, _ := json.Marshal(s)
		got, ok := String(b)
		if !ok || got != s {
			t.Errorf("String(%s) = %q", b, got)
		}
		if !Equal(b, s) {
			t.Errorf("Equal(%s, %q) false", b, s)
		}
	}
	if got, ok := String([]byte(`"\ud83d\ude00 \/"`)); !ok || got != "😀 /" {
		t.Errorf("surrogates: %q", got)
	}
	if _, ok := String([]byte(`12`)); ok {
		t.Error("number accepted as string")
	}
}

func TestUint(t *testing.T) {
	if n, ok := Uint([]byte("42"), 100); !ok || n != 42 {
		t.Fatal(n, ok)
	}
	for _, bad := range []string{"-1", "1.5", "1e3", "101", `"1"`, ""} {
		if _, ok := Uint([]byte(bad), 100); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzObject(f *testing.F) {
	f.Add([]byte(`{"a":{"b":[1,2,"c"]},"d":"e"}`))
	f.Add([]byte(`{"a":1,"b":tru}`))
	f.Add([]byte(`{"a":"x"} x`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if strings.Count(string(b), "[")+strings.Count(string(b), "{") >= MaxNesting {
			return
		}
		if !json.Valid(b) {
			if err := Object(b, func(k, v []byte) error { return nil }); err == nil {
				t.Fatalf("malformed input %q accepted", b)
			}
			return
		}
		var want map[string]json.RawMessage
		isObj := json.Unmarshal(b, &want) == nil && want != nil
		n := 0
		err := Object(b, func(k, v []byte) error {
			n++
			if !json.Valid(v) {
				t.Fatalf("invalid value %q", v)
			}
			return nil
		})
		var pe *ProfileError
		if isObj && err != nil && !errors.As(err, &pe) {
			t.Fatalf("valid object refused: %v", err)
		}
	})
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, `""`, `0`, `-0`, `1.5e-3`, `true`, `null`, ` {"a" : [1, 2.0, "x", {"b": null}]} `,
		`{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `-`, `1e`, `"\x"`, `"\u12G4"`, "\"a\tb\"", `{"a"}`, `{1:2}`,
		`tru`, `nul`, `[`, `{"a":1}}`, `"abc`, `1 2`, ``, `  `, `"\ud800"`,
	} {
		if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", s, got, want)
		}
	}
}

func TestNestingBounded(t *testing.T) {
	deep := strings.Repeat("[", MaxNesting+1) + strings.Repeat("]", MaxNesting+1)
	if Valid([]byte(deep)) {
		t.Fatal("nesting beyond MaxNesting accepted")
	}
	ok := strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting)
	if !Valid([]byte(ok)) {
		t.Fatal("nesting at MaxNesting refused")
	}
	huge := strings.Repeat("[", 4<<20)
	if Valid([]byte(huge)) {
		t.Fatal("4 MiB of brackets accepted")
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":"c\n"}]}`, `-1.5e+3`, `"\u00e9"`, `[true,false,null]`} {
		f.Add([]byte(s))
	}
	f.Add([]byte(strings.Repeat("[", MaxNesting+1) + strings.Repeat("]", MaxNesting+1)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := ValidStd(b), json.Valid(b); got != want {
			t.Fatalf("ValidStd(%q) = %v, encoding/json says %v", b, got, want)
		}
		// encoding/json allows deeper nesting; compare only shallow input.
		if strings.Count(string(b), "[")+strings.Count(string(b), "{") >= MaxNesting {
			return
		}
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

// The word-at-a-time scan finds a special byte at every position.
func TestWordSpecial(t *testing.T) {
	for _, special := range []byte{'"', '\\', 0x00, 0x1f, '\n', 0x80, 0xc3, 0xff} {
		for pos := 0; pos < 8; pos++ {
			w := []byte("abcdefgh")
			w[pos] = special
			var x uint64
			for i := 7; i >= 0; i-- {
				x = x<<8 | uint64(w[i])
			}
			if !wordSpecial(x) {
				t.Errorf("byte %#x at %d not found", special, pos)
			}
		}
	}
	for _, ok := range []string{"abcdefgh", "        ", "\x7f\x7e\x21 ~}|{", "!#[]^_`a"} {
		var x uint64
		for i := 7; i >= 0; i-- {
			x = x<<8 | uint64(ok[i])
		}
		if wordSpecial(x) {
			t.Errorf("%q reported special", ok)
		}
	}
}
