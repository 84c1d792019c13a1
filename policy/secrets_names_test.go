package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// Secrets named after an underscore, a dash or a dot, and the well-known
// key formats, are blocked by the secrets pack (issue 24); ordinary code
// that names a secret without holding one is not.
func TestSecretsPackNamedAndFormats(t *testing.T) {
	const p = "secrets."
	plain := "Zx81mQp2Lv7Nc4Rt9Wb3"
	awsSecret := "Xr9" + "aB7kQ/m2Zp4Lw8Nc1Vd5Tf3Gh6Jy0Ks+Ue7Wq"
	prompt := func(s string) *Input {
		b, _ := json.Marshal(map[string]any{"prompt": s})
		return in(event(protocol.EventPrePrompt, string(b)))
	}
	cases := []packCase{
		{"OPENAI_API_KEY sk-proj", in(bash("OPENAI_API_KEY=sk-proj-" + strings.Repeat("Xr9aB7kQ", 6) + " python app.py")), p + "in_tool_arguments"},
		{"OPENAI_API_KEY plain", in(bash("export OPENAI_API_KEY=" + plain)), p + "in_tool_arguments"},
		{"ANTHROPIC_API_KEY", in(bash("ANTHROPIC_API_KEY=" + plain + " claude -p hi")), p + "in_tool_arguments"},
		{"anthropic format", prompt("my key is sk-ant-api03-" + strings.Repeat("Qz7_Lm2-Np4x", 8) + "AA"), p + "in_prompt"},
		{"STRIPE_SECRET_KEY", in(bash("STRIPE_SECRET_KEY=sk_test_" + plain + " npm start")), p + "in_tool_arguments"},
		{"GOOGLE_CLIENT_SECRET", in(action("write", map[string]any{"path": ".env", "content": "GOOGLE_CLIENT_SECRET=" + plain + "\n"})), p + "in_tool_arguments"},
		{"GITHUB_TOKEN", in(bash("GITHUB_TOKEN=" + plain + " gh release create v1")), p + "in_tool_arguments"},
		{"aws configure set", in(bash("aws configure set aws_secret_access_key " + awsSecret)), p + "in_tool_arguments"},
		{"env member", in(action("deploy", map[string]any{"env": map[string]any{"OPENAI_API_KEY": plain}})), p + "in_tool_arguments"},
		{"AWS pair in words", prompt("use AKIA" + "ZQ7MN2VRK9WBC4DN with secret " + awsSecret), p + "in_prompt"},

		{"os.environ", in(bash(`python -c 'API_KEY = os.environ["API_KEY"]'`)), ""},
		{"get_token()", in(action("write", map[string]any{"path": "a.py", "content": "token = get_token()\n"})), ""},
		{"gh auth token", in(bash("export GITHUB_TOKEN=$(gh auth token)")), ""},
		{"compose reference", in(action("write", map[string]any{"path": "compose.yaml", "content": "    password: ${DB_PASSWORD}\n"})), ""},
		{"placeholder sk-…", in(action("write", map[string]any{"path": ".env.example", "content": "OPENAI_API_KEY=sk-…\nANTHROPIC_API_KEY=sk-ant-api03-...\n"})), ""},
		{"env member reference", in(action("deploy", map[string]any{"env": map[string]any{"OPENAI_API_KEY": "${OPENAI_API_KEY}"}})), ""},
		{"page token", in(bash(`curl "https://www.googleapis.com/drive/v3/files?pageToken=CgwI4r2XpQYQ6K3YxAE"`)), ""},
	}
	runPackCases(t, only("secrets"), cases)
}

// In redact mode a member named as a secret has its value replaced, the
// rest of the payload kept as written.
func TestSecretsPackRedactsNamedMember(t *testing.T) {
	opts := only("secrets")
	opts.Params = map[string]any{"secrets_mode": "redact"}
	set, err := Compile(opts)
	if err != nil {
		t.Fatal(err)
	}
	plain := "Zx81mQp2Lv7Nc4Rt9Wb3"
	payload := `{"tool_name":"deploy","arguments":{"n":1.50,"env":{"GITHUB_TOKEN":"` + plain + `","HOME":"/h"}}}`
	r := set.Evaluate(in(event(protocol.EventPreAction, payload)))
	if r.Decision.Kind != protocol.DecisionModify {
		t.Fatalf("got %+v", r)
	}
	want := strings.Replace(payload, plain, "[REDACTED:api_key]", 1)
	if string(r.Decision.ModifiedPayload) != want {
		t.Fatalf("modified payload\n got %s\nwant %s", r.Decision.ModifiedPayload, want)
	}
}
