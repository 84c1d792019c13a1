package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/redact"
	"github.com/ahp-go/ahp/store/sqlite"
)

// fixtureSecrets are the fake secrets testdata/prechange-secrets.db holds
// verbatim (see testdata/prechange-secrets.md).
var fixtureSecrets = []string{
	"ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
	"ghp_ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210",
	"AKIAIOSFODNN7EXAMPLE",
	"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
	"xoxb-1234567890-abcdefghijkl",
	"XXXXXXXXXXXXXXXXXXXXXXXX", // the Slack webhook's secret part
	"AIzaSyA1234567890abcdefghijklmnopqrstuv",
	"sk_live_0123456789abcdefghijklmn",
	"zq8x7c6v5b4n3m2l1k0j",
}

// leaks returns the secrets found in blobs (compared without case: the
// full-text index keeps terms in lower case) and the names of the blobs.
func leaks(secrets []string, blobs map[string][]byte) []string {
	var out []string
	for name, b := range blobs {
		lb := bytes.ToLower(b)
		for _, s := range secrets {
			if bytes.Contains(lb, []byte(strings.ToLower(s))) {
				out = append(out, name+": "+s)
			}
		}
	}
	return out
}

// dirFiles reads every file of dir (database, -wal, -shm, keys).
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// TestAuditRedactPreChangeDatabase runs ahp audit redact on a database
// written by the harness before redaction existed: afterwards no file of
// the data directory, and no export, holds any of its secrets.
func TestAuditRedactPreChangeDatabase(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "prechange-secrets.db"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, sqlite.FileName), src, 0o600); err != nil {
		t.Fatal(err)
	}
	if l := leaks(fixtureSecrets, dirFiles(t, dir)); len(l) < len(fixtureSecrets) {
		t.Fatalf("the fixture should hold every secret; found only %v", l)
	}
	out, err := runAhp(t, "audit", "redact", "--data-dir", dir)
	if err != nil {
		t.Fatalf("audit redact: %v", err)
	}
	if !strings.Contains(out, "redacted 7 audit records, 1 approvals, 1 facts") {
		t.Errorf("report: %s", out)
	}
	if l := leaks(fixtureSecrets, dirFiles(t, dir)); len(l) > 0 {
		t.Errorf("secrets left in the data directory after audit redact:\n%s", strings.Join(l, "\n"))
	}
	export, err := runAhp(t, "audit", "export", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if l := leaks(fixtureSecrets, map[string][]byte{"export": []byte(export)}); len(l) > 0 {
		t.Errorf("secrets in the export:\n%s", strings.Join(l, "\n"))
	}
	// The same token, in a pre_action and in a memory_recall query, has one
	// fingerprint under the data directory's key.
	key, err := redact.LoadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	red, err := redact.New(redact.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	marker := "[REDACTED:github_token:" + red.Fingerprint(fixtureSecrets[0]) + "]"
	if n := strings.Count(export, marker); n != 2 {
		t.Errorf("%s appears %d times in the export, want 2 (pre_action and memory_recall)", marker, n)
	}
	for _, kind := range []string{"private_key", "aws_access_key", "aws_secret_key", "github_token", "slack_token", "slack_webhook", "google_api_key", "stripe_key", "api_key"} {
		if !strings.Contains(export, "[REDACTED:"+kind+":") {
			t.Errorf("no %s marker in the export", kind)
		}
	}
	if !strings.Contains(export, `"redacted":["aws_access_key","aws_secret_key"]`) {
		t.Errorf("the pre_prompt record does not list the kinds redacted:\n%s", export)
	}
	// Running it again finds nothing more to do.
	out, err = runAhp(t, "audit", "redact", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "redacted 0 audit records, 0 approvals, 0 facts") {
		t.Errorf("second run: %s %v", out, err)
	}
}

// TestCheckConfigRedaction: ahp check --config validates the redaction
// rules and names each bad entry.
func TestCheckConfigRedaction(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("redaction:\n  fields: [arguments.password]\n  patterns: [{kind: emp, regexp: 'EMP-\\d+'}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("redaction:\n  fields: ['metadata']\n  patterns: [{kind: emp, regexp: '(('}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runAhp(t, "check", "--config", good)
	if err != nil || !strings.Contains(out, "1 field paths, 1 patterns") {
		t.Fatalf("good config: %q %v", out, err)
	}
	_, err = runAhp(t, "check", "--config", bad)
	if err == nil || !strings.Contains(err.Error(), "redaction.fields[0]") || !strings.Contains(err.Error(), "redaction.patterns[0].regexp") {
		t.Fatalf("bad config: %v", err)
	}
}
