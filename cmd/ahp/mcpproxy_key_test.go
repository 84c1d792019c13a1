package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// requireKey lets the right key through (as X-API-Key or a bearer token)
// and refuses a wrong key of the same length, of other lengths, and none.
func TestMCPProxyRequireKey(t *testing.T) {
	const key = "s3cret-key-0123456789"
	h := requireKey(key, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	try := func(name, value string) int {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		if name != "" {
			r.Header.Set(name, value)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if c := try("X-API-Key", key); c != http.StatusTeapot {
		t.Fatalf("right key as X-API-Key: %d", c)
	}
	if c := try("Authorization", "Bearer "+key); c != http.StatusTeapot {
		t.Fatalf("right key as bearer token: %d", c)
	}
	for _, wrong := range []string{
		"s3cret-key-0123456788", // same length
		"s3cret-key-012345678",  // a prefix
		key + "9",               // longer
		"x",
		"",
	} {
		if c := try("X-API-Key", wrong); c != http.StatusUnauthorized {
			t.Errorf("wrong key %q: %d, want 401", wrong, c)
		}
		if c := try("Authorization", "Bearer "+wrong); c != http.StatusUnauthorized {
			t.Errorf("wrong bearer %q: %d, want 401", wrong, c)
		}
	}
	if c := try("", ""); c != http.StatusUnauthorized {
		t.Errorf("no key: %d, want 401", c)
	}
}

// --listen-api-key-file reads the key from the file's first line; it
// wins over $AHP_MCP_PROXY_API_KEY, and cannot be given with
// --listen-api-key; an empty or oversize file is an error.
func TestMCPProxyKeyFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("key", "  file-key \nsecond line\n")
	parse := func(args ...string) (*mcpProxyOptions, error) {
		t.Helper()
		t.Setenv("AHP_MCP_PROXY_API_KEY", "env-key")
		cmd := newMCPProxyCmd()
		o := &mcpProxyOptions{}
		// newMCPProxyCmd binds its own options; reach them through the flags.
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatal(err)
		}
		o.apiKey = cmd.Flags().Lookup("listen-api-key").Value.String()
		o.apiKeyFile = cmd.Flags().Lookup("listen-api-key-file").Value.String()
		return o, readMCPProxyKeyFile(cmd, o)
	}
	o, err := parse("--listen-api-key-file", good)
	if err != nil || o.apiKey != "file-key" {
		t.Fatalf("key file: key %q, err %v; want file-key", o.apiKey, err)
	}
	if o, err := parse(); err != nil || o.apiKey != "env-key" {
		t.Fatalf("no key file: key %q, err %v; want the environment's", o.apiKey, err)
	}
	if _, err := parse("--listen-api-key", "k", "--listen-api-key-file", good); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("both flags: %v", err)
	}
	for name, content := range map[string]string{"empty": "", "blank": " \n key-on-line-2\n", "big": strings.Repeat("k", 5000)} {
		p := write(name, content)
		if _, err := parse("--listen-api-key-file", p); err == nil {
			t.Errorf("%s key file accepted", name)
		} else if strings.Contains(err.Error(), "key-on-line-2") || strings.Contains(err.Error(), "kkkk") {
			t.Errorf("error shows the file's content: %v", err)
		}
	}
	if _, err := parse("--listen-api-key-file", filepath.Join(dir, "missing")); err == nil {
		t.Error("missing key file accepted")
	}
}
