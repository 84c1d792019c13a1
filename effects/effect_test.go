package effects

import (
	"encoding/json"
	"testing"
	"unsafe"
)

// An Effect's JSON is flat, its keys in the order of the fields as they
// were before Detail existed, and an effect without Detail reads as empty.
func TestEffectJSONAndDetail(t *testing.T) {
	e := Effect{Kind: Signal, Program: "p", Argv: []string{"a"}, Path: "/x", Dest: "/y", Recursive: true, Append: true,
		Detail: &Detail{Mode: "m", Host: "h", Port: "1", URL: "u", Source: "s", Into: "i", Targets: []string{"t"},
			Signal: "KILL", Remote: "r", Reason: "why"}, Limit: true, Via: "shell"}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"signal","program":"p","argv":["a"],"path":"/x","dest":"/y","recursive":true,"append":true,` +
		`"mode":"m","host":"h","port":"1","url":"u","source":"s","into":"i","targets":["t"],"signal":"KILL",` +
		`"remote":"r","reason":"why","limit":true,"via":"shell"}`
	if string(b) != want {
		t.Errorf("JSON:\n got %s\nwant %s", b, want)
	}
	if got := e.Host() + e.Port() + e.URL() + e.Source() + e.Into() + e.Signal() + e.Remote() + e.Reason() + e.Mode(); got != "h1usiKILLrwhym" {
		t.Errorf("read methods: %q", got)
	}
	var bare Effect
	if bare.Host() != "" || bare.Targets() != nil || bare.Reason() != "" || bare.Mode() != "" {
		t.Error("an effect without Detail must read as empty")
	}
	if b, _ := json.Marshal(Effect{Kind: Run}); string(b) != `{"kind":"run"}` {
		t.Errorf("JSON without Detail: %s", b)
	}
	// The point of Detail: a long script holds thousands of effects.
	if n := unsafe.Sizeof(Effect{}); n > 128 {
		t.Errorf("Effect is %d bytes, more than 128", n)
	}
}

// Effects in a list never carry an empty Detail (one nil for "none"), and
// changing the Remote of an effect already listed does not change another
// effect that shared its Detail.
func TestEffectDetailNormalised(t *testing.T) {
	s := newState(Context{})
	s.add(Effect{Kind: Connect, Detail: &Detail{}})
	if s.out[0].Detail != nil {
		t.Error("an all-empty Detail was kept")
	}
	d := &Detail{Host: "h"}
	s.add(Effect{Kind: Connect, Detail: d})
	s.add(Effect{Kind: Send, Detail: d})
	s.out[2].ownDetail().Remote = "far"
	if s.out[1].Remote() != "" || s.out[2].Remote() != "far" || s.out[2].Host() != "h" {
		t.Errorf("ownDetail: %+v %+v", *s.out[1].Detail, *s.out[2].Detail)
	}
}
