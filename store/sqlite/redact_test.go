package sqlite

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/store"
)

// TestSecureDeleteFast: the harness's connection zeroes deleted content
// within the pages it writes anyway.
func TestSecureDeleteFast(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), FileName), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode int
	if err := db.w.QueryRowContext(t.Context(), `PRAGMA secure_delete`).Scan(&mode); err != nil || mode != 2 {
		t.Fatalf("secure_delete = %d (%v), want 2 (FAST)", mode, err)
	}
}

// TestRedactLeavesNoCopy writes a secret into every table Redact rewrites,
// redacts, and finds no byte of it left in the files.
func TestRedactLeavesNoCopy(t *testing.T) {
	const secret = "S3CRET-0123456789-abcdef"
	ctx := t.Context()
	dir := t.TempDir()
	db, err := Open(ctx, filepath.Join(dir, FileName), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 { // enough to span pages
		if err := db.Audit().Append(ctx, &store.AuditRecord{SessionID: "s", EventType: "pre_action", Blocking: true,
			Event: json.RawMessage(`{"payload":{"k":"` + secret + `","i":` + string(rune('0'+i%10)) + `}}`), Decision: json.RawMessage(`{"decision":"block","reason":"` + secret + `"}`),
			Outcome: "block", Error: "saw " + secret}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Approvals().Create(ctx, &store.Approval{SessionID: "s", Event: json.RawMessage(`{"k":"` + secret + `"}`), RuleID: "r", Reason: secret}); err != nil {
		t.Fatal(err)
	}
	if err := db.Memory().Add(ctx, &store.Fact{Content: "the key is " + secret, Source: "cli", Confidence: 1}); err != nil {
		t.Fatal(err)
	}
	replace := func(s string) (string, []string) {
		if !strings.Contains(s, secret) {
			return s, nil
		}
		return strings.ReplaceAll(s, secret, "[REDACTED:test:00000000]"), []string{"test"}
	}
	rd := Redaction{
		Text:  replace,
		Event: func(b []byte) ([]byte, []string) { s, k := replace(string(b)); return []byte(s), k },
		JSON:  func(b []byte) ([]byte, []string) { s, k := replace(string(b)); return []byte(s), k },
	}
	st, err := db.Redact(ctx, rd)
	if err != nil {
		t.Fatal(err)
	}
	if st.Audit != 50 || st.Approvals != 1 || st.Facts != 1 {
		t.Errorf("stats %+v", st)
	}
	recs, err := db.Audit().Query(ctx, store.AuditFilter{})
	if err != nil || len(recs) != 50 || strings.Join(recs[0].Redacted, ",") != "test" {
		t.Fatalf("records after redact: %d %v %v", len(recs), err, recs[0].Redacted)
	}
	// The database is still open: its WAL and shared memory are there too.
	check := func(when string) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(bytes.ToLower(b), bytes.ToLower([]byte(secret))) {
				t.Errorf("%s: %s still holds the secret", when, e.Name())
			}
		}
	}
	check("open")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	check("closed")
}
