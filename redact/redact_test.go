package redact

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// secrets holds one fake secret of every built-in kind, in the context its
// detector needs.
var secrets = map[string]string{
	"private_key":    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----",
	"aws_access_key": "AKIAIOSFODNN7EXAMPLE",
	"aws_secret_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"github_token":   "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
	"slack_token":    "xoxb-1234567890-abcdefghijkl",
	"slack_webhook":  "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
	"google_api_key": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
	"stripe_key":     "sk_live_0123456789abcdefghijklmn",
	"api_key":        "zq8x7c6v5b4n3m2l1k0j",
}

// inContext returns the text a detector of kind needs around its secret.
func inContext(kind string) string {
	switch kind {
	case "aws_secret_key":
		return "aws_secret_access_key=" + secrets[kind]
	case "api_key":
		return "api_key=" + secrets[kind]
	}
	return "x " + secrets[kind] + " y"
}

func newTest(t *testing.T, rules Rules) *Redactor {
	t.Helper()
	r, err := New(Options{Key: []byte("0123456789abcdef0123456789abcdef"), Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var markerOf = regexp.MustCompile(`\[REDACTED:([a-z0-9_]+):([0-9a-f]{8})\]`)

func TestStringEveryKind(t *testing.T) {
	r := newTest(t, Rules{})
	for kind, secret := range secrets {
		out, k := r.String(inContext(kind))
		if strings.Contains(out, secret) {
			t.Errorf("%s: secret left in %q", kind, out)
		}
		m := markerOf.FindStringSubmatch(out)
		if m == nil || m[1] != kind || m[2] != r.Fingerprint(secret) {
			t.Errorf("%s: got %q, want a marker of kind %s with fingerprint %s", kind, out, kind, r.Fingerprint(secret))
		}
		if got := k.List(); len(got) != 1 || got[0] != kind {
			t.Errorf("%s: kinds %v", kind, got)
		}
		// A marker counts as a secret of its kind, and redacting again
		// changes nothing.
		found := map[string]bool{}
		FindKinds(out, found)
		if !found[kind] || !HasSecret(out) {
			t.Errorf("%s: marker %q not counted as a secret of its kind (%v)", kind, out, found)
		}
		if again, k2 := r.String(out); again != out || !k2.Empty() {
			t.Errorf("%s: not idempotent: %q -> %q", kind, out, again)
		}
	}
}

func TestFingerprintKeyed(t *testing.T) {
	a := newTest(t, Rules{})
	b, _ := New(Options{Key: []byte("another key of sixteen bytes or more")})
	s := secrets["github_token"]
	same := newTest(t, Rules{}) // another Redactor with the same key
	if a.Fingerprint(s) != same.Fingerprint(s) || len(a.Fingerprint(s)) != 8 {
		t.Fatal("fingerprint not stable across redactors of one key, or not 8 hex digits")
	}
	if a.Fingerprint(s) == b.Fingerprint(s) {
		t.Fatal("two keys give the same fingerprint")
	}
	if a.Fingerprint(s) == a.Fingerprint(secrets["stripe_key"]) {
		t.Fatal("two secrets give the same fingerprint")
	}
	if _, err := New(Options{Key: []byte("short")}); err == nil {
		t.Fatal("a short key was accepted")
	}
}

func TestFieldPathsAndPatterns(t *testing.T) {
	r := newTest(t, Rules{
		Fields:   []string{"arguments.password", "arguments.headers.Authorization", "metadata.api_key", "payload.items.*.pin"},
		Patterns: []Pattern{{Kind: "employee_id", Regexp: `\bEMP-(\d{6})\b`}},
	})
	ev := &protocol.Event{
		EventType: "pre_action", SessionID: "s", AgentID: "a",
		Payload: json.RawMessage(`{"tool_name":"http","arguments":{"password":"hunter2","headers":{"Authorization":"Bearer abc","Accept":"*/*"},` +
			`"token":"` + secrets["github_token"] + `","note":"for EMP-123456"},"items":[{"pin":1234},{"pin":"9999"}]}`),
		Metadata: json.RawMessage(`{"api_key":{"nested":true},"other":"plain"}`),
	}
	orig := string(ev.Payload)
	out, k := r.Event(ev, false)
	if string(ev.Payload) != orig {
		t.Fatal("the input event was modified")
	}
	p := string(out.Payload)
	for _, leak := range []string{"hunter2", "Bearer abc", secrets["github_token"], "123456", "1234", "9999", "nested"} {
		if strings.Contains(p+string(out.Metadata), leak) {
			t.Errorf("%q left in %s %s", leak, p, out.Metadata)
		}
	}
	for _, keep := range []string{`"Accept":"*/*"`, `"tool_name":"http"`, "EMP-[REDACTED:employee_id:"} {
		if !strings.Contains(p, keep) {
			t.Errorf("%q missing from %s", keep, p)
		}
	}
	if !strings.Contains(string(out.Metadata), `"other":"plain"`) {
		t.Errorf("metadata: %s", out.Metadata)
	}
	want := []string{"employee_id", "field", "github_token"}
	if got := k.List(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("kinds %v, want %v", got, want)
	}
	// A secret at a redacted path keeps its kind.
	ev2 := &protocol.Event{EventType: "pre_action", Payload: json.RawMessage(`{"arguments":{"password":"` + secrets["aws_access_key"] + `"}}`)}
	out2, _ := r.Event(ev2, true)
	if m := markerOf.FindStringSubmatch(string(out2.Payload)); m == nil || m[1] != "aws_access_key" {
		t.Errorf("secret at a field path: %s", out2.Payload)
	}
}

func TestCleanEventUntouched(t *testing.T) {
	r := newTest(t, Rules{})
	ev := &protocol.Event{EventType: "pre_action", Payload: json.RawMessage(`{"tool_name":"bash","arguments":{"command":"ls"}}`)}
	if out, k := r.Event(ev, false); out != ev || !k.Empty() {
		t.Fatal("a clean event was copied or reported redacted")
	}
	// payloadClean: the payload is not scanned again (here it is not
	// clean, to show that it is trusted).
	ev.Payload = json.RawMessage(`{"k":"` + secrets["github_token"] + `"}`)
	if out, _ := r.Event(ev, true); out != ev {
		t.Fatal("a payload reported clean was scanned again")
	}
	if out, _ := r.Event(ev, false); out == ev {
		t.Fatal("a secret in the payload was not redacted")
	}
}

func TestEscapedSecretInJSON(t *testing.T) {
	r := newTest(t, Rules{})
	// The detector's hint is spelled with an escape in the raw text.
	raw := json.RawMessage(`{"k":"\u0067hp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"}`)
	out, k := r.JSON(raw)
	if strings.Contains(string(out), "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") || k.Empty() {
		t.Fatalf("escaped secret kept: %s", out)
	}
}

func TestRulesValidate(t *testing.T) {
	bad := Rules{
		Fields:   []string{"", "a..b", "metadata", "ok.path"},
		Patterns: []Pattern{{Kind: "Bad Kind", Regexp: "x"}, {Kind: "k", Regexp: "("}, {Kind: "e", Regexp: "a*"}, {Kind: "field", Regexp: "x"}},
	}
	err := bad.Validate()
	if err == nil {
		t.Fatal("bad rules accepted")
	}
	for _, want := range []string{"fields[0]", "fields[1]", "fields[2]", "patterns[0].kind", "patterns[1].regexp", "patterns[2].regexp: matches the empty string", "patterns[3].kind"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "ok.path") {
		t.Errorf("a valid path reported: %v", err)
	}
}

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := LoadOrCreateKey(dir)
	if err != nil || string(k1) != string(k2) || len(k1) != 32 {
		t.Fatalf("key not kept: %v", err)
	}
	fi, err := statKey(dir)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v", fi.Mode().Perm(), err)
	}
}

// benchEvent is bench/loadgen's pre_action.
var benchEvent = &protocol.Event{
	EventType: "pre_action", SessionID: "bench-session", AgentID: "bench-agent", Timestamp: "2026-11-21T10:00:00.000Z",
	Payload: json.RawMessage(`{"action_type":"tool_call","tool_name":"bash","arguments":{"command":"ls -la /workspace/project"}}`),
}

var benchDecision = json.RawMessage(`{"decision":"allow","metadata":{"policy_version":"sha256:30c5e065feafd659d2e4ebf444e45980bf386368ac689f9ce46b7d863dd99dd7"}}`)

// BenchmarkSealClean is what the harness adds to a clean event whose
// payload the secrets pack already scanned: the envelope strings and the
// decision are checked, the payload is not.
func BenchmarkSealClean(b *testing.B) {
	r, _ := New(Options{Key: []byte("0123456789abcdef0123456789abcdef")})
	b.ReportAllocs()
	for b.Loop() {
		ev, k := r.Event(benchEvent, true)
		d, k2 := r.Decision(benchDecision)
		if ev != benchEvent || !k.Empty() || !k2.Empty() || len(d) != len(benchDecision) {
			b.Fatal("redacted a clean event")
		}
	}
}

// BenchmarkSealCleanUnscanned is the same event when no rule scanned the
// payload (notifications, or the secrets pack off).
func BenchmarkSealCleanUnscanned(b *testing.B) {
	r, _ := New(Options{Key: []byte("0123456789abcdef0123456789abcdef")})
	b.ReportAllocs()
	for b.Loop() {
		r.Event(benchEvent, false)
		r.Decision(benchDecision)
	}
}

// BenchmarkSealSecret redacts one token in the payload.
func BenchmarkSealSecret(b *testing.B) {
	r, _ := New(Options{Key: []byte("0123456789abcdef0123456789abcdef")})
	ev := *benchEvent
	ev.Payload = json.RawMessage(`{"tool_name":"bash","arguments":{"command":"curl -H 'token ` + secrets["github_token"] + `' x"}}`)
	b.ReportAllocs()
	for b.Loop() {
		r.Event(&ev, false)
	}
}
