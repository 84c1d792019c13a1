package descriptor

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"
)

func TestFormatNumber(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{1, "1"},
		{1.0, "1"},
		{-1, "-1"},
		{1.5, "1.5"},
		{4.50, "4.5"},
		{0.1, "0.1"},
		{0.3, "0.3"},
		{1.0 / 3, "0.3333333333333333"},
		{2e-3, "0.002"},
		{1e-6, "0.000001"},
		{1e-7, "1e-7"},
		{1.5e-7, "1.5e-7"},
		{1e20, "100000000000000000000"},
		{1e21, "1e+21"},
		{-1e21, "-1e+21"},
		{1.5e300, "1.5e+300"},
		{123456789012345680000, "123456789012345680000"},
		{9007199254740993, "9007199254740992"},
		{333333333.33333329, "333333333.3333333"},
		{1e-27, "1e-27"},
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{-5e-324, "-5e-324"},
		{295147905179352830000, "295147905179352830000"},
	} {
		got, err := formatNumber(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("formatNumber(%v) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := formatNumber(bad); err == nil {
			t.Errorf("formatNumber(%v) accepted", bad)
		}
	}
}

// Every number written by formatNumber parses back to the same double.
func TestFormatNumberRoundTrips(t *testing.T) {
	for _, f := range []float64{0.1, 1e-7, 1e21, 123.456, 6.02214076e23, 1.7976931348623157e308, 2.2250738585072014e-308} {
		s, err := formatNumber(f)
		if err != nil {
			t.Fatal(err)
		}
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || back != f {
			t.Errorf("%v -> %q -> %v, %v", f, s, back, err)
		}
	}
}

func TestMarshalCanonicalStrings(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"plain", `"plain"`},
		{`quote " backslash \ slash /`, `"quote \" backslash \\ slash /"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"\x00\x01\x1f", `"\u0000\u0001\u001f"`},
		{"\x7f", "\"\x7f\""},
		{"<a href='x'>&amp;</a>", `"<a href='x'>&amp;</a>"`},
		{"café €  😀", `"café €  😀"`},
		{"\u2028\u2029", "\"\u2028\u2029\""},
		{"bad \xff byte", "\"bad \uFFFD byte\""},
	} {
		got, err := MarshalCanonical(tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("MarshalCanonical(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestMarshalCanonicalKeyOrder(t *testing.T) {
	// The sorting example of RFC 8785 section 3.2.3: keys compare by UTF-16
	// code units, so U+1F600 (D83D DE00) sorts before U+FB33. One change,
	// from aioc: "1" is an array index, and JSON.stringify writes array-index
	// keys of an object before all others.
	in := map[string]any{
		"\u20ac":     "Euro Sign",
		"\r":         "Carriage Return",
		"\ufb33":     "Hebrew Letter Dalet With Dagesh",
		"1":          "One",
		"\U0001f600": "Emoji: Grinning Face",
		"\u0080":     "Control",
		"\u00f6":     "Latin Small Letter O With Diaeresis",
	}
	want := "{\"1\":\"One\",\"\\r\":\"Carriage Return\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\"," +
		"\"\u20ac\":\"Euro Sign\",\"\U0001f600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"
	got, err := MarshalCanonical(in)
	if err != nil || string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Prefixes sort first; comparison is by code unit, not by length.
	got, _ = MarshalCanonical(map[string]any{"ab": 1, "a": 2, "b": 3, "": 4})
	if string(got) != `{"":4,"a":2,"ab":1,"b":3}` {
		t.Fatalf("got %s", got)
	}
}

func TestMarshalCanonicalValues(t *testing.T) {
	type inner struct {
		B int     `json:"b"`
		A float64 `json:"a"`
	}
	got, err := MarshalCanonical(map[string]any{
		"z":      []any{true, false, nil, 1.0, math.Copysign(0, -1), 1e21, "x"},
		"struct": inner{B: 2, A: 0.5},
		"ints":   []int{1, 2},
		"num":    json.Number("1.000"),
		"big":    uint64(1) << 60, // ECMAScript prints 2^60 as 1152921504606847000
	})
	want := `{"big":1152921504606847000,"ints":[1,2],"num":1,"struct":{"a":0.5,"b":2},"z":[true,false,null,1,0,1e+21,"x"]}`
	if err != nil || string(got) != want {
		t.Fatalf("got  %s, %v\nwant %s", got, err, want)
	}
	// Non-finite numbers are written as null, as JSON.stringify does.
	if got, err := MarshalCanonical(map[string]any{"x": math.NaN(), "y": math.Inf(-1)}); err != nil || string(got) != `{"x":null,"y":null}` {
		t.Errorf("NaN and -Inf: %s, %v", got, err)
	}
	if _, err := MarshalCanonical(func() {}); err == nil {
		t.Error("func accepted")
	}
}

// Numbers read from YAML and JSON normalize to the same canonical text.
func TestCanonicalNumbersFromYAMLAndJSON(t *testing.T) {
	y := mustParse(t, "runtime: {entry_agent: a}\nmetadata: {n: [1.0, -0.0, 1e21, 0.000001, 1e-7, 0x10, 100]}\nagents: {a: {}}\n")
	j, err := Parse([]byte(`{"runtime":{"entry_agent":"a"},"metadata":{"n":[1,-0,1E21,1e-6,0.0000001,16,1e2]},"agents":{"a":{}}}`), FormatJSON, "")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"agents":{"a":{}},"metadata":{"n":[1,0,1e+21,0.000001,1e-7,16,100]},"runtime":{"entry_agent":"a"}}`
	if string(y.CanonicalJSON()) != want || string(j.CanonicalJSON()) != want {
		t.Fatalf("yaml %s\njson %s\nwant %s", y.CanonicalJSON(), j.CanonicalJSON(), want)
	}
	if y.Hash() != j.Hash() {
		t.Fatal("hashes differ")
	}
}
