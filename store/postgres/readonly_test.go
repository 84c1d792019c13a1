package postgres_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/postgres"
)

// A read-only open (the CLI's) reads what a harness wrote, writes
// nothing, migrates nothing, and says so when the database holds no store.
func TestReadOnly(t *testing.T) {
	url := testURL(t)
	ctx := t.Context()
	schema := freshSchema()
	if _, err := postgres.Open(ctx, url, postgres.Options{Schema: schema, ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "no ahp store") {
		t.Fatalf("read-only open of an empty schema: %v, want no ahp store", err)
	}
	rw, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	rec := store.AuditRecord{Time: time.Now(), SessionID: "s1", AgentID: "a", EventType: "pre_action", Outcome: "block", PolicyVersion: "sha256:1"}
	if err := rw.Audit().Append(ctx, &rec); err != nil {
		t.Fatal(err)
	}
	ro, err := postgres.Open(ctx, url, postgres.Options{Schema: schema, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	recs, err := ro.Audit().Query(ctx, store.AuditFilter{})
	if err != nil || len(recs) != 1 || recs[0].SessionID != "s1" {
		t.Fatalf("read-only query: %v, %+v", err, recs)
	}
	if err := ro.Audit().Append(ctx, &store.AuditRecord{EventType: "pre_action"}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("read-only Append = %v, want ErrReadOnly", err)
	}
	if err := ro.Memory().Add(ctx, &store.Fact{Content: "x"}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("read-only Memory.Add = %v, want ErrReadOnly", err)
	}
	if _, err := ro.Approvals().Decide(ctx, "x", store.Resolution{Status: store.ApprovalDenied}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("read-only Decide = %v, want ErrReadOnly", err)
	}
	if _, err := ro.Audit().Retain(ctx, time.Nanosecond, 0); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("read-only Retain = %v, want ErrReadOnly", err)
	}
	if _, err := ro.LockSession(ctx, "s1"); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("read-only LockSession = %v, want ErrReadOnly", err)
	}
	// The database itself refuses a write on these connections.
	var n int64
	err = ro.QueryRowForTest(ctx, `INSERT INTO facts (session_id, workspace, content, source, confidence, kind, origin, created_ns)
		VALUES ('', '', 'x', '', 1, 'fact', 'human', 1) RETURNING id`, &n)
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a write through a read-only connection: %v", err)
	}
	if recs, _ := rw.Audit().Query(ctx, store.AuditFilter{}); len(recs) != 1 {
		t.Errorf("the read-only store wrote: %+v", recs)
	}
}

// A password in the URL never appears in an open error.
func TestOpenErrorHidesPassword(t *testing.T) {
	for _, ro := range []bool{false, true} {
		_, err := postgres.Open(t.Context(), "postgres://ahp:s3cr3t-pw@127.0.0.1:1/ahp?connect_timeout=2", postgres.Options{ReadOnly: ro})
		if err == nil || strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Fatalf("read-only %v: %v", ro, err)
		}
	}
}
