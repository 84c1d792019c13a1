package auth

import (
	"context"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/auth/authtest"
)

const (
	agentKey    = "agent-key-0123456789abcdef"
	agentToken  = "agent-token-0123456789abcdef"
	observerKey = "observer-key-0123456789abcdef"
	adminToken  = "admin-token-0123456789abcdef"
)

func testFile() string {
	return `version: 1
principals:
  - id: build-agent
    roles: [agent]
    api_keys: ["` + HashSecret(agentKey) + `"]
    bearer_tokens: ["` + HashSecret(agentToken) + `"]
  - id: dashboard
    roles: [observer]
    api_keys: ["` + observerKey + `"]
  - id: root
    roles: [admin]
    bearer_tokens: ["sha256:` + strings.ToUpper(HashSecret(adminToken)[7:]) + `"]
mtls:
  - common_name: agent-7
    principal: build-agent
  - san: spiffe://example.org/agent/9
    principal: root
`
}

func mustParse(t *testing.T, s string) *Store {
	t.Helper()
	st, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestStoreAuthenticateSecrets(t *testing.T) {
	st := mustParse(t, testFile())
	ctx := context.Background()
	cases := []struct {
		name   string
		c      Credentials
		want   string
		reason string
	}{
		{"hashed api key", Credentials{APIKey: agentKey}, "build-agent", ""},
		{"hashed bearer", Credentials{Bearer: agentToken}, "build-agent", ""},
		{"key and token of one principal", Credentials{APIKey: agentKey, Bearer: agentToken}, "build-agent", ""},
		{"plaintext api key", Credentials{APIKey: observerKey}, "dashboard", ""},
		{"uppercase digest", Credentials{Bearer: adminToken}, "root", ""},
		{"nothing", Credentials{}, "", ReasonMissing},
		{"wrong key", Credentials{APIKey: "nope"}, "", ReasonInvalid},
		{"token used as key", Credentials{APIKey: agentToken}, "", ReasonInvalid},
		{"key of one, token of another", Credentials{APIKey: observerKey, Bearer: agentToken}, "", ReasonConflict},
		{"good key, bad token", Credentials{APIKey: agentKey, Bearer: "bad"}, "", ReasonInvalid},
		{"oversized key", Credentials{APIKey: strings.Repeat("k", maxSecretBytes+1)}, "", ReasonInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := st.Authenticate(ctx, tc.c)
			if tc.reason != "" {
				if !errors.Is(err, ErrUnauthenticated) || ReasonOf(err) != tc.reason {
					t.Fatalf("got %v, %v; want refusal %s", p, err, tc.reason)
				}
				for _, secret := range []string{agentKey, agentToken, observerKey, "nope", "bad"} {
					if strings.Contains(err.Error(), secret) {
						t.Fatalf("error %q reveals a secret", err)
					}
				}
				return
			}
			if err != nil || p.ID != tc.want {
				t.Fatalf("got %v, %v; want %s", p, err, tc.want)
			}
		})
	}
}

func TestStoreAuthenticateCertificates(t *testing.T) {
	st := mustParse(t, testFile())
	ca := authtest.NewCA(t, "test-ca")
	chain := func(l *authtest.Leaf) []*x509.Certificate { return []*x509.Certificate{l.Cert, ca.Cert} }
	ctx := context.Background()

	p, err := st.Authenticate(ctx, Credentials{PeerCertificates: chain(ca.Client(t, "agent-7"))})
	if err != nil || p.ID != "build-agent" {
		t.Fatalf("CN mapping: %v, %v", p, err)
	}
	san := ca.Issue(t, authtest.LeafOptions{CommonName: "whatever", URIs: []string{"spiffe://example.org/agent/9"}, Client: true})
	p, err = st.Authenticate(ctx, Credentials{PeerCertificates: chain(san)})
	if err != nil || p.ID != "root" {
		t.Fatalf("SAN mapping: %v, %v", p, err)
	}
	_, err = st.Authenticate(ctx, Credentials{PeerCertificates: chain(ca.Client(t, "stranger"))})
	if ReasonOf(err) != ReasonUnknownCert {
		t.Fatalf("unknown subject: %v", err)
	}
	// A valid key does not rescue an unknown certificate.
	_, err = st.Authenticate(ctx, Credentials{APIKey: agentKey, PeerCertificates: chain(ca.Client(t, "stranger"))})
	if ReasonOf(err) != ReasonUnknownCert {
		t.Fatalf("unknown subject with key: %v", err)
	}
	// Certificate and key naming different principals conflict.
	_, err = st.Authenticate(ctx, Credentials{APIKey: observerKey, PeerCertificates: chain(ca.Client(t, "agent-7"))})
	if ReasonOf(err) != ReasonConflict {
		t.Fatalf("conflict: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]string{
		"unknown role":           "principals:\n  - id: a\n    roles: [superuser]\n    api_keys: [abcdefghijklmnopqrstuvwxyz]\n",
		"no roles":               "principals:\n  - id: a\n    api_keys: [abcdefghijklmnopqrstuvwxyz]\n",
		"empty id":               "principals:\n  - roles: [agent]\n",
		"duplicate id":           "principals:\n  - id: a\n    roles: [agent]\n  - id: a\n    roles: [agent]\n",
		"bad digest":             "principals:\n  - id: a\n    roles: [agent]\n    api_keys: [\"sha256:abc\"]\n",
		"secret shared":          "principals:\n  - id: a\n    roles: [agent]\n    api_keys: [s3cr3t-s3cr3t-s3cr3t]\n  - id: b\n    roles: [agent]\n    api_keys: [s3cr3t-s3cr3t-s3cr3t]\n",
		"unknown field":          "principals:\n  - id: a\n    roles: [agent]\n    apikeys: [x]\n",
		"mtls unknown principal": "principals:\n  - id: a\n    roles: [agent]\nmtls:\n  - common_name: x\n    principal: b\n",
		"mtls both names":        "principals:\n  - id: a\n    roles: [agent]\nmtls:\n  - common_name: x\n    san: y\n    principal: a\n",
		"mtls twice":             "principals:\n  - id: a\n    roles: [agent]\nmtls:\n  - common_name: x\n    principal: a\n  - common_name: x\n    principal: a\n",
		"version":                "version: 2\n",
		"empty":                  "",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(in)); err == nil {
				t.Fatal("accepted")
			} else if strings.Contains(err.Error(), "s3cr3t") {
				t.Fatalf("error %q reveals a secret", err)
			}
		})
	}
	// The same secret as an API key of one principal and a bearer token of
	// another is allowed: they are separate namespaces.
	mustParse(t, "principals:\n  - id: a\n    roles: [agent]\n    api_keys: [s3cr3t-s3cr3t-s3cr3t]\n  - id: b\n    roles: [agent]\n    bearer_tokens: [s3cr3t-s3cr3t-s3cr3t]\n")
}

func TestLoadFileWarnings(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "creds.yaml")
	if err := os.WriteFile(p, []byte("principals:\n  - id: a\n    roles: [agent]\n    api_keys: [short]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(st.Warnings(), "\n")
	for _, want := range []string{"plaintext", "shorter than 16", "readable by other users"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings %q lack %q", w, want)
		}
	}
	if strings.Contains(w, "short\"") || strings.Contains(w, ": short") {
		t.Errorf("warnings reveal the secret: %q", w)
	}
	hashed := filepath.Join(dir, "hashed.yaml")
	if err := os.WriteFile(hashed, []byte("principals:\n  - id: a\n    roles: [agent]\n    api_keys: [\""+HashSecret("short")+"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err = LoadFile(hashed)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Warnings()) != 0 {
		t.Errorf("a file of digests warns: %v", st.Warnings())
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestHashSecret(t *testing.T) {
	// printf %s test | sha256sum
	if got := HashSecret("test"); got != "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" {
		t.Fatal(got)
	}
}

func TestLookupChecksEveryEntry(t *testing.T) {
	entries := []secretEntry{}
	for i, s := range []string{"a", "b", "c"} {
		sum, _, _ := parseSecret(s + "-secret")
		entries = append(entries, secretEntry{sum: sum, owner: i * 10})
	}
	for i, s := range []string{"a", "b", "c"} {
		if got := lookup(entries, s+"-secret"); got != i*10 {
			t.Errorf("lookup %s = %d", s, got)
		}
	}
	if lookup(entries, "z") != -1 || lookup(nil, "a-secret") != -1 {
		t.Error("lookup of an unknown secret matched")
	}
}

func TestInsecureNoAuthAndRequire(t *testing.T) {
	p, err := InsecureNoAuth{}.Authenticate(context.Background(), Credentials{})
	if err != nil || !p.Has(RoleAgent) || p.Has(RoleObserver) {
		t.Fatalf("%v %v", p, err)
	}
	if err := Require(p, RoleApprover); !errors.Is(err, ErrForbidden) || ReasonOf(err) != ReasonForbidden {
		t.Fatalf("Require: %v", err)
	}
	if err := Require(nil, RoleAgent); !errors.Is(err, ErrForbidden) {
		t.Fatalf("Require nil: %v", err)
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "[::1]": true, "localhost": true, "LOCALHOST": true,
		"": false, "0.0.0.0": false, "::": false, "10.0.0.1": false, "example.com": false, "localhost.evil.com": false,
		"::ffff:127.0.0.1": true,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v", host, got)
		}
	}
	if !IsLoopbackAddr("127.0.0.1:8080") || !IsLoopbackAddr("[::1]:1") || IsLoopbackAddr(":8080") || IsLoopbackAddr("127.0.0.1") {
		t.Error("IsLoopbackAddr")
	}
}
