package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// TestDiskFullFailsClosedAndRecovers fills the database (SQLite's
// max_page_count gives the same SQLITE_FULL as a full disk) and checks that
// appends then fail, Ping reports not ready, every acknowledged record is
// still there, and that all recovers once space is back.
func TestDiskFullFailsClosedAndRecovers(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.ExecWriter(ctx, `PRAGMA max_page_count = 1`); err != nil { // clamps to the current size
		t.Fatal(err)
	}
	var acked []int64
	var appendErr error
	for i := 0; i < 10000 && appendErr == nil; i++ {
		r := &store.AuditRecord{SessionID: "full", AgentID: "a", Event: []byte(`{"pad":"` + strings.Repeat("x", 200) + `"}`)}
		if appendErr = db.Audit().Append(ctx, r); appendErr == nil {
			acked = append(acked, r.ID)
		}
	}
	if appendErr == nil {
		t.Fatal("appends never failed on a full database")
	}
	if !strings.Contains(appendErr.Error(), "full") {
		t.Errorf("append error %q does not say the database is full", appendErr)
	}
	if err := db.Ping(ctx); err == nil {
		t.Error("Ping is ready while writes fail")
	}
	if err := db.Audit().Append(ctx, &store.AuditRecord{SessionID: "full", Event: []byte(`{"pad":"` + strings.Repeat("y", 4000) + `"}`)}); err == nil {
		t.Error("a second append succeeded on a full database")
	}
	if err := db.Memory().Add(ctx, &store.Fact{Content: strings.Repeat("fact ", 2000)}); err == nil {
		t.Error("Memory.Add succeeded on a full database")
	}

	got, err := db.Audit().Query(ctx, store.AuditFilter{SessionID: "full"})
	if err != nil {
		t.Fatalf("reads must keep working: %v", err)
	}
	if len(got) != len(acked) {
		t.Fatalf("%d records stored, %d were acknowledged", len(got), len(acked))
	}
	for i, r := range got {
		if r.ID != acked[i] {
			t.Fatalf("record %d is %d, acknowledged %d", i, r.ID, acked[i])
		}
	}

	if err := db.ExecWriter(ctx, `PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping after space came back: %v", err)
	}
	if err := db.Audit().Append(ctx, &store.AuditRecord{SessionID: "full"}); err != nil {
		t.Fatalf("Append after space came back: %v", err)
	}
}

func TestOpenUnwritableDirectoryFails(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(t.Context(), filepath.Join(file, "data", sqlite.FileName), sqlite.Options{}); err == nil {
		t.Fatal("Open under a regular file succeeded")
	}
	if os.Geteuid() == 0 {
		t.Log("running as root: file permissions do not stop writes, skipping the read-only directory case")
		return
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(t.Context(), filepath.Join(dir, sqlite.FileName), sqlite.Options{}); err == nil {
		t.Fatal("Open in a read-only directory succeeded")
	}
}

// TestReadOnlyFiles opens a database whose directory and files were made
// read-only (not possible as root): the store must refuse writes, either
// at Open or at the first write, and never acknowledge one.
func TestReadOnlyFiles(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: file permissions do not stop writes")
	}
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, sqlite.FileName)
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Audit().Append(ctx, &store.AuditRecord{SessionID: "before"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{sqlite.FileName, sqlite.FileName + "-wal", sqlite.FileName + "-shm"} {
		_ = os.Chmod(filepath.Join(dir, n), 0o400)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	db, err = sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Logf("Open refused the read-only database: %v", err)
		return
	}
	defer db.Close()
	if err := db.Audit().Append(ctx, &store.AuditRecord{SessionID: "after"}); err == nil {
		t.Fatal("Append on a read-only database succeeded")
	}
	if err := db.Ping(ctx); err == nil {
		t.Error("Ping ready on a read-only database")
	}
}

func TestReadOnlyOption(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	if _, err := sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true}); err == nil {
		t.Fatal("read-only Open of a missing database succeeded")
	}
	if _, err := os.Stat(filepath.Dir(path) + "/" + sqlite.FileName); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read-only Open created the file: %v", err)
	}
	rw, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if err := rw.Audit().Append(ctx, &store.AuditRecord{SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	ro, err := sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got, err := ro.Audit().Query(ctx, store.AuditFilter{}); err != nil || len(got) != 1 {
		t.Fatalf("read-only Query = %d records, %v", len(got), err)
	}
	if err := ro.Audit().Append(ctx, &store.AuditRecord{}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("read-only Append = %v, want ErrReadOnly", err)
	}
	if err := ro.Memory().Add(ctx, &store.Fact{Content: "x"}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("read-only Memory.Add = %v, want ErrReadOnly", err)
	}
	if _, err := ro.Approvals().Decide(ctx, "x", store.Resolution{Status: store.ApprovalDenied}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("read-only Decide = %v, want ErrReadOnly", err)
	}
	if err := ro.Ping(ctx); err != nil {
		t.Errorf("read-only Ping = %v", err)
	}
}
