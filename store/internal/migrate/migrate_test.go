package migrate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadOrdersAndChecksNames(t *testing.T) {
	ms, err := Load(fstest.MapFS{
		"m/0002_b.sql": {Data: []byte("B")},
		"m/0001_a.sql": {Data: []byte("A")},
		"m/README":     {Data: []byte("not a script")},
	}, "m/*.sql")
	if err != nil || len(ms) != 2 || ms[0].Name != "0001_a.sql" || ms[1].SQL != "B" || ms[1].Version != 2 {
		t.Fatalf("Load = %+v, %v", ms, err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"gap":      {"m/0001_a.sql": {}, "m/0003_c.sql": {}},
		"no start": {"m/0002_b.sql": {}},
		"bad name": {"m/init.sql": {}},
		"zero":     {"m/0000_z.sql": {}},
	} {
		if _, err := Load(fsys, "m/*.sql"); err == nil {
			t.Errorf("%s: Load accepted %v", name, fsys)
		}
	}
}

// fakeConn records what runs; version is the recorded version, and
// txVersion, when set, what a transaction reads (another process having
// migrated meanwhile).
type fakeConn struct {
	version   int
	txVersion func() int
	log       []string
	failOn    string
}

func (c *fakeConn) Exec(_ context.Context, q string, _ ...any) error {
	c.log = append(c.log, q)
	return nil
}
func (c *fakeConn) Version(context.Context) (int, error) { return c.version, nil }
func (c *fakeConn) Begin(context.Context) (Tx, error) {
	if c.txVersion != nil {
		return &versionTx{fakeTx{c: c}}, nil
	}
	return &fakeTx{c: c}, nil
}

type fakeTx struct {
	c         *fakeConn
	pending   []string
	committed bool
}

func (t *fakeTx) Exec(_ context.Context, q string, args ...any) error {
	if t.c.failOn != "" && q == t.c.failOn {
		return errors.New("syntax error")
	}
	if len(args) > 0 {
		t.c.version = args[0].(int)
	}
	t.pending = append(t.pending, q)
	return nil
}
func (t *fakeTx) Commit(context.Context) error {
	t.committed = true
	t.c.log = append(t.c.log, t.pending...)
	return nil
}
func (t *fakeTx) Rollback(context.Context) error {
	if !t.committed {
		t.c.log = append(t.c.log, "rollback")
	}
	return nil
}

type versionTx struct{ fakeTx }

func (t *versionTx) Version(context.Context) (int, error) { return t.c.txVersion(), nil }

var (
	d  = Dialect{CreateTable: "CREATE", Insert: "INSERT"}
	ms = []Migration{{1, "0001_a.sql", "A"}, {2, "0002_b.sql", "B"}, {3, "0003_c.sql", "C"}}
)

func TestRunAppliesMissingScripts(t *testing.T) {
	c := &fakeConn{version: 1}
	if err := Run(t.Context(), c, d, ms); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.log, " "); got != "CREATE B INSERT C INSERT" || c.version != 3 {
		t.Errorf("ran %q, version %d; want scripts 2 and 3, each with its row", got, c.version)
	}
}

func TestRunRefusesNewerDatabase(t *testing.T) {
	c := &fakeConn{version: 4}
	err := Run(t.Context(), c, d, ms)
	if err == nil || !strings.Contains(err.Error(), "version 4 is newer") || len(c.log) != 1 {
		t.Errorf("Run on version 4 = %v after %v; want a refusal before any script", err, c.log)
	}
}

func TestRunSkipsWhatAnotherProcessApplied(t *testing.T) {
	c := &fakeConn{version: 0, txVersion: func() int { return 2 }}
	if err := Run(t.Context(), c, d, ms); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.log, " "); got != "CREATE rollback rollback C INSERT" {
		t.Errorf("ran %q; want scripts 1 and 2 skipped inside their transactions", got)
	}
}

func TestRunStopsAtAFailingScript(t *testing.T) {
	c := &fakeConn{failOn: "B"}
	err := Run(t.Context(), c, d, ms)
	if err == nil || err.Error() != "migration 0002_b.sql: syntax error" {
		t.Fatalf("Run = %v, want the script named", err)
	}
	if got := strings.Join(c.log, " "); got != "CREATE A INSERT rollback" || c.version != 1 {
		t.Errorf("ran %q, version %d; want script 1 only", got, c.version)
	}
}
