package redact

import (
	"strings"
	"testing"
)

// TestQuotedPEMHeaderIsASearch: a BEGIN line closed by a quote is a search
// pattern (grep for it), not a key; a key pasted after a stray quote is
// still found.
func TestQuotedPEMHeaderIsASearch(t *testing.T) {
	body := strings.Repeat("MIIEowIBAAKCAQEA7xQ", 4)
	for text, want := range map[string]bool{
		`grep -rln -- '-----BEGIN RSA PRIVATE KEY-----' .`:                             false,
		`grep -rl "-----BEGIN OPENSSH PRIVATE KEY-----" ~/src`:                         false,
		`{"command":"grep -rl \"-----BEGIN RSA PRIVATE KEY-----\" ."}`:                 false,
		"-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----": true,
		`echo '-----BEGIN RSA PRIVATE KEY-----'"` + body + `"`:                         true,
		"deploy with -----BEGIN OPENSSH PRIVATE KEY----- ...":                          true,
	} {
		kinds := map[string]bool{}
		FindKinds(text, kinds)
		found := kinds["private_key"]
		if found != want {
			t.Errorf("%q: private key found %v, want %v", text, found, want)
		}
	}
}
