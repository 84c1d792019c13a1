package sqlite

import (
	"context"
	"database/sql"
	"github.com/ahp-go/ahp/store"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestMigrationsRecordedOnceAndNewerSchemaRefused(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), FileName)
	for range 2 {
		db, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var n, v int
		if err := db.r.QueryRowContext(ctx, `SELECT count(*), max(version) FROM schema_version`).Scan(&n, &v); err != nil {
			t.Fatal(err)
		}
		if n != SchemaVersion || v != SchemaVersion {
			t.Errorf("schema_version holds %d rows up to %d, want %d", n, v, SchemaVersion)
		}
		var mode string
		if err := db.r.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal_mode = %q, %v; want wal", mode, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}

	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO schema_version (version, name, applied_ns) VALUES (999, 'future', 0)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	for _, ro := range []bool{false, true} {
		if _, err := Open(ctx, path, Options{ReadOnly: ro}); err == nil || !strings.Contains(err.Error(), "999") {
			t.Errorf("Open (read-only %v) of a newer schema = %v, want a refusal naming version 999", ro, err)
		}
	}
}

func TestConcurrentFirstOpenMigratesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			db, err := Open(context.Background(), path, Options{})
			if err != nil {
				errs <- err
				return
			}
			errs <- db.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestSyncOption(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		sync Sync
		want int // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{{"", 2}, {SyncFull, 2}, {SyncNormal, 1}, {"normal", 1}} {
		db, err := Open(ctx, filepath.Join(t.TempDir(), FileName), Options{Sync: c.sync})
		if err != nil {
			t.Fatal(err)
		}
		var got int
		if err := db.w.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("Sync %q: synchronous = %d, want %d", c.sync, got, c.want)
		}
		db.Close()
	}
	if _, err := Open(ctx, filepath.Join(t.TempDir(), FileName), Options{Sync: "OFF"}); err == nil {
		t.Error("Sync OFF accepted: it would not be durable")
	}
}

func TestPathWithSpecialCharacters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a dir?with#odd%chars", FileName)
	db, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, _ := filepath.Glob(filepath.Join(filepath.Dir(path), FileName)); len(got) != 1 {
		t.Errorf("database not created at %s", path)
	}
}

func TestFTSMatch(t *testing.T) {
	for in, want := range map[string]string{
		"Where is the config?":   `"where" OR "is" OR "the" OR "config"`,
		`"quoted" AND (near*)`:   `"quoted" OR "and" OR "near"`,
		"config CONFIG Config":   `"config"`,
		"???":                    ``,
		"naïve café_2":           `"naïve" OR "café" OR "2"`,
		strings.Repeat("w ", 10): `"w"`,
	} {
		if got := ftsMatch(in); got != want {
			t.Errorf("ftsMatch(%q) = %s, want %s", in, got, want)
		}
	}
	var many []string
	for i := range 100 {
		many = append(many, "w"+strings.Repeat("x", i))
	}
	if n := strings.Count(ftsMatch(strings.Join(many, " ")), " OR ") + 1; n != maxMatchTerms {
		t.Errorf("ftsMatch kept %d terms, want %d", n, maxMatchTerms)
	}
}

// TestUpgradeFromVersion1 rebuilds a database as version 1 left it (with
// the audit_rule index, without approvals.requested_by and .replica,
// audit.redacted and the shadow columns)
// and checks that opening it applies the later migrations.
func TestUpgradeFromVersion1(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `DELETE FROM schema_version WHERE version > 1;
		CREATE INDEX audit_rule ON audit (rule_id, id);
		ALTER TABLE approvals DROP COLUMN requested_by; ALTER TABLE approvals DROP COLUMN replica;
		ALTER TABLE audit DROP COLUMN redacted;
		DROP INDEX audit_shadow; DROP INDEX audit_shadow_changed;
		ALTER TABLE audit DROP COLUMN shadow; ALTER TABLE audit DROP COLUMN shadow_changed;
		DROP INDEX facts_workspace; DROP INDEX facts_kept;
		ALTER TABLE facts DROP COLUMN workspace; ALTER TABLE facts DROP COLUMN kind; ALTER TABLE facts DROP COLUMN origin;
		INSERT INTO facts (session_id, content, source, confidence, created_ns) VALUES ('', 'an old fact', 'cli', 1, 1);
		INSERT INTO approvals (id, created_ns, session_id, agent_id, rule_id, reason, status)
			VALUES ('old', 1, 's', 'a', 'r', 'why', 'pending');`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'audit_rule'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("audit_rule index after upgrade: %d, %v; want dropped", n, err)
	}
	if v, err := schemaVersion(ctx, db.r); err != nil || v != SchemaVersion {
		t.Errorf("schema version after upgrade = %d, %v; want %d", v, err, SchemaVersion)
	}
	// 0006: facts of before are human facts for every project.
	if fs, err := db.Memory().Search(ctx, store.FactQuery{Text: "old fact", SessionID: "s", Workspace: "/w"}); err != nil ||
		len(fs) != 1 || fs[0].Kind != store.KindFact || fs[0].Origin != store.OriginHuman || fs[0].Workspace != "" {
		t.Errorf("fact from version 1 after upgrade: %+v, %v", fs, err)
	}
	// 0003, 0007: approvals of before know no requester and no replica.
	if a, err := db.Approvals().Get(ctx, "old"); err != nil || a.RequestedBy != "" || a.Replica != "" || a.Reason != "why" {
		t.Errorf("approval from version 1 after upgrade: %+v, %v", a, err)
	}
}
