package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ahp-go/ahp/harness"
	"github.com/ahp-go/ahp/policy"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/runs"
	"github.com/ahp-go/ahp/runs/runstest"
	"github.com/ahp-go/ahp/server"
	"github.com/ahp-go/ahp/store/postgres"
	"github.com/ahp-go/ahp/transport"
)

// fillPostgres records five decisions of replayOldPolicy and the scripted
// run into the PostgreSQL database at u, as a harness on it would.
func fillPostgres(t *testing.T, u string) {
	t.Helper()
	ctx := context.Background()
	db, err := postgres.Open(ctx, u, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	off := map[string]bool{}
	for _, n := range policy.PackNames() {
		off[n] = false
	}
	eng, err := policy.NewEngine(policy.Options{Packs: off}, policy.Source{Name: "old.yaml", Data: []byte(replayOldPolicy)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := harness.New(harness.Options{Engine: eng, Store: db})
	if err != nil {
		t.Fatal(err)
	}
	pctx := server.WithPeer(ctx, transport.Info{Transport: "unix", Principal: &transport.Principal{ID: "agent-1"}})
	for i, cmd := range []string{"ls", "git push --force origin main", "git push -f origin x", "git status", "git push -f origin y"} {
		ev := &protocol.Event{EventType: protocol.EventPreAction, SessionID: "s1", AgentID: "coder", Timestamp: "t",
			Payload: json.RawMessage(fmt.Sprintf(`{"tool_name":"bash","arguments":{"command":%q},"n":%d}`, cmd, i))}
		if _, err := h.HandleEvent(pctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	h.Flush()
	r, err := runs.New(db.Runs(), runs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	evs := runstest.Session()
	for i := range evs {
		if err := r.Observe(ctx, &evs[i]); err != nil {
			t.Fatalf("run event %d: %v", i+1, err)
		}
	}
}

// schemaTables counts the tables of the database at u (0: nothing created).
func schemaTables(t *testing.T, u string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Every command that reads the store works on a harness's PostgreSQL
// database, named by --store or by the configuration's store.
func TestReadingCommandsOnPostgres(t *testing.T) {
	u := statusTestDatabase(t)
	// The CLI reads only: on a database no harness has used it says so
	// and creates nothing.
	if _, err := runAhp(t, "audit", "query", "--store", u); err == nil || !strings.Contains(err.Error(), "no ahp store") {
		t.Fatalf("audit query of an empty database: %v", err)
	}
	if n := schemaTables(t, u); n != 0 {
		t.Fatalf("a reading command created %d tables", n)
	}
	fillPostgres(t, u)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ahp.yaml")
	if err := os.WriteFile(cfg, []byte("store: "+u+"\ndata_dir: "+filepath.Join(dir, "no-such-dir")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// An SQLite store in --data-dir must not be read instead.
	t.Setenv(dataDirEnv, t.TempDir())

	for _, via := range [][]string{{"--store", u}, {"--config", cfg}} {
		name := via[0]
		out, err := runAhp(t, append([]string{"audit", "query", "--json"}, via...)...)
		if err != nil || strings.Count(out, "\n") != 5 || !strings.Contains(out, `"rule_id":"no-force-push"`) {
			t.Fatalf("audit query %s: %v\n%s", name, err, out)
		}
		out, err = runAhp(t, append([]string{"audit", "export", "--decision", "block"}, via...)...)
		if err != nil || strings.Count(out, "\n") != 1 {
			t.Fatalf("audit export %s: %v\n%s", name, err, out)
		}
		out, err = runAhp(t, append([]string{"audit", "shadow-report", "--json"}, via...)...)
		if err != nil || !json.Valid([]byte(out)) {
			t.Fatalf("audit shadow-report %s: %v\n%s", name, err, out)
		}
		out, err = runAhp(t, append([]string{"runs", "list"}, via...)...)
		if err != nil || !strings.Contains(out, runstest.RunID+"  ") {
			t.Fatalf("runs list %s: %v\n%s", name, err, out)
		}
		out, err = runAhp(t, append([]string{"runs", "show", runstest.RunID}, via...)...)
		if err != nil || !strings.Contains(out, "run "+runstest.RunID+"  completed") {
			t.Fatalf("runs show %s: %v\n%s", name, err, out)
		}
		if _, err := runAhp(t, append([]string{"runs", "show", "nope"}, via...)...); err == nil || !strings.Contains(err.Error(), `no run "nope" in postgres://`) {
			t.Fatalf("runs show nope %s: %v", name, err)
		}
		fact := "the staging database is db-stg " + name
		if out, err := runAhp(t, append([]string{"memory", "add", fact}, via...)...); err != nil {
			t.Fatalf("memory add %s: %v\n%s", name, err, out)
		}
		out, err = runAhp(t, append([]string{"memory", "list", "--json"}, via...)...)
		if err != nil || !strings.Contains(out, fact) {
			t.Fatalf("memory list %s: %v\n%s", name, err, out)
		}
		// The new policy lets git push --force through: one decision changes.
		newPol := writeReplayPolicy(t, "rules: []\n")
		out, code := runReplayCLI(t, append([]string{"replay", "--packs", "none", "--policy", newPol, "--json"}, via...)...)
		var rep struct {
			Input    string `json:"input"`
			Compared int64  `json:"compared"`
			Changes  int64  `json:"decision_changes"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Compared != 5 || rep.Changes != 1 || !strings.HasPrefix(rep.Input, "postgres://") {
			t.Fatalf("replay %s: exit %d\n%s", name, code, out)
		}
	}
	if _, err := runAhp(t, "audit", "redact", "--store", u); err == nil || !strings.Contains(err.Error(), "SQLite stores only") {
		t.Fatalf("audit redact on PostgreSQL: %v", err)
	}
}

// A password in the store's URL never appears in what the CLI prints.
func TestStoreURLPasswordNotPrinted(t *testing.T) {
	base := statusTestDatabase(t)
	pu, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "s3cr3t-Pw"
	pu.User = url.UserPassword(pu.User.Username(), secret)
	missing := *pu
	missing.Path = "/no_such_database_ahp"
	down := *pu
	down.Host = "127.0.0.1:1"
	query := *pu
	query.User = url.User(pu.User.Username())
	query.Path = "/no_such_database_ahp"
	query.RawQuery = "password=" + secret + "&connect_timeout=3"
	for _, u := range []string{missing.String(), down.String(), query.String(), "postgres://ahp:" + secret + "@[::1", "postgres://ahp:" + secret + "@127.0.0.1:1/x?sslmode=bogus"} {
		for _, args := range [][]string{
			{"audit", "query", "--store", u},
			{"runs", "list", "--store", u},
			{"memory", "list", "--store", u},
			{"memory", "add", "x", "--store", u},
			{"audit", "redact", "--store", u},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			root := newRootCmd()
			var outw, errw strings.Builder
			root.SetOut(&outw)
			root.SetErr(&errw)
			root.SetArgs(args)
			err := root.ExecuteContext(ctx)
			cancel()
			if err == nil {
				t.Fatalf("%s: no error", strings.Join(args[:2], " "))
			}
			if all := outw.String() + errw.String() + err.Error(); strings.Contains(all, secret) {
				t.Fatalf("%s printed the password: %s", strings.Join(args[:2], " "), all)
			}
		}
		out, _ := runReplayCLI(t, "replay", "--packs", "none", "--policy", writeReplayPolicy(t, "rules: []\n"), "--store", u)
		if strings.Contains(out, secret) {
			t.Fatalf("replay printed the password: %s", out)
		}
	}
}
