package harness

import (
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/redact"
)

// A refused message keeps what made it refused (member order, a duplicate
// member) when a secret in it is redacted.
func TestSealRejectedKeepsRawText(t *testing.T) {
	r, err := redact.New(redact.Options{Key: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	h := &Harness{red: r}
	tok := "ghp_" + strings.Repeat("Ab3x", 9)
	raw := `{"method":"event","params":{"z":1,"a":"` + tok + `","a":"x"}}`
	out, _, _, kinds := h.sealRejected([]byte(raw), &protocol.Event{}, "duplicate member a")
	want := strings.Replace(raw, tok, "[REDACTED:github_token:"+r.Fingerprint(tok)+"]", 1)
	if string(out) != want || strings.Join(kinds, ",") != "github_token" {
		t.Fatalf("got %s (kinds %v)\nwant %s", out, kinds, want)
	}
}
