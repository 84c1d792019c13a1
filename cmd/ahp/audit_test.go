package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// fillAudit writes six records into a new data directory: sessions s1/s2,
// alternating allow/block, one an hour old, and one notification.
func fillAudit(t *testing.T) (string, *sqlite.DB) {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(t.Context(), filepath.Join(dir, sqlite.FileName), sqlite.Options{Sync: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	now := time.Now()
	for i := range 5 {
		outcome, dec := "allow", `{"decision":"allow"}`
		if i%2 == 1 {
			outcome, dec = "block", fmt.Sprintf(`{"decision":"block","reason":"rule says no %d"}`, i)
		}
		r := &store.AuditRecord{
			Time: now.Add(-time.Duration(5-i) * time.Minute), SessionID: fmt.Sprintf("s%d", i%2+1), AgentID: "a",
			EventType: "pre_action", Blocking: true, Event: json.RawMessage(`{"event_type":"pre_action","payload":{}}`),
			Decision: json.RawMessage(dec), Outcome: outcome, RuleID: fmt.Sprintf("rule-%d", i%2), Transport: "unix",
			Principal: "alice", Latency: 42 * time.Microsecond,
		}
		if i == 0 {
			r.Time = now.Add(-time.Hour)
		}
		if err := db.Audit().Append(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Audit().Append(t.Context(), &store.AuditRecord{SessionID: "s1", EventType: "post_action", Transport: "unix"}); err != nil {
		t.Fatal(err)
	}
	return dir, db
}

func decodeLines(t *testing.T, s string) []store.AuditRecord {
	t.Helper()
	dec := store.NewAuditDecoder(strings.NewReader(s))
	var out []store.AuditRecord
	for {
		var r store.AuditRecord
		err := dec.Decode(&r)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("output is not audit JSON Lines: %v\n%s", err, s)
		}
		out = append(out, r)
	}
}

func TestAuditQuery(t *testing.T) {
	dir, _ := fillAudit(t)
	out, err := runAhp(t, "audit", "query", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(out, "rule says no 3") {
		t.Errorf("table:\n%s", out)
	}

	out, err = runAhp(t, "audit", "query", "--data-dir", dir, "--decision", "block", "--json")
	if err != nil {
		t.Fatal(err)
	}
	recs := decodeLines(t, out)
	if len(recs) != 2 || recs[0].Outcome != "block" || recs[1].Outcome != "block" || recs[0].ID > recs[1].ID {
		t.Errorf("--decision block --json = %+v", recs)
	}

	for args, want := range map[string]int{
		"--session s1":             4,
		"--rule rule-1":            2,
		"--since 30m":              5,
		"--since 30m --session s1": 3,
		"--event-type post_action": 1,
		"--limit 2":                2,
		"--until " + time.Now().Add(-30*time.Minute).UTC().Format(time.RFC3339): 1,
	} {
		out, err := runAhp(t, append([]string{"audit", "query", "--data-dir", dir, "--json"}, strings.Fields(args)...)...)
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		if got := len(decodeLines(t, out)); got != want {
			t.Errorf("%s: %d records, want %d", args, got, want)
		}
	}
	if _, err := runAhp(t, "audit", "query", "--data-dir", dir, "--since", "last tuesday"); err == nil || !strings.Contains(err.Error(), "--since") {
		t.Errorf("bad --since: %v", err)
	}
	if _, err := runAhp(t, "audit", "query", "--data-dir", filepath.Join(dir, "nope")); err == nil || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("missing data dir: %v", err)
	}
}

func TestAuditExport(t *testing.T) {
	dir, db := fillAudit(t)
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	if _, err := runAhp(t, "audit", "export", "--data-dir", dir, "--format", "jsonl", "-o", file); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if _, err := db.Audit().Export(t.Context(), &want, store.AuditFilter{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want.Bytes()) || len(decodeLines(t, string(b))) != 6 {
		t.Errorf("exported file differs from the store's export:\n%s", b)
	}
	out, err := runAhp(t, "audit", "export", "--data-dir", dir, "--session", "s2")
	if err != nil || len(decodeLines(t, out)) != 2 {
		t.Errorf("export --session s2 to stdout: %v\n%s", err, out)
	}
	if _, err := runAhp(t, "audit", "export", "--data-dir", dir, "--format", "csv"); err == nil {
		t.Error("--format csv accepted")
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestAuditTailFollows(t *testing.T) {
	dir, db := fillAudit(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	root := newRootCmd()
	var out syncBuffer
	root.SetOut(&out)
	root.SetErr(io.Discard)
	root.SetArgs([]string{"audit", "tail", "--data-dir", dir, "-n", "2", "--session", "s1", "--json", "--interval", "20ms"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	waitFor(t, func() bool { return strings.Count(out.String(), "\n") >= 2 })
	for _, s := range []string{"s2", "s1"} {
		if err := db.Audit().Append(t.Context(), &store.AuditRecord{SessionID: s, EventType: "heartbeat", AgentID: "new"}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { return strings.Count(out.String(), "\n") >= 3 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("tail after interrupt: %v", err)
	}
	recs := decodeLines(t, out.String())
	if len(recs) != 3 || recs[0].SessionID != "s1" || recs[2].AgentID != "new" || recs[2].SessionID != "s1" {
		t.Errorf("tail printed %+v; want the last two s1 records, then the new s1 one", recs)
	}
}
