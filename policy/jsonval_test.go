package policy

import (
	"encoding/json"
	"reflect"
	"testing"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

func TestDecodeJSONValues(t *testing.T) {
	src := `{"s":"plain","esc":"tab\there \"q\" \u00e9 \ud83d\ude00","n":42,"big":12345678901234567890,
	  "f":-1.5e2,"t":true,"fa":false,"nul":null,"list":[1,"two",{"three":3},[]],"obj":{"k":{"deep":"x"}},"empty":{}}`
	v := decodeJSON(src)
	o, ok := v.(*jsonObject)
	if !ok {
		t.Fatalf("got %T", v)
	}
	get := func(k string) ref.Val {
		x, found := o.lookup(k)
		if !found {
			t.Fatalf("missing %s", k)
		}
		return x
	}
	checks := map[string]ref.Val{
		"s": types.String("plain"), "esc": types.String("tab\there \"q\" é 😀"), "n": types.Int(42),
		"big": types.Double(12345678901234567890), "f": types.Double(-150), "t": types.True, "fa": types.False,
		"nul": types.NullValue,
	}
	for k, want := range checks {
		if got := get(k); got.Equal(want) != types.True {
			t.Errorf("%s: got %v (%T), want %v", k, got, got, want)
		}
	}
	list := get("list").(traits.Lister)
	if list.Size() != types.Int(4) || list.Get(types.Int(1)) != types.String("two") {
		t.Fatalf("list %v", list)
	}
	deep, _ := get("obj").(*jsonObject).lookup("k")
	if x, _ := deep.(*jsonObject).lookup("deep"); x != types.String("x") {
		t.Fatalf("deep %v", x)
	}
	if get("empty").(traits.Sizer).Size() != types.Int(0) || o.Size() != types.Int(11) {
		t.Fatal("sizes")
	}
	if _, found := o.lookup("absent"); found {
		t.Fatal("absent key found")
	}
	var keys []string
	for it := o.Iterator(); it.HasNext() == types.True; {
		keys = append(keys, string(it.Next().(types.String)))
	}
	if len(keys) != 11 || keys[0] != "s" || keys[10] != "empty" {
		t.Fatalf("keys %v", keys)
	}
}

func TestDecodeJSONErrors(t *testing.T) {
	for _, src := range []string{`{"a":}`, `{"a" 1}`, `{"a":1`, `{"a":"x}`, `{a:1}`, `{"a":1,}`, `[1,`, `tru`, ``, `"abc`} {
		v := decodeJSON(src)
		if o, ok := v.(*jsonObject); ok {
			v = o.scan()
		}
		if !types.IsError(v) {
			t.Errorf("%q: no error (%v)", src, v)
		}
	}
}

func TestJSONObjectEqualityAndConversion(t *testing.T) {
	a := decodeJSON(`{"x": [1, 2], "y": {"z": "w"}}`)
	b := decodeJSON(`{ "y": {"z":"w"}, "x": [1,2] }`)
	c := decodeJSON(`{"x": [1, 2], "y": {"z": "v"}}`)
	if a.Equal(b) != types.True || a.Equal(c) != types.False || a.Equal(types.String("x")) != types.False {
		t.Fatal("equality")
	}
	lit, _ := nativeToVal(map[string]any{"x": []any{1, 2}, "y": map[string]any{"z": "w"}}, 0)
	if a.Equal(lit) != types.True || lit.Equal(a) != types.True {
		t.Fatal("equality with a CEL map")
	}
	n, err := a.ConvertToNative(reflect.TypeFor[map[string]any]())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(n, map[string]any{"x": []any{int64(1), int64(2)}, "y": map[string]any{"z": "w"}}) {
		t.Fatalf("native %#v", n)
	}
	if a.ConvertToType(types.TypeType) != types.MapType || a.Type() != types.MapType {
		t.Fatal("type")
	}
}

func TestAppendJSONRoundTrip(t *testing.T) {
	vals := []any{map[string]any{"b": []any{1.5, "x", nil, true}, "a": map[string]any{}}, "é\"<>", int64(-3), []any{}}
	for _, v := range vals {
		cv, err := nativeToVal(v, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := appendJSON(nil, cv, 0)
		if err != nil {
			t.Fatal(err)
		}
		var back any
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		want, _ := json.Marshal(v)
		got, _ := json.Marshal(back)
		if string(got) != string(want) {
			t.Errorf("round trip %s != %s", got, want)
		}
	}
	if _, err := appendJSON(nil, types.Double(1).Divide(types.Double(0)), 0); err == nil {
		t.Error("infinity encoded")
	}
	if _, err := appendJSON(nil, types.Bytes("x"), 0); err == nil {
		t.Error("bytes encoded")
	}
}

func TestDepthLimits(t *testing.T) {
	deep := make([]byte, 0, 2*maxDepth+10)
	for i := 0; i < maxDepth+5; i++ {
		deep = append(deep, '[')
	}
	for i := 0; i < maxDepth+5; i++ {
		deep = append(deep, ']')
	}
	v := decodeJSON(string(deep))
	if _, err := toNative(v, 0); err == nil {
		t.Fatal("too deep value converted")
	}
	if _, err := appendJSON(nil, v, 0); err == nil {
		t.Fatal("too deep value encoded")
	}
}
