package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/internal/jsonscan"
	"github.com/ahp-go/ahp/protocol"
)

// A secret sent as a member name is redacted like one sent as a value: the
// name becomes the marker and the document stays valid JSON.
func TestSecretInMemberName(t *testing.T) {
	r := newTest(t, Rules{})
	tok := secrets["github_token"]
	ev := &protocol.Event{EventType: "pre_action", Payload: json.RawMessage(
		`{"tool_name":"http_get","arguments":{"url":"https://x.example","query":{"` + tok + `":"1"}}}`)}
	out, k := r.Event(ev, false)
	p := string(out.Payload)
	if strings.Contains(p, tok) || strings.Join(k.List(), ",") != "github_token" {
		t.Fatalf("secret name kept: %s (kinds %v)", p, k.List())
	}
	var got struct {
		Arguments struct {
			Query map[string]string `json:"query"`
		} `json:"arguments"`
	}
	if err := json.Unmarshal(out.Payload, &got); err != nil {
		t.Fatalf("not valid JSON: %v: %s", err, p)
	}
	want := r.marker("github_token", tok)
	if got.Arguments.Query[want] != "1" || len(got.Arguments.Query) != 1 {
		t.Fatalf("query %v, want the value under %s", got.Arguments.Query, want)
	}
}

// A name that redacts to the name of another member (here one already
// redacted) gets a suffix: both members stay, under unique names.
func TestSecretNameCollision(t *testing.T) {
	r := newTest(t, Rules{})
	tok, tok2 := secrets["github_token"], "ghp_"+strings.Repeat("Zy9x", 9)
	m := r.marker("github_token", tok)
	raw := json.RawMessage(`{"` + m + `":"a","` + tok + `":"b","` + tok2 + `":"c","x ` + tok + `":"d"}`)
	out, k := r.JSON(raw)
	if strings.Contains(string(out), tok) || strings.Contains(string(out), tok2) || k.Empty() {
		t.Fatalf("secret left: %s", out)
	}
	if err := jsonscan.Check(out); err != nil {
		t.Fatalf("not one-reading JSON: %v: %s", err, out)
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[m] != "a" || got[m+" #2"] != "b" ||
		got[r.marker("github_token", tok2)] != "c" || got["x "+m] != "d" {
		t.Fatalf("members %v", got)
	}
}

// Field paths match member names in any letter case, with Unicode simple
// folding (the Kelvin sign folds to k).
func TestFieldPathIgnoresCase(t *testing.T) {
	r := newTest(t, Rules{Fields: []string{"arguments.password", "arguments.api_key"}})
	for _, name := range []string{"Password", "PASSWORD", "passworD", "api_\u212aey"} {
		ev := &protocol.Event{EventType: "pre_action", Payload: json.RawMessage(
			`{"tool_name":"login","arguments":{"user":"bob","` + name + `":"hunter2"}}`)}
		for _, clean := range []bool{false, true} {
			out, k := r.Event(ev, clean)
			if strings.Contains(string(out.Payload), "hunter2") || strings.Join(k.List(), ",") != FieldKind {
				t.Errorf("%s (clean %v): %s, kinds %v", name, clean, out.Payload, k.List())
			}
			if !strings.Contains(string(out.Payload), `"user":"bob"`) {
				t.Errorf("%s: other member lost: %s", name, out.Payload)
			}
		}
	}
	// Only the named member: a longer name is not matched.
	ev := &protocol.Event{EventType: "pre_action", Payload: json.RawMessage(`{"arguments":{"Password2":"x"}}`)}
	if out, _ := r.Event(ev, true); out != ev {
		t.Errorf("Password2 redacted: %s", out.Payload)
	}
}

// Context fields marked redact: true match in any letter case too.
func TestContextFieldIgnoresCase(t *testing.T) {
	r, err := New(Options{Key: []byte("0123456789abcdef0123456789abcdef"), ContextFields: []string{"current_task"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := &protocol.Event{EventType: "pre_action", Metadata: json.RawMessage(`{"Current_Task":"deploy prod"}`)}
	out, _ := r.Event(ev, true)
	if strings.Contains(string(out.Metadata), "deploy prod") {
		t.Fatalf("context field kept: %s", out.Metadata)
	}
}

// Raw redacts a refused message in place: everything but the secrets
// stays as received (member order, duplicates, invalid UTF-8, escapes).
func TestRawKeepsRefusedMessage(t *testing.T) {
	r := newTest(t, Rules{})
	tok := secrets["github_token"]
	m := r.marker("github_token", tok)
	pk := secrets["private_key"]
	pkJSON, _ := json.Marshal("key:\n" + pk + "\nend")
	cases := []struct{ name, in, want string }{
		{"duplicate members", `{"z":1,"a":"` + tok + `","a":"x"}`, `{"z":1,"a":"` + m + `","a":"x"}`},
		{"secret name", `{"b":0,"` + tok + `":"1","` + tok + `":"2"}`, `{"b":0,"` + m + `":"1","` + m + `":"2"}`},
		{"invalid UTF-8", "{\"k\":\"\xff " + tok + " \xfe\"}", "{\"k\":\"\xff " + m + " \xfe\"}"},
		{"escaped secret", `{"k":"x \u0067hp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\/y"}`, `{"k":"x ` + m + `\/y"}`},
		{"escaped newlines", `{"p":` + string(pkJSON) + `}`, `{"p":"key:\n` + r.marker("private_key", pk) + `\nend"}`},
		{"not JSON", `token ` + tok + ` "unterminated ` + tok, `token ` + m + ` "unterminated ` + m},
		{"clean", `{"a":1,"a":2}`, `{"a":1,"a":2}`},
	}
	for _, c := range cases {
		out, k := r.Raw([]byte(c.in))
		if string(out) != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, out, c.want)
		}
		if (c.name == "clean") != k.Empty() {
			t.Errorf("%s: kinds %v", c.name, k.List())
		}
	}
	in := []byte(`{"a":"b"}`)
	if out, _ := r.Raw(in); &out[0] != &in[0] {
		t.Error("a clean message was copied")
	}
}
