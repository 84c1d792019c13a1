package sqlite_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// crashChildEnv names the database a re-executed test binary appends to
// until it is killed.
const crashChildEnv = "AHP_STORE_CRASH_CHILD_DB"

// TestCrashDurability kills a process that appends under load with SIGKILL
// and checks that every record whose Append had returned is in the
// database after restart.
func TestCrashDurability(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path)
		return
	}
	if testing.Short() {
		t.Skip("kills a child process; skipped with -short")
	}
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashDurability$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const killAfter = 3000
	acked := make(map[int64]string)
	killed := false
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		id, token, ok := parseAck(sc.Text())
		if !ok {
			continue // test framework output
		}
		acked[id] = token
		if len(acked) == killAfter && !killed {
			if err := cmd.Process.Kill(); err != nil { // SIGKILL on Unix
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child stopped after %d acks without being killed: %v\n%s", len(acked), err, stderr.String())
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ProcessState.ExitCode() != -1 {
		t.Fatalf("child did not die from the signal: %v\n%s", err, stderr.String())
	}
	t.Logf("child killed with %d acknowledged appends (%d more acks were in the pipe)", killAfter, len(acked)-killAfter)

	db, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer db.Close()
	stored := make(map[int64]string)
	for _, r := range allRecords(t, db) {
		stored[r.ID] = r.AgentID
	}
	missing := 0
	for id, token := range acked {
		if got, ok := stored[id]; !ok || got != token {
			missing++
			if missing <= 5 {
				t.Errorf("acknowledged record %d (%s) is missing or different after restart (found %q)", id, token, got)
			}
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged records lost", missing, len(acked))
	}
	t.Logf("all %d acknowledged records found among %d stored", len(acked), len(stored))
	r := &store.AuditRecord{SessionID: "after-restart"}
	if err := db.Audit().Append(t.Context(), r); err != nil {
		t.Fatalf("Append after restart: %v", err)
	}
}

// allRecords reads the whole audit log, page by page.
func allRecords(t *testing.T, s store.Store) []store.AuditRecord {
	t.Helper()
	var out []store.AuditRecord
	f := store.AuditFilter{Limit: store.MaxQueryLimit}
	for {
		recs, err := s.Audit().Query(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, recs...)
		if len(recs) < f.Limit {
			return out
		}
		f.AfterID = recs[len(recs)-1].ID
	}
}

func parseAck(line string) (int64, string, bool) {
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "ACK" {
		return 0, "", false
	}
	id, err := strconv.ParseInt(f[1], 10, 64)
	return id, f[2], err == nil
}

// crashChild appends from many goroutines and prints "ACK id token" once
// each Append has returned nil, until it is killed (or a minute passes).
func crashChild(path string) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	for w := range 32 {
		go func() {
			for i := 0; ; i++ {
				token := fmt.Sprintf("w%d-%d", w, i)
				r := &store.AuditRecord{
					SessionID: "crash", AgentID: token, EventType: "pre_action", Blocking: true,
					Event:    []byte(`{"event_type":"pre_action","payload":{"tool_name":"bash","arguments":{"command":"make test"}}}`),
					Decision: []byte(`{"decision":"allow"}`), Outcome: "allow", Transport: "stdio",
				}
				if err := db.Audit().Append(ctx, r); err != nil {
					fmt.Fprintln(os.Stderr, "child append:", err)
					os.Exit(2)
				}
				if i%4 == 0 { // notifications share the writer; they are not acknowledged
					_ = db.Audit().AppendAsync(ctx, &store.AuditRecord{SessionID: "crash", EventType: "post_action"})
				}
				line := []byte("ACK " + strconv.FormatInt(r.ID, 10) + " " + token + "\n")
				mu.Lock()
				_, err := os.Stdout.Write(line) // one write per line: atomic on a pipe
				mu.Unlock()
				if err != nil {
					os.Exit(2)
				}
			}
		}()
	}
	time.Sleep(time.Minute)
	fmt.Fprintln(os.Stderr, "child was not killed within a minute")
	os.Exit(3)
}
