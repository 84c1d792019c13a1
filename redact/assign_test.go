package redact

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// Fake secrets of the formats of issue 24, built so that no scanner of this
// repository's text takes them for real ones.
var (
	fakeOpenAIProj   = "sk-proj-" + strings.Repeat("Xr9aB7kQ", 6)
	fakeOpenAILegacy = "sk-" + "Ab3dE5gH7jK9mN1pQ3sT" + "T3Blbk" + "FJ" + "uV5wX7yZ9aB1cD3eF5gH"
	fakeAnthropic    = "sk-ant-" + "api03-" + strings.Repeat("Qz7_Lm2-Np4x", 8) + "AA"
	fakeStripeLive   = "sk_" + "live_" + "51Hx7TqLmZ2vRk9WbC4dNf8J"
	fakeStripeRK     = "rk_" + "live_" + "51Hx7TqLmZ2vRk9WbC4dNf8J"
	fakeGoogleSecret = "GOC" + "SPX-" + "Hq7mZ2vRk9WbC4dNf8Jx1Lp3sT5u"
	fakeGitLab       = "glp" + "at-" + "Zq8mN2vRk9WbC4dNf8Jx"
	fakeNPM          = "npm" + "_" + "Zq8mN2vRk9WbC4dNf8Jx1Lp3sT5uV7wY9aB0"
	fakeHF           = "hf" + "_" + "ZqmNvRkWbCdNfJxLpsTuVwYaBcDeFgHiJk"
	fakeSlackApp     = "xapp-" + "1-A0123456789-1234567890123-abcdef0123456789"
	fakeGitHubOAuth  = "gho" + "_" + "Zq8mN2vRk9WbC4dNf8Jx1Lp3sT5uV7wY9aB0"
	fakeAWSSecret    = "Xr9" + "aB7kQ/m2Zp4Lw8Nc1Vd5Tf3Gh6Jy0Ks+Ue7Wq"
	fakeAWSID        = "AKIA" + "ZQ7MN2VRK9WBC4DN"
	// Values with no known format, given only by their names.
	plainKey = "Zx81mQp2Lv7Nc4Rt9Wb3"
)

// assignedLines are lines an agent may send that hold a secret: each must
// be detected, and redacted (the secret gone, a marker of the kind in its
// place) by the Redactor and by Plain.
var assignedLines = []struct{ line, secret, kind string }{
	{"OPENAI_API_KEY=" + fakeOpenAIProj, fakeOpenAIProj, "openai_key"},
	{"export OPENAI_API_KEY=" + fakeOpenAILegacy, fakeOpenAILegacy, "openai_key"},
	{"OPENAI_API_KEY=" + plainKey, plainKey, "api_key"},
	{"ANTHROPIC_API_KEY=" + fakeAnthropic + " claude -p hi", fakeAnthropic, "anthropic_key"},
	{`ANTHROPIC_API_KEY="` + plainKey + `"`, plainKey, "api_key"},
	{"STRIPE_SECRET_KEY=" + fakeStripeLive, fakeStripeLive, "stripe_key"},
	{"STRIPE_SECRET_KEY=sk_test_" + plainKey, "sk_test_" + plainKey, "api_key"},
	{"curl -u " + fakeStripeRK + ": https://api.stripe.com/v1/charges", fakeStripeRK, "stripe_key"},
	{"GOOGLE_CLIENT_SECRET=" + fakeGoogleSecret, fakeGoogleSecret, "google_oauth_secret"},
	{"GOOGLE_CLIENT_SECRET=" + plainKey, plainKey, "api_key"},
	{"GITHUB_TOKEN=" + plainKey + " gh pr list", plainKey, "api_key"},
	{"git clone https://x-access-token:" + fakeGitHubOAuth + "@github.com/o/r", fakeGitHubOAuth, "github_token"},
	{"SLACK_APP_TOKEN=" + fakeSlackApp, fakeSlackApp, "slack_token"},
	{"aws configure set aws_secret_access_key " + fakeAWSSecret, fakeAWSSecret, "aws_secret_key"},
	{"AWS_SECRET_ACCESS_KEY=" + fakeAWSSecret, fakeAWSSecret, "aws_secret_key"},
	{"curl -H 'x-api-key: " + plainKey + "' https://api.example.com", plainKey, "api_key"},
	{`config.auth.token = "` + plainKey + `"`, plainKey, "api_key"},
	{`const githubToken = "` + plainKey + `";`, plainKey, "api_key"},
	{"deploy --api-key " + plainKey + " --env prod", plainKey, "api_key"},
	{"vault write auth/x client-secret=" + plainKey, plainKey, "api_key"},
	{`{"OPENAI_API_KEY": "` + plainKey + `"}`, plainKey, "api_key"},
	{"DB_PASSWORD=c0rrectH0rseBatt3ry psql", "c0rrectH0rseBatt3ry", "api_key"},
	{"JWT_SECRET: " + plainKey, plainKey, "api_key"},
	{"npm config set //registry.npmjs.org/:_authToken " + fakeNPM, fakeNPM, "npm_token"},
	{"git push https://oauth2:" + fakeGitLab + "@gitlab.com/o/r", fakeGitLab, "gitlab_token"},
	{"huggingface-cli login --token " + fakeHF, fakeHF, "huggingface_token"},
	// The AWS secret key next to its access key id, in words.
	{"use " + fakeAWSID + " with secret " + fakeAWSSecret, fakeAWSSecret, "aws_secret_key"},
}

func TestSecretsAfterSeparator(t *testing.T) {
	r := newTest(t, Rules{})
	for _, c := range assignedLines {
		found := map[string]bool{}
		FindKinds(c.line, found)
		if !found[c.kind] || !HasSecret(c.line) {
			t.Errorf("%q: kinds %v, want %s", c.line, found, c.kind)
		}
		out, k := r.String(c.line)
		if strings.Contains(out, c.secret) || !strings.Contains(out, "[REDACTED:"+c.kind+":"+r.Fingerprint(c.secret)+"]") {
			t.Errorf("%q: redacted to %q, want the secret replaced by a %s marker", c.line, out, c.kind)
		}
		if !strings.Contains(strings.Join(k.List(), ","), c.kind) {
			t.Errorf("%q: kinds %v", c.line, k.List())
		}
		if p := Plain(c.line); strings.Contains(p, c.secret) || !strings.Contains(p, "[REDACTED:"+c.kind+"]") {
			t.Errorf("%q: Plain gives %q", c.line, p)
		}
	}
}

// ordinaryLines are lines of ordinary development work: names of secrets
// assigned references, calls, placeholders and identifiers, and words
// that only look like secret names. None may be taken for a secret.
var ordinaryLines = []string{
	`API_KEY = os.environ["API_KEY"]`,
	`token = get_token()`,
	`export GITHUB_TOKEN=$(gh auth token)`,
	`password: ${DB_PASSWORD}`,
	`const apiKey = process.env.OPENAI_API_KEY;`,
	`api_key = settings.OPENAI_API_KEY_2`,
	`OPENAI_API_KEY=your-api-key-here`,
	`OPENAI_API_KEY=sk-...`,
	`OPENAI_API_KEY=sk-proj-…`,
	`ANTHROPIC_API_KEY=sk-ant-api03-...`,
	`ANTHROPIC_API_KEY=sk-ant-api03-…`,
	`export AWS_SECRET_ACCESS_KEY=<your-secret-key>`,
	`aws_secret_access_key = xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`,
	`AWS_SECRET_ACCESS_KEY: ${{ secrets.AWS_SECRET_ACCESS_KEY }}`,
	`token: ${{ secrets.GITHUB_TOKEN }}`,
	`client_secret=os.getenv("GOOGLE_CLIENT_SECRET")`,
	`headers = {"Authorization": f"Bearer {token}"}`,
	`token_url = "https://oauth2.googleapis.com/token"`,
	`max_tokens=4096`,
	`MAX_TOKENS = 128000`,
	`next_page_token = resp["nextPageToken"]`,
	`curl "https://www.googleapis.com/drive/v3/files?pageToken=CgwI4r2XpQYQ6K3YxAE"`,
	`github_token = os.environ.get("GITHUB_TOKEN")`,
	`const token = await getToken(req);`,
	`secret_key = SECRET_KEY_FROM_ENV_2`,
	`access_token = access_token_v2`,
	`secretName: my-app-secret-v2`,
	`secret: my-app-secret-v2`,
	`api_key: str = Field(..., env="API_KEY")`,
	`password = input("Password: ")`,
	`API_KEY=changeme`,
	`git commit -m "rotate the api key: see ticket 12345"`,
	`kubectl create secret generic db --from-literal=password=$DB_PASS`,
	`go test ./redact/ -run TestToken -count=1`,
	`echo $OPENAI_API_KEY | wc -c`,
	`"token": "{{ .Values.token }}"`,
	`the token d41d8cd98f00b204e9800998ecf8427e expired`,
	`STRIPE_SECRET_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx`,
	`password_min_length=12345678901234`,
	`tokenizer = AutoTokenizer.from_pretrained("gpt2")`,
	`gh secret set OPENAI_API_KEY --body "$OPENAI_API_KEY"`,
	`api_key = config["openai"]["api_key"]`,
	`auth_token = request.headers.get("X-Auth-Token")`,
	`SECRET_KEY = env("DJANGO_SECRET_KEY", default=None)`,
	`export ANTHROPIC_API_KEY="$(security find-generic-password -s anthropic -w)"`,
	`git show 3f786850e387550fdab836ed7e6dc881de23001b --stat`,
	`client_secret: /etc/app/client_secret_2.json`,
	`app --token ./secrets/token_2.txt`,
	`SECRET_KEY_FILE=/run/secrets/django_key_2 SECRET_KEY=~/keys/django-2`,
	`aws iam list-access-keys # AKIA keys rotate; commit 3f786850e387550fdab836ed7e6dc881de23001b`,
}

func TestOrdinaryLinesNotSecrets(t *testing.T) {
	r := newTest(t, Rules{})
	for _, line := range ordinaryLines {
		found := map[string]bool{}
		FindKinds(line, found)
		if len(found) > 0 || HasSecret(line) {
			t.Errorf("%q taken for a secret: %v", line, found)
		}
		if out, k := r.String(line); out != line || !k.Empty() {
			t.Errorf("%q redacted to %q", line, out)
		}
	}
}

// The secret half of an AWS key pair is redacted when the two halves are
// in separate members of one document, and in a refused raw message; a
// git commit id beside an access key id is not.
func TestAWSPairAcrossMembers(t *testing.T) {
	r := newTest(t, Rules{})
	sha := "3f786850e387550fdab836ed7e6dc881de23001b"
	doc := `{"tool_name":"write","arguments":{"id":"` + fakeAWSID + `","note":"` + fakeAWSSecret + `","commit":"` + sha + `"}}`
	out, k := r.JSON(json.RawMessage(doc))
	if strings.Contains(string(out), fakeAWSSecret) || strings.Contains(string(out), fakeAWSID) {
		t.Fatalf("a half of the pair left: %s", out)
	}
	if !strings.Contains(string(out), sha) || strings.Join(k.List(), ",") != "aws_access_key,aws_secret_key" {
		t.Fatalf("got %s, kinds %v", out, k.List())
	}
	raw, k := r.Raw([]byte(doc + ` trailing`))
	if strings.Contains(string(raw), fakeAWSSecret) || !strings.Contains(string(raw), sha) || k.Empty() {
		t.Fatalf("raw: %s", raw)
	}
	// Without the id, a lone 40-character string is left alone.
	lone := `{"note":"` + fakeAWSSecret + `"}`
	if out, k := r.JSON(json.RawMessage(lone)); string(out) != lone || !k.Empty() {
		t.Fatalf("lone candidate redacted: %s", out)
	}
}

// A member whose name is a secret word holds a secret when its value looks
// like one: in an event payload, in a refused raw message, for the policy.
func TestMemberNamedSecret(t *testing.T) {
	r := newTest(t, Rules{})
	ev := &protocol.Event{EventType: "pre_action", Payload: json.RawMessage(
		`{"tool_name":"deploy","arguments":{"env":{"OPENAI_API_KEY":"` + plainKey + `","api_key_ref":"` + plainKey + `x","GITHUB_TOKEN":"${GITHUB_TOKEN}"}}}`)}
	out, k := r.Event(ev, false)
	p := string(out.Payload)
	if strings.Contains(p, `"`+plainKey+`"`) || strings.Join(k.List(), ",") != "api_key" {
		t.Fatalf("named secret left: %s (%v)", p, k.List())
	}
	for _, keep := range []string{`"api_key_ref":"` + plainKey + `x"`, `"GITHUB_TOKEN":"${GITHUB_TOKEN}"`} {
		if !strings.Contains(p, keep) {
			t.Errorf("%s changed: %s", keep, p)
		}
	}
	raw, _ := r.Raw([]byte(`{"client_secret" : "` + plainKey + `", "x":1}`))
	if strings.Contains(string(raw), plainKey) || !strings.Contains(string(raw), `"client_secret" : "[REDACTED:api_key:`) {
		t.Errorf("raw: %s", raw)
	}
	if !MemberSecret("GOOGLE_CLIENT_SECRET", plainKey) || MemberSecret("client_secret_ref", plainKey) ||
		MemberSecret("nextPageToken", plainKey) || MemberSecret("token", "get_token()") {
		t.Error("MemberSecret")
	}
}

// Nested assignments (each value holding the next one) cost a few passes,
// not one pass per assignment: the agent chooses the text.
func TestAssignedSecretsLinear(t *testing.T) {
	for _, unit := range []string{"token=", "x_token=xxxx", "--api-key ", `"secret":"`} {
		s := strings.Repeat(unit, 600_000/len(unit)) + plainKey
		start := time.Now()
		HasSecret(s)
		Plain(s)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%q repeated: %v", unit, d)
		}
	}
	// Past the budget of nested values, they are taken for secrets (the
	// limit fails closed); an ordinary text never reaches it.
	if !HasSecret(strings.Repeat("token=", 100_000)) {
		t.Error("nested assignments past the budget let through")
	}
	// A secret after nested assignments is still found.
	if !HasSecret("API_KEY=" + strings.Repeat("a", 20) + " TOKEN=" + plainKey) {
		t.Error("second assignment missed")
	}
}
