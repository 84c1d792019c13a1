package policy

import (
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// In secrets_mode redact, the modified payload changes only the strings
// that hold a secret: numbers stay as written (a tool acts on exactly the
// amount it was asked), member order and other escapes too.
func TestRedactModeKeepsEverythingButTheSecret(t *testing.T) {
	opts := only("secrets")
	opts.Params = map[string]any{"secrets_mode": "redact"}
	set, err := Compile(opts)
	if err != nil {
		t.Fatal(err)
	}
	tok := "ghp_" + strings.Repeat("Ab3x", 9)
	payload := `{"tool_name":"pay","arguments":{"amount":12345678901234567890,"ratio":1.000000000000000000001,` +
		`"z":"\u00e9 & <b>","memo":"` + tok + `","a":[1e2,-0.0]}}`
	r := set.Evaluate(in(event(protocol.EventPreAction, payload)))
	if r.Decision.Kind != protocol.DecisionModify {
		t.Fatalf("got %+v", r)
	}
	want := strings.Replace(payload, tok, "[REDACTED:github_token]", 1)
	if string(r.Decision.ModifiedPayload) != want {
		t.Fatalf("modified payload\n got %s\nwant %s", r.Decision.ModifiedPayload, want)
	}
	// A secret in a member name still goes through Go values (renamed,
	// names kept unique).
	r = set.Evaluate(in(event(protocol.EventPreAction, `{"tool_name":"get","arguments":{"q":{"`+tok+`":"1"}}}`)))
	if r.Decision.Kind != protocol.DecisionModify || strings.Contains(string(r.Decision.ModifiedPayload), tok) {
		t.Fatalf("secret name: %+v", r)
	}
}
