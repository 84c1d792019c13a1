package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// A secret sent as a member name is found like one sent as a value: the
// secrets pack blocks it and the payload is not reported clean.
func TestSecretsPackSecretInMemberName(t *testing.T) {
	const p = "secrets."
	tok := "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	asName := `{"tool_name":"http_get","arguments":{"url":"https://x.example","query":{"` + tok + `":"1"}}}`
	cases := []packCase{
		{"token as a member name", in(event(protocol.EventPreAction, asName)), p + "in_tool_arguments"},
		{"token as a value", in(event(protocol.EventPreAction,
			`{"tool_name":"http_get","arguments":{"query":{"q":"`+tok+`"}}}`)), p + "in_tool_arguments"},
		{"private key as a prompt member name", in(event(protocol.EventPrePrompt,
			`{"prompt":"hi","x":{"-----BEGIN RSA PRIVATE KEY-----\nMIIE":1}}`)), p + "private_key_in_prompt"},
		{"clean names", in(event(protocol.EventPreAction, `{"tool_name":"http_get","arguments":{"query":{"page":"1"}}}`)), ""},
	}
	runPackCases(t, only("secrets"), cases)

	set, err := Compile(only("secrets"))
	if err != nil {
		t.Fatal(err)
	}
	if r := set.Evaluate(in(event(protocol.EventPreAction, asName))); r.PayloadSecrets != SecretsFound {
		t.Fatalf("payload scan %v, want SecretsFound (a clean report lets the harness skip redaction)", r.PayloadSecrets)
	}
}

// The CEL functions see member names, and redact_secrets renames them,
// keeping the names of distinct secrets distinct.
func TestSecretFunctionsSeeMemberNames(t *testing.T) {
	set := mustCompile(t, noPacks(), `
rules:
  - id: names
    condition: has_secret(payload) && secret_kinds(payload) == ["github_token"] && has_secret(payload.arguments)
    outcome: {decision: modify, modified_payload: redact_secrets(payload)}
`)
	tok, tok2 := "ghp_"+strings.Repeat("Ab3x", 9), "ghp_"+strings.Repeat("Zy9x", 9)
	r := eval(set, action("http_get", map[string]any{"query": map[string]any{tok: "1", tok2: "2", "page": "3"}}))
	if r.RuleID != "names" || r.Err != nil {
		t.Fatalf("got %+v", r)
	}
	mp := string(r.Decision.ModifiedPayload)
	if strings.Contains(mp, tok) || strings.Contains(mp, tok2) {
		t.Fatalf("secret name kept: %s", mp)
	}
	var got struct {
		Arguments struct {
			Query map[string]string `json:"query"`
		} `json:"arguments"`
	}
	if err := json.Unmarshal(r.Decision.ModifiedPayload, &got); err != nil {
		t.Fatal(err)
	}
	q := got.Arguments.Query
	if len(q) != 3 || q["[REDACTED:github_token]"] != "1" || q["[REDACTED:github_token] #2"] != "2" || q["page"] != "3" {
		t.Fatalf("query %v", q)
	}
}
